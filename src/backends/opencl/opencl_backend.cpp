// The OpenCL backend: finds devices through the ICD loader and opens them. OpenCL C is compiled
// by the driver at run time, so there is no offline compilation.
#include <fmt/format.h>

#include "backends/opencl/cl_query.hpp"
#include "backends/opencl/opencl_device.hpp"

namespace kevo {
namespace {

class OpenclBackend final : public Backend {
public:
    std::string name() const override { return "opencl"; }
    Language language() const override { return default_language_of("opencl"); }

    std::vector<DeviceInfo> probe() override {
        refresh();
        std::vector<DeviceInfo> infos;
        for (size_t i = 0; i < refs_.size(); ++i) infos.push_back(opencl::describe_device(refs_[i], static_cast<int>(i)));
        return infos;
    }

    std::string unavailable_reason() const override { return why_empty_; }

    Expected<std::unique_ptr<Device>> open(int index) override {
        if (!probed_) refresh();
        if (index < 0 || static_cast<size_t>(index) >= refs_.size()) {
            if (refs_.empty()) return make_error(fmt::format("no OpenCL device to open: {}", why_empty_));
            return make_error(fmt::format("OpenCL device index {} out of range (found {})", index, refs_.size()));
        }
        const auto& ref = refs_[static_cast<size_t>(index)];
        return opencl::OpenclDevice::open(ref, opencl::describe_device(ref, index));
    }

    Expected<CompileOutcome> compile_offline(const std::string&, const std::vector<std::string>&,
                                             const std::string&) override {
        return make_error("OpenCL compiles only on a device; use --backend opencl with a device");
    }
    std::string default_offline_arch() const override { return ""; }

private:
    void refresh() {
        why_empty_.clear();
        refs_ = opencl::enumerate_devices(why_empty_);
        probed_ = true;
    }

    bool probed_ = false;
    std::vector<opencl::DeviceRef> refs_;
    std::string why_empty_;
};

}  // namespace

std::unique_ptr<Backend> make_opencl_backend() { return std::make_unique<OpenclBackend>(); }

}  // namespace kevo
