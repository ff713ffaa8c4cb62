// The CUDA backend: finds devices through the dlopen'd driver and compiles with NVRTC. Built
// without the CUDA headers it still links and reports why it has no devices.
#include "backend/backend.hpp"
#include "backends/cuda/cuda_headers.hpp"
#include "backends/cuda/nvrtc_compile.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <fmt/format.h>

#include <mutex>

#include "backends/cuda/cuda_api.hpp"
#include "backends/cuda/cuda_device.hpp"
#include "backends/cuda/cuda_device_info.hpp"
#include "backends/cuda/cuda_errors.hpp"

#endif

namespace kevo {
namespace {

constexpr const char* kDefaultOfflineArch = "sm_90";

// Offline compilation has no device to load the CUBIN on; success is reported as module id 0.
Expected<CompileOutcome> compile_offline_impl(const std::string& source, const std::vector<std::string>& defines,
                                              const std::string& arch) {
    auto compiled = cuda::nvrtc_compile(source, defines, arch.empty() ? kDefaultOfflineArch : arch);
    if (!compiled) return compiled.error();
    CompileOutcome outcome;
    outcome.log = std::move(compiled->log);
    outcome.seconds = compiled->seconds;
    if (compiled->cubin) outcome.module = 0;
    return outcome;
}

#if KEVO_HAVE_CUDA_HEADERS

class CudaBackend final : public Backend {
public:
    std::string name() const override { return "cuda"; }
    Language language() const override { return default_language_of("cuda"); }

    std::vector<DeviceInfo> probe() override {
        std::lock_guard lock(mutex_);
        scan();
        return devices_;
    }

    std::string unavailable_reason() const override {
        std::lock_guard lock(mutex_);
        if (!scanned_) scan();
        return reason_;
    }

    Expected<std::unique_ptr<Device>> open(int index) override {
        std::lock_guard lock(mutex_);
        if (!scanned_) scan();
        if (!api_) return make_error(fmt::format("no CUDA device: {}", reason_));
        if (index < 0 || index >= static_cast<int>(devices_.size()))
            return make_error(fmt::format("CUDA device {} does not exist ({} found)", index, devices_.size()));
        return cuda::CudaDevice::open(*api_, devices_[static_cast<size_t>(index)],
                                      ordinals_[static_cast<size_t>(index)]);
    }

    Expected<CompileOutcome> compile_offline(const std::string& source, const std::vector<std::string>& defines,
                                             const std::string& arch) override {
        return compile_offline_impl(source, defines, arch);
    }
    std::string default_offline_arch() const override { return kDefaultOfflineArch; }

private:
    // Looks for devices again on every probe (cheap: cuInit is idempotent); the rest reuses the last scan.
    void scan() const {
        scanned_ = true;
        devices_.clear();
        ordinals_.clear();
        reason_.clear();
        api_ = cuda::load_driver_api(reason_);
        if (!api_) return;
        if (CUresult r = api_->cuInit(0); r != CUDA_SUCCESS) {
            reason_ = fmt::format("cuInit failed: {}", cuda::describe(*api_, r));
            api_ = nullptr;
            return;
        }
        int count = 0;
        if (CUresult r = api_->cuDeviceGetCount(&count); r != CUDA_SUCCESS) {
            reason_ = fmt::format("cuDeviceGetCount failed: {}", cuda::describe(*api_, r));
            return;
        }
        for (int i = 0; i < count; ++i) {
            auto info = cuda::query_device_info(*api_, i);
            if (info) {
                info->index = static_cast<int>(devices_.size());  // a device that failed its query leaves no gap
                devices_.push_back(std::move(*info));
                ordinals_.push_back(i);
            } else if (reason_.empty()) {
                reason_ = info.error().message;  // kept only if no device at all turns out usable
            }
        }
        if (!devices_.empty())
            reason_.clear();
        else if (reason_.empty())
            reason_ = "the NVIDIA driver found no CUDA device";
    }

    mutable std::mutex mutex_;
    mutable bool scanned_ = false;
    mutable const cuda::DriverApi* api_ = nullptr;
    mutable std::vector<DeviceInfo> devices_;
    mutable std::vector<int> ordinals_;  // the driver's ordinal of each entry of devices_
    mutable std::string reason_;
};

#else

class CudaBackend final : public Backend {
public:
    std::string name() const override { return "cuda"; }
    Language language() const override { return default_language_of("cuda"); }
    std::vector<DeviceInfo> probe() override { return {}; }
    std::string unavailable_reason() const override { return "kevo was built without the CUDA headers"; }
    Expected<std::unique_ptr<Device>> open(int) override { return make_error(unavailable_reason()); }
    Expected<CompileOutcome> compile_offline(const std::string& source, const std::vector<std::string>& defines,
                                             const std::string& arch) override {
        return compile_offline_impl(source, defines, arch);
    }
    std::string default_offline_arch() const override { return kDefaultOfflineArch; }
};

#endif

}  // namespace

std::unique_ptr<Backend> make_cuda_backend() {
    return std::make_unique<CudaBackend>();
}

}  // namespace kevo
