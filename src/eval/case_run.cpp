// See case_run.hpp.
#include "eval/case_run.hpp"

#include <fmt/format.h>

namespace kevo {

Expected<CaseRun> CaseRun::create(Device& device, DeviceCaseCache& cases, const Task& task, const SizeSpec& size,
                                  uint64_t seed, Trial trial, std::shared_ptr<const Case> c, const BoundKernels& kernels) {
    auto dc = cases.get(task, size, seed, trial, *c);
    if (!dc) return dc.error();
    auto launches = dc->launches(*c, kernels.handles, kernels.geometry);
    return CaseRun(device, std::move(c), std::move(*dc), std::move(launches));
}

Expected<CaseRun> CaseRun::create_copy(Device& device, DeviceChecksum& checksum, std::shared_ptr<const Case> c,
                                       const BoundKernels& kernels) {
    auto dc = DeviceCase::create(device, checksum, *c);
    if (!dc) return dc.error();
    auto launches = dc->launches(*c, kernels.handles, kernels.geometry);
    return CaseRun(device, std::move(c), std::move(*dc), std::move(launches));
}

Expected<void> CaseRun::reset() { return dc_.reset(); }

std::optional<Fault> CaseRun::run() {
    if (auto r = dc_.reset(); !r) return Fault{Verdict::runtime_error, r.error().message};
    if (auto r = device_->run(launches_); !r) return Fault{Verdict::runtime_error, r.error().message};
    return std::nullopt;
}

Expected<double> CaseRun::run_timed(CacheFlusher& flusher) {
    if (auto r = dc_.reset(); !r) return r.error();
    if (auto r = flusher.flush(); !r) return r.error();
    return device_->run_timed(launches_);
}

std::optional<Fault> CaseRun::check_buffers() {
    auto guards = dc_.check_guards();
    if (!guards) return Fault{Verdict::runtime_error, guards.error().message};
    if (!guards->empty()) return Fault{Verdict::runtime_error, *guards};
    auto modified = dc_.modified_inputs(*case_);
    if (!modified) return Fault{Verdict::runtime_error, modified.error().message};
    if (!modified->empty())
        return Fault{Verdict::incorrect, fmt::format("input buffer '{}' was modified; inputs are read-only", modified->front())};
    return std::nullopt;
}

std::optional<Fault> CaseRun::verify(const Task& task, const SizeSpec& size, const Reference& ref, CheckResult* check) {
    if (auto fault = check_buffers()) return fault;
    auto got = outputs();
    if (!got) return Fault{Verdict::runtime_error, got.error().message};
    const CheckResult result = task.check(size, *case_, ref, *got);
    if (check) *check = result;
    if (!result.pass) return Fault{Verdict::incorrect, result.message};
    return std::nullopt;
}

Expected<void> CaseRun::remember_outputs() { return dc_.remember_results(*case_); }

std::optional<Fault> CaseRun::recheck(const Task& task, const SizeSpec& size, const Reference& ref) {
    if (auto fault = check_buffers()) return fault;
    auto pristine = dc_.verify_pristine();
    if (!pristine) return Fault{Verdict::runtime_error, pristine.error().message};
    if (!pristine->empty()) return Fault{Verdict::runtime_error, *pristine};
    auto unchanged = dc_.results_as_remembered(*case_);
    if (!unchanged) return Fault{Verdict::runtime_error, unchanged.error().message};
    if (*unchanged) return std::nullopt;
    auto got = outputs();
    if (!got) return Fault{Verdict::runtime_error, got.error().message};
    const CheckResult result = task.check(size, *case_, ref, *got);
    if (!result.pass)
        return Fault{Verdict::incorrect, "the output of a timed run is wrong although the first run was right (does the "
                                         "kernel skip work when called again?): " + result.message};
    return std::nullopt;
}

Expected<std::vector<std::vector<std::byte>>> CaseRun::outputs() { return dc_.download_results(*case_); }

}  // namespace kevo
