// PinnedStaging: double-buffered chunked copies through pinned host memory (see pinned_staging.hpp).
#include "backends/cuda/pinned_staging.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string_view>

#include "core/parallel.hpp"

namespace kevo::cuda {
namespace {

// Several threads, each a few MiB: one thread's memcpy reaches about a quarter of a PCIe 5 link.
void copy_host(void* dst, const void* src, uint64_t bytes) {
    constexpr size_t kPerThread = 4u << 20;
    parallel_for(
        bytes,
        [&](size_t begin, size_t end) {
            std::memcpy(static_cast<char*>(dst) + begin, static_cast<const char*>(src) + begin, end - begin);
        },
        kPerThread);
}

// Returns the result of a failed driver call and names the call in `call`.
#define KEVO_TRY(expr, name)                            \
    do {                                                \
        if (CUresult r_ = (expr); r_ != CUDA_SUCCESS) { \
            call = name;                                \
            return r_;                                  \
        }                                               \
    } while (0)

}  // namespace

bool PinnedStaging::wanted(uint64_t bytes) {
    static const bool enabled = [] {
        const char* v = std::getenv("KEVO_PINNED");
        return !(v && std::string_view(v) == "0");
    }();
    return enabled && bytes >= kMinBytes;
}

CUresult PinnedStaging::ensure(const char*& call) {
    for (int s = 0; s < 2; ++s) {
        if (!chunk_[s]) KEVO_TRY(api_.cuMemHostAlloc(&chunk_[s], kChunkBytes, 0), "cuMemHostAlloc");
        if (!done_[s]) KEVO_TRY(api_.cuEventCreate(&done_[s], CU_EVENT_DISABLE_TIMING), "cuEventCreate");
    }
    return CUDA_SUCCESS;
}

// Chunk i goes device -> chunk_[i % 2] while the host copies chunk i-1 out of the other buffer.
CUresult PinnedStaging::download(CUstream stream, CUdeviceptr src, void* dst, uint64_t bytes, const char*& call) {
    if (CUresult r = ensure(call); r != CUDA_SUCCESS) return r;
    const uint64_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
    auto length = [&](uint64_t i) { return std::min(kChunkBytes, bytes - i * kChunkBytes); };
    auto drain_into_host = [&](uint64_t i) {
        const int s = static_cast<int>(i % 2);
        if (CUresult r = api_.cuEventSynchronize(done_[s]); r != CUDA_SUCCESS) return r;
        copy_host(static_cast<char*>(dst) + i * kChunkBytes, chunk_[s], length(i));
        return CUDA_SUCCESS;
    };
    for (uint64_t i = 0; i < chunks; ++i) {
        const int s = static_cast<int>(i % 2);
        // chunk_[s] last held chunk i-2, which the previous iteration copied out already.
        KEVO_TRY(api_.cuMemcpyDtoHAsync(chunk_[s], src + i * kChunkBytes, length(i), stream), "cuMemcpyDtoHAsync");
        KEVO_TRY(api_.cuEventRecord(done_[s], stream), "cuEventRecord");
        if (i > 0) KEVO_TRY(drain_into_host(i - 1), "cuEventSynchronize");
    }
    KEVO_TRY(drain_into_host(chunks - 1), "cuEventSynchronize");
    return CUDA_SUCCESS;
}

// The host fills chunk_[i % 2] with chunk i while the copy engine sends chunk i-1 from the other one.
CUresult PinnedStaging::upload(CUstream stream, CUdeviceptr dst, const void* src, uint64_t bytes, const char*& call) {
    if (CUresult r = ensure(call); r != CUDA_SUCCESS) return r;
    const uint64_t chunks = (bytes + kChunkBytes - 1) / kChunkBytes;
    for (uint64_t i = 0; i < chunks; ++i) {
        const int s = static_cast<int>(i % 2);
        const uint64_t length = std::min(kChunkBytes, bytes - i * kChunkBytes);
        // chunk_[s] may still be read by the copy of chunk i-2.
        if (i >= 2) KEVO_TRY(api_.cuEventSynchronize(done_[s]), "cuEventSynchronize");
        copy_host(chunk_[s], static_cast<const char*>(src) + i * kChunkBytes, length);
        KEVO_TRY(api_.cuMemcpyHtoDAsync(dst + i * kChunkBytes, chunk_[s], length, stream), "cuMemcpyHtoDAsync");
        KEVO_TRY(api_.cuEventRecord(done_[s], stream), "cuEventRecord");
    }
    KEVO_TRY(api_.cuStreamSynchronize(stream), "cuStreamSynchronize");
    return CUDA_SUCCESS;
}

void PinnedStaging::release() {
    for (int s = 0; s < 2; ++s) {
        if (chunk_[s]) api_.cuMemFreeHost(chunk_[s]);
        if (done_[s]) api_.cuEventDestroy(done_[s]);
        chunk_[s] = nullptr;
        done_[s] = nullptr;
    }
}

#undef KEVO_TRY

}  // namespace kevo::cuda

#endif
