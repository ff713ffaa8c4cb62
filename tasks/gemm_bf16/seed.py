# gemm_bf16 seed in Triton: C = A * B^T (A is m x k, B is n x k, both row-major bf16), one BM x BN
# tile of C per program, the K products accumulated in fp32 by tl.dot over BK-wide slices and
# rounded to bf16 once, at the store. block= is the tile of C (columns, rows); the threads are
# num_warps x 32.
# kevo: tune BN 64 32 128
# kevo: tune BM 64 32 128
# kevo: tune BK 32 64
# kevo: tune num_warps 4 8
# kevo: tune num_stages 3 2 4
# kevo: launch gemm_bf16 block=BN,BM
import triton
import triton.language as tl


@triton.jit
def gemm_bf16(a, b, c, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rows = tl.program_id(1) * BM + tl.arange(0, BM)
    cols = tl.program_id(0) * BN + tl.arange(0, BN)
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for start in range(0, k, BK):
        ks = start + tl.arange(0, BK)
        a_tile = tl.load(a + rows.to(tl.int64)[:, None] * k + ks[None, :],
                         mask=(rows[:, None] < m) & (ks[None, :] < k), other=0.0)
        b_tile = tl.load(b + cols.to(tl.int64)[None, :] * k + ks[:, None],
                         mask=(cols[None, :] < n) & (ks[:, None] < k), other=0.0)
        acc = tl.dot(a_tile, b_tile, acc)
    tl.store(c + rows.to(tl.int64)[:, None] * n + cols[None, :], acc.to(tl.bfloat16),
             mask=(rows[:, None] < m) & (cols[None, :] < n))
