// One CUDA device opened for work: its primary context, one stream, two timing events, and the
// modules, kernels and buffers handed out as small integer ids.
#pragma once

#include "backend/backend.hpp"
#include "backend/vendor_routines.hpp"
#include "backends/cuda/cuda_api.hpp"
#include "backends/cuda/lt_gemm.hpp"
#include "backends/cuda/pinned_staging.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <functional>
#include <string_view>
#include <unordered_map>

namespace kevo::cuda {

class CudaDevice final : public Device, public VendorRoutines {
public:
    // `api` must outlive the device (it is the process-wide table). `info` comes from probing;
    // `ordinal` is the driver's number for the device.
    static Expected<std::unique_ptr<Device>> open(const DriverApi& api, DeviceInfo info, int ordinal);
    ~CudaDevice() override;
    CudaDevice(const CudaDevice&) = delete;
    CudaDevice& operator=(const CudaDevice&) = delete;

    const DeviceInfo& info() const override { return info_; }
    Language language() const override { return default_language_of("cuda"); }

    Expected<CompileOutcome> compile(const std::string& source, const std::vector<std::string>& defines) override;
    Expected<CompileOutcome> compile_for_arch(const std::string& source, const std::vector<std::string>& defines,
                                              const std::string& arch) override;
    Expected<uint32_t> load_image(const KernelImage& image) override;
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
    // The launches captured into a CUDA graph, uploaded, then one launch of it timed.
    Expected<double> run_timed_replay(std::span<const Launch> launches) override;

    Expected<std::string> vendor_library(VendorRoutine routine) override;
    Expected<double> run_vendor_timed(const VendorCall& call) override;

    bool is_poisoned() const override { return poisoned_; }

private:
    // Loads a cubin (NVRTC's or one compiled ahead of time) as a module; returns its id.
    Expected<uint32_t> load_module(const void* image);
    struct KernelEntry {
        CUfunction function = nullptr;
        uint32_t module = 0;
        std::string name;
        unsigned max_threads = 0;
        uint64_t static_shared = 0;       // bytes of __shared__ the compiler allotted
        uint64_t dynamic_shared_set = 0;  // the dynamic shared limit last set on the function (0: the driver's 48 KB)
        std::vector<size_t> param_sizes;  // from cuFuncGetParamInfo
        bool params_known = false;        // false where the driver cannot list the parameters
    };
    struct BufferEntry {
        CUdeviceptr pointer = 0;
        uint64_t bytes = 0;
    };
    // The argument values of one launch; cuLaunchKernel reads them through `pointers`.
    struct LaunchParams {
        struct Slot {
            CUdeviceptr pointer = 0;
            float f32 = 0;
            uint32_t u32 = 0;
        };
        std::vector<Slot> slots;
        std::vector<void*> pointers;
    };

    CudaDevice(const DriverApi& api, DeviceInfo info) : api_(api), info_(std::move(info)), staging_(api), lt_gemm_(api) {}
    Expected<void> init(int ordinal);

    // Makes the context current on the calling thread; refuses once the context is poisoned.
    Expected<void> enter();
    // An Error for a failed driver call; marks the device poisoned when the code is sticky.
    Error fail(CUresult result, std::string_view what);
    Expected<void> check(CUresult result, std::string_view what);

    Expected<const BufferEntry*> find_buffer(BufferHandle handle, std::string_view role);
    Expected<void> check_range(const BufferEntry& buffer, uint64_t offset, uint64_t bytes, std::string_view role);
    // The outcome of a transfer through staging_; `call` names the call that failed.
    Expected<void> staged(CUresult result, const char*& call, std::string_view direction, uint64_t bytes);
    std::string describe_launch(std::span<const Launch> launches, size_t index) const;
    std::string describe_batch(std::span<const Launch> launches) const;
    Expected<LaunchParams> prepare(std::span<const Launch> launches, size_t index);
    Expected<void> submit(std::span<const Launch> launches, size_t index);
    // The launches captured from stream_ into an instantiated graph (nothing runs yet).
    Expected<CUgraphExec> capture_graph(std::span<const Launch> launches);
    // Times what `queue` puts on stream_ between the two events and waits for it.
    Expected<double> time_on_stream(std::span<const Launch> launches, const std::function<Expected<void>()>& queue);
    // After a failed submission: waits for what was already queued so the stream is idle again.
    void drain();
    // Queues one vendor call on stream_ (plans and handles are made on first use and kept).
    Expected<void> submit_vendor(const VendorCall& call);
    void release_vendor_state();

    const DriverApi& api_;
    DeviceInfo info_;
    CUdevice device_ = 0;
    CUcontext context_ = nullptr;
    CUstream stream_ = nullptr;
    CUevent start_ = nullptr;
    CUevent stop_ = nullptr;
    bool poisoned_ = false;
    std::string poison_cause_;
    PinnedStaging staging_;  // for uploads and downloads of PinnedStaging::kMinBytes or more

    uint32_t next_id_ = 1;  // shared by all handle kinds; 0 is never handed out
    std::unordered_map<uint32_t, CUmodule> modules_;
    std::unordered_map<uint32_t, KernelEntry> kernels_;
    std::unordered_map<uint32_t, BufferEntry> buffers_;
    std::unordered_map<uint64_t, int> fft_plans_;  // cube side -> cuFFT plan
    void* cublas_ = nullptr;                       // cuBLAS handle
    LtGemm lt_gemm_;                               // the tensor-core GEMMs (calibration)
};

}  // namespace kevo::cuda

#endif
