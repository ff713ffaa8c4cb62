# gemm_w8a8 seed in Triton (naive on purpose): C = a_scale * b_scale * (A * B^T), A int8 m x k
# (one fp32 scale per row), B int8 n x k (one fp32 scale per row: per output channel), C bf16 m x n,
# all row-major. One BM x BN tile of C per program: the int8 products are summed exactly in int32
# by tl.dot over BK-wide slices of K, then (a_scale[m] * b_scale[n]) * sum in fp32, rounded to
# bf16 once, at the store. Rows of A past m are never read (masked). block= is the tile of C
# (columns, rows); the threads are num_warps x 32.
# kevo: tune BN 64 32 128
# kevo: tune BM 64 16 32 128
# kevo: tune BK 64 32 128
# kevo: tune num_warps 4 8
# kevo: tune num_stages 3 2 4
# kevo: launch gemm_w8a8 block=BN,BM
import triton
import triton.language as tl


@triton.jit
def gemm_w8a8(a, a_scale, b, b_scale, c, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    row_in = rows < m
    col_in = cols < n
    acc = tl.zeros([BM, BN], dtype=tl.int32)
    for start in range(0, k, BK):
        ks = start + tl.arange(0, BK)
        a_tile = tl.load(a + rows.to(tl.int64)[:, None] * k + ks[None, :],
                         mask=row_in[:, None] & (ks[None, :] < k), other=0)
        b_tile = tl.load(b + cols.to(tl.int64)[None, :] * k + ks[:, None],
                         mask=col_in[None, :] & (ks[:, None] < k), other=0)
        # int8 x int8 -> int32: exact (|sums| < 2^31 by the brief).
        acc = tl.dot(a_tile, b_tile, acc, out_dtype=tl.int32)
    sa = tl.load(a_scale + rows, mask=row_in, other=0.0)
    sb = tl.load(b_scale + cols, mask=col_in, other=0.0)
    # As the CUDA seed: (a_scale * b_scale) * float(sum), all fp32, one rounding to bf16.
    out = (sa[:, None] * sb[None, :]) * acc.to(tl.float32)
    tl.store(c + rows.to(tl.int64)[:, None] * n + cols[None, :], out.to(tl.bfloat16),
             mask=row_in[:, None] & col_in[None, :])
