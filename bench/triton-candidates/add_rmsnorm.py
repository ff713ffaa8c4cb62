# add_rmsnorm best-known Triton kernel (not yet measured on a GPU): one program per row (token).
# r = bf16(x + residual) (exact in fp32, one rounding), stored to residual; the fp32 sum of squares
# of the stored r; y = bf16(r * inv_rms * w), one rounding. What should make it fast:
#   - the whole row stays in registers (hidden <= BLOCK = 8192, every size of every profile), so x
#     and residual are read once, residual and y written once and weight read (from L2) once: the
#     seed's second pass re-reads residual and walks the row in two loops;
#   - 16-byte accesses throughout: `hidden // 64 * 64` (hidden is a multiple of 64, the brief) makes
#     the row starts provably 128-byte aligned and the mask constant over runs of 64, so Triton emits
#     ld/st.global.v4 (eight bf16) where the seed, whose row offset is an unknown integer to it, can
#     only prove 2-byte alignment and moves one bf16 per instruction;
#   - all of a thread's row loads issued before any arithmetic (8 warps over 8192: four 16-byte
#     vectors of x and four of residual per thread), evict_first on the streamed rows; the weight,
#     which every row re-reads (evict_last: it stays in L1/L2), is loaded after the reduction;
#   - occupancy by registers: that late weight load and the fallback's CHUNK = 2048 tiles keep the
#     kernel at 58 registers at 8 warps (ptxas, sm_90a; 75 with the weight loaded up front and the
#     fallback in 8192 tiles), so four rows are resident per SM: 32 KB of loads in flight per SM at
#     hidden = 2048 (where three quarters of each thread's vectors are masked), 128 KB at 8192.
#     16 warps need 40 registers, which allows only three rows.
# Rows longer than BLOCK (no profile has one; BLOCK 4096 as a knob does at 8192) take a two-pass
# loop of CHUNK-wide tiles that re-reads the stored residual, as the seed does.
# block= is the tile: grid = 1 x tokens, as the task fixes.
# kevo: tune BLOCK 8192 4096 16384
# kevo: tune num_warps 8 16 4 32
# kevo: launch add_rmsnorm block=BLOCK,1
import triton
import triton.language as tl


@triton.jit
def add_rmsnorm(x, residual, weight, y, hidden, tokens, eps, BLOCK: tl.constexpr, CHUNK: tl.constexpr = 2048):
    h = hidden // 64 * 64  # == hidden: a multiple of 64 at every size
    base = tl.program_id(1).to(tl.int64) * h
    if h <= BLOCK:
        i = tl.arange(0, BLOCK)
        inside = i < h
        xv = tl.load(x + base + i, mask=inside, other=0.0, eviction_policy="evict_first")
        rv = tl.load(residual + base + i, mask=inside, other=0.0, eviction_policy="evict_first")
        # x + residual is exact in fp32; the stored residual is its one rounding (to nearest even),
        # and the norm is of the stored value.
        r = (xv.to(tl.float32) + rv.to(tl.float32)).to(tl.bfloat16)
        tl.store(residual + base + i, r, mask=inside, eviction_policy="evict_first")
        rf = r.to(tl.float32)
        inv_rms = 1.0 / tl.sqrt(tl.sum(rf * rf, axis=0) / h + eps)
        w = tl.load(weight + i, mask=inside, other=0.0, eviction_policy="evict_last")
        tl.store(y + base + i, (rf * inv_rms * w.to(tl.float32)).to(tl.bfloat16), mask=inside,
                 eviction_policy="evict_first")
    else:
        squares = tl.zeros([CHUNK], dtype=tl.float32)
        for start in range(0, h, CHUNK):
            i = start + tl.arange(0, CHUNK)
            inside = i < h
            r = (tl.load(x + base + i, mask=inside, other=0.0, eviction_policy="evict_first").to(tl.float32) +
                 tl.load(residual + base + i, mask=inside, other=0.0).to(tl.float32)).to(tl.bfloat16)
            tl.store(residual + base + i, r, mask=inside)
            rf = r.to(tl.float32)
            squares += rf * rf
        inv_rms = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / h + eps)
        for start in range(0, h, CHUNK):
            i = start + tl.arange(0, CHUNK)
            inside = i < h
            rf = tl.load(residual + base + i, mask=inside, other=0.0, eviction_policy="evict_first").to(tl.float32)
            w = tl.load(weight + i, mask=inside, other=0.0, eviction_policy="evict_last").to(tl.float32)
            tl.store(y + base + i, (rf * inv_rms * w).to(tl.bfloat16), mask=inside, eviction_policy="evict_first")
