// Large host transfers through two pinned staging buffers. A cuMemcpy of pageable memory is staged
// by the driver too, but through small buffers filled by one thread, which leaves a PCIe 5 link
// well below its pinned rate. Here the copy engine moves one chunk at the pinned rate while host
// threads copy the previous chunk between the staging buffer and the caller's memory.
// KEVO_PINNED=0 in the environment turns it off (pageable copies as before), for A/B measurements.
#pragma once

#include "backends/cuda/cuda_api.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <cstdint>

namespace kevo::cuda {

class PinnedStaging {
public:
    static constexpr uint64_t kChunkBytes = 32ull << 20;
    // Below this a pageable copy costs no more than the host-side copy of the staged one.
    static constexpr uint64_t kMinBytes = 1ull << 20;

    explicit PinnedStaging(const DriverApi& api) : api_(api) {}
    PinnedStaging(const PinnedStaging&) = delete;
    PinnedStaging& operator=(const PinnedStaging&) = delete;

    // Whether a transfer of `bytes` should go through the staging buffers.
    static bool wanted(uint64_t bytes);

    // Both wait until the transfer is complete. They return CUDA_SUCCESS or the result of the
    // first failing call, which `call` then names; the caller drains the stream after a failure.
    // The staging buffers are allocated on first use, in the current context.
    CUresult download(CUstream stream, CUdeviceptr src, void* dst, uint64_t bytes, const char*& call);
    CUresult upload(CUstream stream, CUdeviceptr dst, const void* src, uint64_t bytes, const char*& call);

    // Frees the staging buffers; the owning context must be current and usable. (Nothing is freed
    // on destruction: after a sticky error the driver frees them with the context.)
    void release();

private:
    CUresult ensure(const char*& call);

    const DriverApi& api_;
    void* chunk_[2] = {nullptr, nullptr};
    CUevent done_[2] = {nullptr, nullptr};  // recorded after the copy engine's work on each chunk
};

}  // namespace kevo::cuda

#endif
