# gemm_fp8_block seed in Triton (naive on purpose): the block-scaled fp8 GEMM of DeepSeek-V3's
# recipe, C = sum over 128-wide K blocks kb of a_scale[m, kb] * b_scale[n / 128, kb] * (A_kb * B_kb^T),
# A e4m3 m x k, B e4m3 n x k (bytes, bitcast to fp8e4nv), a_scale fp32 m x k/128, b_scale fp32
# k/128-wide rows per 128 rows of B, C bf16 m x n, all row-major. One BM x BN tile of C per
# program. Each BK-wide slice of K (BK divides 128, so a slice lies in one scale block) is one
# tl.dot of the fp8 tiles into a fresh fp32 partial (Hopper's fp8 MMA accumulates at most 128
# products before the promotion), multiplied by a_scale * b_scale and added to an fp32 total,
# rounded to bf16 once, at the store. block= is the tile of C (columns, rows); the threads are
# num_warps x 32.
# kevo: tune BN 64 32 128
# kevo: tune BM 32 16 64 128
# kevo: tune BK 128 64 32
# kevo: tune num_warps 4 8
# kevo: tune num_stages 3 2 4
# kevo: launch gemm_fp8_block block=BN,BM
import triton
import triton.language as tl


@triton.jit
def gemm_fp8_block(a, a_scale, b, b_scale, c, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    tl.static_assert(128 % BK == 0, "a K slice must lie within one scale block of 128")
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    row_in = rows < m
    col_in = cols < n
    blocks = k // 128
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for start in range(0, k, BK):
        ks = start + tl.arange(0, BK)
        kb = start // 128
        a_tile = tl.load(a + rows.to(tl.int64)[:, None] * k + ks[None, :],
                         mask=row_in[:, None] & (ks[None, :] < k), other=0)
        b_tile = tl.load(b + cols.to(tl.int64)[None, :] * k + ks[:, None],
                         mask=col_in[None, :] & (ks[:, None] < k), other=0)
        # The bytes are OCP e4m3 (fp8e4nv); byte 0 (the masked lanes) is +0.
        partial = tl.dot(a_tile.to(tl.float8e4nv, bitcast=True), b_tile.to(tl.float8e4nv, bitcast=True))
        sa = tl.load(a_scale + rows.to(tl.int64) * blocks + kb, mask=row_in, other=0.0)
        sb = tl.load(b_scale + (cols // 128).to(tl.int64) * blocks + kb, mask=col_in, other=0.0)
        # As the CUDA seed: total += partial * (a_scale * b_scale), in fp32.
        acc += partial * (sa[:, None] * sb[None, :])
    tl.store(c + rows.to(tl.int64)[:, None] * n + cols[None, :], acc.to(tl.bfloat16),
             mask=row_in[:, None] & col_in[None, :])
