# gemm_w8a8 best-known Triton kernel for the H200 (sm_90): C = bf16(a_scale[m] b_scale[n] (A * B^T)),
# A int8 m x k (one fp32 scale per row), B int8 n x k (one per row: per output channel), C bf16 m x n.
#
# WHY IT SHOULD BE FAST
# - Compute-bound at the large sizes (2 M N K int8 operations against M K + N K + 2 M N bytes): the
#   int8 tensor cores must be kept busy. One program makes a BM x BN = 128 x 256 tile of C with
#   8 warps (two warpgroups of 64 rows): tl.dot on int8 with out_dtype=tl.int32 lowers to Hopper's
#   wgmma (m64n128k32 s8.s8.s32, 8 per warpgroup and 128-deep K step, PTX checked), operands in
#   shared memory, the exact int32 sum held in registers (128 per thread, 186 in all, no spills).
# - BK = 128 (128 bytes per row of each operand and stage) and a num_stages = 4 cp.async pipeline:
#   (128 + 256) x 128 B = 48 KB per stage, 192 KB in all (one program per SM, as the 128 KB of
#   accumulators allow), so the loads of the next three K slices are in flight while the tensor
#   cores work. B is [N, K] row-major: its tile is K-contiguous, exactly the K-major operand that
#   int8 wgmma needs (loaded as [BN, BK] and transposed in the descriptor, no data movement).
# - Why 128 x 256 rather than 128 x 128: each program reads (BM + BN) BK bytes per BM BN BK
#   multiply-adds, so the wider tile needs 25% less L2-to-SM traffic per operation, which at this
#   rate (no TMA multicast) is what bounds the kernel. Triton 3.6 keeps an int32-accumulating wgmma
#   synchronous (it makes only fp32-accumulating dots asynchronous across iterations), so each
#   128-deep K step ends with a wgmma wait; BK = 128 keeps that bubble a small part of a step.
# - 16-byte copies: kevo does not specialise integers, so Triton could not prove a row of A or B
#   16-byte aligned; the brief guarantees K % 64 == 0 and N % 128 == 0, and the kernel uses
#   (k // 64) * 64 and (n // 128) * 128, which Triton's alignment analysis knows are multiples of
#   64 and 128, so every cp.async moves 16 bytes and the bf16 stores are vectors too. The K mask
#   (needed only when K % 128 == 64: K = 320 in the small profile) is uniform over 64 bytes.
# - Rows of A past m (and columns past n, for BN = 256 and N % 256 == 128) are never read: their
#   indices are clamped to the last valid row, so the A and B loads carry no row mask; they are
#   not stored (the store is masked).
# - Grouped tile order (GROUP_M = 8 row tiles of A swept across the N tiles together), remapped
#   from the 2-D grid kevo launches, so the A panel and the B tiles of a wave stay in the 50 MB L2.
# - Epilogue in the contract's order: (a_scale[m] * b_scale[n]) * float(sum) in fp32, rounded to
#   bf16 once, at the store.
# Not yet measured on a GPU. Expected: several times faster than the Triton seed (64 x 64 x 64
# tiles, 4 warps, no grouping) at the large sizes, and at or above tasks/gemm_w8a8/best.cu
# (mma.sync m16n8k32 with ldmatrix, 128 x 128 tiles: 0.25-0.37 of the int8 peak, measured on an
# H100), since wgmma reads its operands straight from shared memory and the tile is twice as wide;
# a guess of 0.4-0.55 of peak. Still short of cuBLASLt (about 2x best.cu), which adds TMA
# multicast, asynchronous wgmma and warp specialisation (a TMA descriptor made on the device needs
# Triton's global scratch, which kevo passes as null).
# kevo: tune BM 128 64
# kevo: tune BN 256 128
# kevo: tune BK 128 64
# kevo: tune GROUP_M 8 4 16
# kevo: tune num_warps 8 4
# kevo: tune num_stages 4 3 2
# kevo: launch gemm_w8a8 block=BN,BM
import triton
import triton.language as tl


@triton.jit
def gemm_w8a8(a, a_scale, b, b_scale, c, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr,
              GROUP_M: tl.constexpr):
    ms = m.to(tl.int32)
    ns = n.to(tl.int32)
    ka = (k.to(tl.int32) // 64) * 64  # == k (brief: K % 64 == 0), known to Triton as a multiple of 64
    na = (ns // 128) * 128            # == n (brief: N % 128 == 0), known as a multiple of 128

    # Grouped order: consecutive programs take GROUP_M row tiles down, then the next column tile.
    tiles_n = tl.num_programs(0)
    tiles_m = tl.num_programs(1)
    pid = tl.program_id(1) * tiles_n + tl.program_id(0)
    per_group = GROUP_M * tiles_n
    first_m = (pid // per_group) * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    # Rows past m and columns past n read the last valid one (never stored): no row masks below.
    rows_rd = tl.minimum(rows, ms - 1)
    cols_rd = tl.minimum(cols, na - 1)
    ks = tl.arange(0, BK)
    a_ptr = a + rows_rd.to(tl.int64)[:, None] * ka + ks[None, :]
    b_ptr = b + cols_rd.to(tl.int64)[:, None] * ka + ks[None, :]

    acc = tl.zeros([BM, BN], dtype=tl.int32)
    for start in range(0, ka, BK):
        k_in = (start + ks)[None, :] < ka  # all true unless K % BK == 64 (last slice), 64-byte uniform
        a_tile = tl.load(a_ptr, mask=k_in, other=0)
        b_tile = tl.load(b_ptr, mask=k_in, other=0)
        # int8 x int8 -> int32: exact (|sums| < 2^31 by the brief).
        acc = tl.dot(a_tile, tl.trans(b_tile), acc, out_dtype=tl.int32)
        a_ptr += BK
        b_ptr += BK

    sa = tl.load(a_scale + rows_rd)
    sb = tl.load(b_scale + cols_rd)
    # The contract's order: (a_scale * b_scale) * float(sum), all fp32, one rounding to bf16.
    out = (sa[:, None] * sb[None, :]) * acc.to(tl.float32)
    c_ptr = c + rows.to(tl.int64)[:, None] * na + cols[None, :]
    tl.store(c_ptr, out.to(tl.bfloat16), mask=(rows < ms)[:, None] & (cols < na)[None, :])
