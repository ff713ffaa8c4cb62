// gemm_bf16 best-known OpenCL kernel: C = A * B^T in 16 x 16 output tiles, one work-group per tile,
// the 16-wide K slices of A and B staged in local memory (each value read from global memory once
// per tile instead of once per output), a 2 x 1 register block per work-item, fp32 accumulation in
// K order and one rounding at the store. bf16 is ushort, converted with bit operations. K is a
// multiple of 64 (every size); rows of A beyond M and of B beyond N are predicated.
//
// THE CPU PATH (PATH=cpu; PATH=auto chooses it on PoCL's CPU device, whose compiler defines
// POCL_DEVICE_ADDRESS_BITS and targets the host's architecture): the same geometry, no local memory
// and no barriers (PoCL splits a work-group's loop at every barrier), each work-item's two dot
// products over K as explicit 16-lane fp32 vectors (vload16 of 16 bf16, widened), the lanes summed
// at the end (another fp32 summation order, far inside the bf16 output's rounding). On PoCL 3.1 the
// tiled form was 0.07-0.80x the seed.
// kevo: tune PATH auto gpu cpu
// kevo: launch gemm_bf16 block=16,8 per_thread=1,2
#ifndef PATH
#define PATH auto
#endif
#if defined(POCL_DEVICE_ADDRESS_BITS) && (defined(__x86_64__) || defined(__i386__) || defined(__aarch64__) || defined(__arm__) || defined(__riscv) || defined(__powerpc__))
#define PATH_auto 2
#else
#define PATH_auto 1
#endif
#define PATH_gpu 1
#define PATH_cpu 2
#define PATH_ID_(p) PATH_##p
#define PATH_ID(p) PATH_ID_(p)
#if PATH_ID(PATH) != 1 && PATH_ID(PATH) != 2
#error "PATH must be auto, gpu or cpu"
#endif
#define CPU_PATH (PATH_ID(PATH) == 2)
#define TS 16

float bf16_to_float(ushort h) { return as_float((uint)h << 16); }

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

#if CPU_PATH
float16 bf16x16_to_float(ushort16 h) { return as_float16(convert_uint16(h) << 16); }

float sum_lanes(float16 v)
{
    const float8 h8 = v.lo + v.hi;
    const float4 h4 = h8.lo + h8.hi;
    const float2 h2 = h4.lo + h4.hi;
    return h2.x + h2.y;
}

__kernel __attribute__((reqd_work_group_size(16, 8, 1)))
void gemm_bf16(__global const ushort* a, __global const ushort* b, __global ushort* c, uint m, uint n, uint k)
{
    const uint col = (uint)get_group_id(0) * TS + (uint)get_local_id(0);
    const uint row = (uint)get_group_id(1) * TS + (uint)get_local_id(1);
    if (col >= n || row >= m) return;
    const bool second = row + 8 < m;
    __global const ushort* b_row = b + (size_t)col * k;
    __global const ushort* a_row0 = a + (size_t)row * k;
    __global const ushort* a_row1 = a + (size_t)(second ? row + 8 : row) * k;
    float16 acc0 = 0.0f, acc1 = 0.0f;
    for (uint p = 0; p < k; p += 16) {
        const float16 bv = bf16x16_to_float(vload16(0, b_row + p));
        acc0 = fma(bf16x16_to_float(vload16(0, a_row0 + p)), bv, acc0);
        acc1 = fma(bf16x16_to_float(vload16(0, a_row1 + p)), bv, acc1);
    }
    c[(size_t)row * n + col] = float_to_bf16(sum_lanes(acc0));
    if (second) c[(size_t)(row + 8) * n + col] = float_to_bf16(sum_lanes(acc1));
}
#else
__kernel __attribute__((reqd_work_group_size(16, 8, 1)))
void gemm_bf16(__global const ushort* a, __global const ushort* b, __global ushort* c, uint m, uint n, uint k)
{
    __local float a_tile[TS][TS + 1];  // [row][k]; +1 keeps the column reads off one bank
    __local float b_tile[TS][TS + 1];  // [col][k]
    const uint tx = (uint)get_local_id(0), ty = (uint)get_local_id(1);
    const uint col0 = (uint)get_group_id(0) * TS, row0 = (uint)get_group_id(1) * TS;
    float acc0 = 0.0f, acc1 = 0.0f;  // rows row0 + ty and row0 + ty + 8, column col0 + tx
    for (uint p0 = 0; p0 < k; p0 += TS) {
        for (uint r = ty; r < TS; r += 8) {
            const uint ar = row0 + r, br = col0 + r;
            a_tile[r][tx] = ar < m ? bf16_to_float(a[(size_t)ar * k + p0 + tx]) : 0.0f;
            b_tile[r][tx] = br < n ? bf16_to_float(b[(size_t)br * k + p0 + tx]) : 0.0f;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint p = 0; p < TS; ++p) {
            const float bv = b_tile[tx][p];
            acc0 = fma(a_tile[ty][p], bv, acc0);
            acc1 = fma(a_tile[ty + 8][p], bv, acc1);
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const uint col = col0 + tx, row = row0 + ty;
    if (col < n && row < m) c[(size_t)row * n + col] = float_to_bf16(acc0);
    if (col < n && row + 8 < m) c[(size_t)(row + 8) * n + col] = float_to_bf16(acc1);
}
#endif
