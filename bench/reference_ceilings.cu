// Independent yardsticks for `kevo calibrate` (built with nvcc, no kevo code): the bandwidth of a
// plain large device-to-device copy (cudaMemcpy, bytes read + written) and the FP32 rate of a
// plain FMA-chain kernel. Prints one line each.
#include <cstdio>
#include <vector>
#include <algorithm>
#include <cuda_runtime.h>

#define CHECK(x) do { cudaError_t e = (x); if (e != cudaSuccess) { std::printf("CUDA error %s at %s:%d\n", cudaGetErrorString(e), __FILE__, __LINE__); return 1; } } while (0)

__global__ void fma_chains(float* out, float a, float b) {
    float x0 = threadIdx.x, x1 = x0 + 1, x2 = x0 + 2, x3 = x0 + 3, x4 = x0 + 4, x5 = x0 + 5, x6 = x0 + 6, x7 = x0 + 7;
#pragma unroll 64
    for (int i = 0; i < 4096; ++i) {
        x0 = fmaf(x0, a, b); x1 = fmaf(x1, a, b); x2 = fmaf(x2, a, b); x3 = fmaf(x3, a, b);
        x4 = fmaf(x4, a, b); x5 = fmaf(x5, a, b); x6 = fmaf(x6, a, b); x7 = fmaf(x7, a, b);
    }
    out[blockIdx.x * blockDim.x + threadIdx.x] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;
}

int main() {
    const size_t bytes = size_t(4) << 30;
    void *src, *dst;
    CHECK(cudaMalloc(&src, bytes));
    CHECK(cudaMalloc(&dst, bytes));
    CHECK(cudaMemset(src, 1, bytes));
    cudaEvent_t start, stop;
    cudaEventCreate(&start);
    cudaEventCreate(&stop);
    std::vector<float> ms;
    for (int r = 0; r < 12; ++r) {
        cudaEventRecord(start);
        CHECK(cudaMemcpy(dst, src, bytes, cudaMemcpyDeviceToDevice));
        cudaEventRecord(stop);
        cudaEventSynchronize(stop);
        float t;
        cudaEventElapsedTime(&t, start, stop);
        if (r >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    std::printf("reference copy: %.1f GB/s (cudaMemcpy D2D of %zu MiB, read+write, median of %zu)\n",
                2.0 * bytes / (ms[ms.size() / 2] * 1e-3) / 1e9, bytes >> 20, ms.size());
    int sms = 0;
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, 0);
    const int blocks = sms * 16, threads = 256;
    float* out;
    CHECK(cudaMalloc(&out, sizeof(float) * blocks * threads));
    ms.clear();
    for (int r = 0; r < 12; ++r) {
        cudaEventRecord(start);
        fma_chains<<<blocks, threads>>>(out, 0.999f, 0.001f);
        cudaEventRecord(stop);
        CHECK(cudaEventSynchronize(stop));
        float t;
        cudaEventElapsedTime(&t, start, stop);
        if (r >= 2) ms.push_back(t);
    }
    std::sort(ms.begin(), ms.end());
    const double flops = 2.0 * 8 * 4096 * double(blocks) * threads;
    std::printf("reference fma: %.1f GFLOP/s (FMA chains, %d blocks x %d threads, median of %zu)\n",
                flops / (ms[ms.size() / 2] * 1e-3) / 1e9, blocks, threads, ms.size());
    return 0;
}
