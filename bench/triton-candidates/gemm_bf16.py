# gemm_bf16 best-known Triton kernel (not yet measured on a GPU): C = A * B^T, bf16 in and out, fp32
# accumulation by tl.dot, one rounding to bf16 at the store. What should make it fast on the H200:
#   - 256 x 128 output tiles with BK = 64 and 8 warps (two warpgroups, 128 x 128 each): on sm_90
#     Triton lowers tl.dot to wgmma.mma_async m64n128k16 (it targets sm_90a), operands read straight
#     from swizzled shared memory, so each staged byte feeds 128-256 multiply-adds and no ldmatrix
#     stands between shared memory and the tensor cores; the wgmma groups are pipelined (wait 1);
#   - a 4-stage cp.async software pipeline (48 KB per stage, 192 KB of the 227 KB of an SM; one
#     program per SM at 188 registers, no spills), so three K slices are in flight while one is
#     multiplied: the long K loops of the large profile (64 to 288 slices) run at steady state;
#   - 256 x 128 rather than Triton's usual 128 x 256: the same operand traffic per FLOP, but at
#     128 x 256 (m64n256k16) the ptxas 12.8 that Triton 3.6.0 bundles reports "(C7515) wgmma.mma_async
#     instructions are serialized" for this kernel at every stage count; at 256 x 128 it does not
#     (BM = BN = 256 as a knob combination spills: 255 registers);
#   - no masks in the K loop: K is a multiple of 64 (the brief), so BK in {64, 32} divides it, and
#     the rows of A past M and of B past N are clamped to the last valid row instead of masked (their
#     products land in rows/columns of C that are never stored), so every load is an unpredicated
#     16-byte cp.async; `k // 64 * 64` tells Triton the row stride is a multiple of 64 elements
#     (Triton does not specialise integers), without which it could not vectorise the loads at all;
#   - grouped tile order for L2 reuse: the fixed grid (N / BN) x (M / BM) is renumbered so that
#     GROUP_M consecutive programs share one column of B tiles and walk GROUP_M rows of A tiles,
#     keeping the A and B panels in the 50 MB L2 instead of streaming all of B per tile row.
# The seed is 64 x 64 x 32 (wgmma m64n64k16 too, but compiled as kevo compiles it: masked loads whose
# row stride Triton cannot prove aligned, so ld.global of 2 bytes with no cp.async pipeline and 8 KB
# of shared memory, and no program reordering); the CUDA best.cu is mma.sync (no wgmma) at
# 128 x 128 x 32 with a 4-stage cp.async pipeline. The large-profile sizes
# (M 2048-8192, N 4096-28672, K 4096-18432) are compute-bound, where wgmma at this tile size is what
# Triton's own Hopper matmul relies on for cuBLAS-class throughput. Not warp-specialised, not
# persistent (the task fixes the grid) and no TMA (a device-side descriptor needs the global scratch
# kevo passes as null), so expect below cuBLAS. Decode-sized M (the paper profile's 16 and 32) wastes
# most of a 256-row tile: BM = 64 serves those better.
# block= is the tile of C (columns, rows): grid = ceil(N / BN) x ceil(M / BM), as the task fixes.
# kevo: tune BN 128 256 64
# kevo: tune BM 256 128 64
# kevo: tune BK 64 32
# kevo: tune GROUP_M 8 4 16 1
# kevo: tune num_warps 8 4
# kevo: tune num_stages 4 3 2
# kevo: launch gemm_bf16 block=BN,BM
import triton
import triton.language as tl


@triton.jit
def gemm_bf16(a, b, c, m, n, k, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr, GROUP_M: tl.constexpr):
    # K is a multiple of 64 at every size: say so, so that row starts are known 128-byte aligned.
    kk = k // 64 * 64
    # Grouped order within the task's grid (grid x = N tiles, grid y = M tiles).
    tiles_n = tl.num_programs(0)
    tiles_m = tl.num_programs(1)
    pid = tl.program_id(1) * tiles_n + tl.program_id(0)
    per_group = GROUP_M * tiles_n
    group = pid // per_group
    first_m = group * GROUP_M
    group_rows = tl.minimum(tiles_m - first_m, GROUP_M)
    pid_m = first_m + (pid % per_group) % group_rows
    pid_n = (pid % per_group) // group_rows

    rows = pid_m * BM + tl.arange(0, BM)
    cols = pid_n * BN + tl.arange(0, BN)
    # Clamp instead of masking: rows past M re-read row M - 1 (in bounds), never stored.
    rows_in = tl.minimum(rows, m - 1)
    cols_in = tl.minimum(cols, n - 1)
    ks = tl.arange(0, BK)
    a_ptrs = a + rows_in.to(tl.int64)[:, None] * kk + ks[None, :]
    b_ptrs = b + cols_in.to(tl.int64)[None, :] * kk + ks[:, None]
    acc = tl.zeros([BM, BN], dtype=tl.float32)
    for _ in range(0, tl.cdiv(kk, BK)):
        a_tile = tl.load(a_ptrs)
        b_tile = tl.load(b_ptrs)
        acc = tl.dot(a_tile, b_tile, acc)
        a_ptrs += BK
        b_ptrs += BK
    # One rounding (round to nearest even) per output.
    # N is a multiple of 128 at every size: the same hint for C's row stride and the column mask.
    nn = n // 128 * 128
    c_ptrs = c + rows.to(tl.int64)[:, None] * nn + cols[None, :]
    tl.store(c_ptrs, acc.to(tl.bfloat16), mask=(rows[:, None] < m) & (cols[None, :] < nn))
