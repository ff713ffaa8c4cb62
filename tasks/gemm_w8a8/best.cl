// gemm_w8a8 best-known OpenCL kernel: C = A * B^T in 16 x 16 output tiles, one work-group per tile,
// the 16-wide K slices of A and B staged in local memory as int (each int8 read from global memory
// once per tile), a 2 x 1 register block per work-item, exact int32 sums, then the two scales in fp32
// and one rounding at the store. K is a multiple of 64 (every size); rows beyond M and N are
// predicated.
// kevo: launch gemm_w8a8 block=16,8 per_thread=1,2
#define TS 16

// Round to nearest, ties to even; NaN stays NaN.
ushort float_to_bf16(float f)
{
    uint u = as_uint(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (ushort)((u >> 16) | 0x40u);
    u += 0x7fffu + ((u >> 16) & 1u);
    return (ushort)(u >> 16);
}

__kernel __attribute__((reqd_work_group_size(16, 8, 1)))
void gemm_w8a8(__global const char* a, __global const float* a_scale, __global const char* b,
               __global const float* b_scale, __global ushort* c, uint m, uint n, uint k)
{
    __local int a_tile[TS][TS + 1];  // [row][k]
    __local int b_tile[TS][TS + 1];  // [col][k]
    const uint tx = (uint)get_local_id(0), ty = (uint)get_local_id(1);
    const uint col0 = (uint)get_group_id(0) * TS, row0 = (uint)get_group_id(1) * TS;
    int acc0 = 0, acc1 = 0;  // rows row0 + ty and row0 + ty + 8, column col0 + tx
    for (uint p0 = 0; p0 < k; p0 += TS) {
        for (uint r = ty; r < TS; r += 8) {
            const uint ar = row0 + r, br = col0 + r;
            a_tile[r][tx] = ar < m ? (int)a[(size_t)ar * k + p0 + tx] : 0;
            b_tile[r][tx] = br < n ? (int)b[(size_t)br * k + p0 + tx] : 0;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint p = 0; p < TS; ++p) {
            const int bv = b_tile[tx][p];
            acc0 += a_tile[ty][p] * bv;
            acc1 += a_tile[ty + 8][p] * bv;
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    const uint col = col0 + tx, row = row0 + ty;
    if (col >= n) return;
    const float sb = b_scale[col];
    if (row < m) c[(size_t)row * n + col] = float_to_bf16(a_scale[row] * sb * (float)acc0);
    if (row + 8 < m) c[(size_t)(row + 8) * n + col] = float_to_bf16(a_scale[row + 8] * sb * (float)acc1);
}
