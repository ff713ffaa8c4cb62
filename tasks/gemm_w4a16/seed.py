# gemm_w4a16 seed in Triton (naive on purpose): C = A * dequant(B)^T, A bf16 m x k, B n rows of k/2
# bytes (byte j holds q[2j] in its low nibble and q[2j+1] in its high nibble, 4-bit two's
# complement), scales bf16 n x k/128 (group size 128 along K), C bf16 m x n, all row-major. One
# BM x BN tile of C per program. Each BK-wide slice of K (BK divides 128, so a slice lies in one
# group) unpacks its int4 weights to bf16 integers in [-8, 7] (exact), takes tl.dot with the bf16
# activations in fp32, and adds that partial times the group's scale to an fp32 total: q * s is
# never rounded to 16 bits. The total is rounded to bf16 once, at the store. block= is the tile of
# C (columns, rows); the threads are num_warps x 32.
# kevo: tune BN 64 32 128
# kevo: tune BM 32 16 64 128
# kevo: tune BK 64 32 128
# kevo: tune num_warps 4 8
# kevo: tune num_stages 3 2 4
# kevo: launch gemm_w4a16 block=BN,BM
import triton
import triton.language as tl


@triton.jit
def gemm_w4a16(a, b, scales, c, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tl.static_assert(128 % BK == 0, "a K slice must lie within one scale group of 128")
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    row_in = rows < m
    col_in = cols < n
    groups = k // 128
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for start in range(0, k, BK):
        ks = start + tl.arange(0, BK)
        a_tile = tl.load(a + rows.to(tl.int64)[:, None] * k + ks[None, :],
                         mask=row_in[:, None] & (ks[None, :] < k), other=0.0)
        # Weight tile [BK, BN]: element (kk, col) is nibble kk & 1 of byte kk / 2 of row col of B
        # (each byte is read for two kk; naive on purpose).
        packed = tl.load(b + cols.to(tl.int64)[None, :] * (k // 2) + (ks[:, None] // 2),
                         mask=col_in[None, :] & (ks[:, None] < k), other=0)
        nibble = (packed.to(tl.int32) >> ((ks[:, None] % 2) * 4).to(tl.int32)) & 15
        q = nibble - ((nibble & 8) << 1)  # two's complement from 4 bits: 8..15 -> -8..-1
        w_tile = q.to(tl.float32).to(tl.bfloat16)  # exact: integers in [-8, 7]
        partial = tl.dot(a_tile, w_tile)
        s = tl.load(scales + cols.to(tl.int64) * groups + start // 128, mask=col_in, other=0.0)
        acc += partial * s.to(tl.float32)[None, :]
    tl.store(c + rows.to(tl.int64)[:, None] * n + cols[None, :], acc.to(tl.bfloat16),
             mask=row_in[:, None] & col_in[None, :])
