// One opened OpenCL device: a context, one in-order profiling queue, and the programs, kernels
// and buffers kevo created on it, each behind a small integer handle.
#pragma once

#include <CL/cl.h>

#include <map>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backends/opencl/cl_query.hpp"

namespace kevo::opencl {

class OpenclDevice final : public Device {
public:
    static Expected<std::unique_ptr<Device>> open(const DeviceRef& ref, DeviceInfo info);
    ~OpenclDevice() override;
    OpenclDevice(const OpenclDevice&) = delete;
    OpenclDevice& operator=(const OpenclDevice&) = delete;

    const DeviceInfo& info() const override { return info_; }
    Language language() const override { return default_language_of("opencl"); }

    Expected<CompileOutcome> compile(const std::string& source, const std::vector<std::string>& defines) override;
    Expected<uint32_t> kernel(uint32_t module, const std::string& name) override;
    Expected<KernelAttributes> attributes(uint32_t kernel) override;
    Expected<KernelParams> parameters(uint32_t kernel) override;
    void release_module(uint32_t module) override;

    Expected<BufferHandle> allocate(uint64_t bytes) override;
    void release(BufferHandle buffer) override;
    Expected<void> upload(BufferHandle dst, uint64_t offset, const void* src, uint64_t bytes) override;
    Expected<void> download(BufferHandle src, uint64_t offset, void* dst, uint64_t bytes) override;
    Expected<void> copy(BufferHandle dst, BufferHandle src, uint64_t bytes) override;

    Expected<void> run(std::span<const Launch> launches) override;
    Expected<double> run_timed(std::span<const Launch> launches) override;

    bool is_poisoned() const override { return poisoned_; }

private:
    struct BufferEntry {
        cl_mem mem = nullptr;
        uint64_t bytes = 0;
        // Sub-buffers standing for "this buffer from offset N to its end", made on first use.
        std::map<uint64_t, cl_mem> views;
    };
    struct KernelEntry {
        cl_kernel kernel = nullptr;
        std::string name;
        uint32_t module = 0;
    };

    OpenclDevice(cl_device_id device, DeviceInfo info) : device_(device), info_(std::move(info)) {}

    // Records whether a status leaves the queue unusable; returns the status unchanged.
    cl_int note(cl_int status);
    uint32_t next_id() { return next_id_++; }

    Expected<BufferEntry*> find_buffer(BufferHandle handle, uint64_t offset, uint64_t bytes, const char* what);
    Expected<cl_mem> buffer_arg(const KernelArg& arg);
    Expected<void> set_args(const KernelEntry& kernel, const Launch& launch);
    // Enqueues every launch, waits, and checks each launch's execution status; on success the
    // events (one per launch, in order) are handed to the caller, who releases them.
    Expected<std::vector<cl_event>> execute(std::span<const Launch> launches);

    cl_device_id device_ = nullptr;
    DeviceInfo info_;
    cl_context context_ = nullptr;
    cl_command_queue queue_ = nullptr;
    uint64_t base_align_bytes_ = 1;
    bool poisoned_ = false;

    uint32_t next_id_ = 1;  // shared by all handle kinds, so a handle of one kind never aliases another
    std::map<uint32_t, cl_program> modules_;
    std::map<uint32_t, KernelEntry> kernels_;
    std::map<uint32_t, BufferEntry> buffers_;
};

}  // namespace kevo::opencl
