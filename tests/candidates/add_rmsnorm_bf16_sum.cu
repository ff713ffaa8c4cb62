// add_rmsnorm_bf16_sum: one thread sums the row's squares in order with a bf16 accumulator (rounded
// after every addition), as a kernel that keeps its accumulator in the input type would. Once the sum
// is in the hundreds, a bf16 ulp of it is larger than the terms being added.
// kevo: tune BX 256 128 512 64
// kevo: launch add_rmsnorm block=BX,1
#include <cuda_bf16.h>
#ifndef BX
#define BX 256
#endif

extern "C" __global__ void add_rmsnorm(const __nv_bfloat16* x, __nv_bfloat16* residual, const __nv_bfloat16* weight, __nv_bfloat16* y, unsigned hidden, unsigned tokens, float eps)
{
    __shared__ float partial[BX];  // BX is a power of two
    const unsigned t = blockIdx.y, lid = threadIdx.x;
    if (t >= tokens) return;  // uniform over the block
    const size_t base = (size_t)t * hidden;
    float sum = 0.0f;
    for (unsigned i = lid; i < hidden; i += BX) {
        // x + residual is exact in fp32; the stored residual is its one rounding to bf16, and the
        // norm is of the stored value.
        const __nv_bfloat16 r = __float2bfloat16_rn(__bfloat162float(x[base + i]) + __bfloat162float(residual[base + i]));
        residual[base + i] = r;
        const float rf = __bfloat162float(r);
        sum += rf * rf;
    }
    partial[lid] = sum;
    __syncthreads();
    if (lid == 0) {
        float serial = 0.0f;
        for (unsigned i = 0; i < hidden; ++i) {
            const float rf = __bfloat162float(residual[base + i]);
            serial = __bfloat162float(__float2bfloat16_rn(serial + rf * rf));  // WRONG: the accumulator is bf16
        }
        partial[0] = serial;
    }
    __syncthreads();
    const float inv_rms = rsqrtf(partial[0] / (float)hidden + eps);
    for (unsigned i = lid; i < hidden; i += BX)
        y[base + i] = __float2bfloat16_rn(__bfloat162float(residual[base + i]) * inv_rms * __bfloat162float(weight[i]));
}
