# per_token_group_quant_fp8 seed in Triton (naive on purpose): one program per 128-element group
# (axis 0: groups along the row, axis 1: tokens). amax in fp32, s = max(amax, eps) / 448 and x / s
# by IEEE division (tl.math.div_rn: Triton's plain `/` is div.full.f32, up to 2 ulp off), clamped to
# +-448 and converted to e4m3 (float8e4nv, nearest even), stored as its bytes.
# block= is the tile (one group); the threads are num_warps x 32.
# kevo: tune num_warps 1 2 4
# kevo: launch per_token_group_quant_fp8 block=128,1
import triton
import triton.language as tl


@triton.jit
def per_token_group_quant_fp8(x, q, scales, hidden, tokens, eps):
    t = tl.program_id(1).to(tl.int64)
    g = tl.program_id(0)
    offs = t * hidden + g * 128 + tl.arange(0, 128)
    v = tl.load(x + offs).to(tl.float32)
    amax = tl.maximum(tl.max(tl.abs(v), axis=0), eps)
    s = tl.math.div_rn(amax, 448.0)
    tl.store(scales + t * (hidden // 128) + g, s)
    y = tl.clamp(tl.math.div_rn(v, s), -448.0, 448.0)
    tl.store(q + offs, y.to(tl.float8e4nv).to(tl.uint8, bitcast=True))
