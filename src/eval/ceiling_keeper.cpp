// See ceiling_keeper.hpp.
#include "eval/ceiling_keeper.hpp"

#include <fmt/format.h>

#include "core/files.hpp"

namespace kevo {

CeilingKeeper::CeilingKeeper(Device& device, std::function<void()> on_calibrate,
                             std::function<void(const std::string&)> progress)
    : device_(device), on_calibrate_(std::move(on_calibrate)), progress_(std::move(progress)) {}

Expected<Calibration> CeilingKeeper::measure_and_store() {
    if (on_calibrate_) on_calibrate_();
    CalibrationOptions options;
    options.quick = true;
    options.progress = progress_;
    auto measured = measure_calibration(device_, options);
    if (!measured) return measured.error();
    if (auto stored = store_calibration(*measured); !stored)
        warnings_.push_back(fmt::format("the calibration cache ({}) could not be written: {}; the ceilings are kept "
                                        "for this process only, and the next kevo process measures them again",
                                        cache_dir("calibration").string(), stored.error().message));
    return measured;
}

Expected<const Calibration*> CeilingKeeper::current() {
    if (pinned_) return &*pinned_;
    if (in_force_) return &*in_force_;
    if (auto cached = load_cached_calibration(device_.info())) {
        in_force_ = std::move(*cached);
        return &*in_force_;
    }
    auto measured = measure_and_store();
    if (measured) {
        in_force_ = std::move(*measured);
        return &*in_force_;
    }
    auto sheet = datasheet_calibration(device_.info());
    if (!sheet) return make_error("measuring the ceilings failed and the datasheet has no entry for this device: " +
                                  measured.error().message);
    warnings_.push_back(fmt::format("the ceilings could not be measured ({}); scores use the DATASHEET figures "
                                    "({:.0f} GB/s, {:.0f} GFLOP/s), not a measurement of this device",
                                    measured.error().message, sheet->bandwidth_gbs, sheet->fp32_gflops));
    in_force_ = std::move(*sheet);
    return &*in_force_;
}

const Calibration* CeilingKeeper::remeasure(const std::string& why) {
    if (pinned_) {
        pinned_warnings_.push_back(fmt::format("{}; not re-measured: the run scores against the ceilings it started "
                                               "with (measured {})", why, pinned_->measured_at));
        return nullptr;
    }
    if (remeasured_) return nullptr;
    remeasured_ = true;
    const std::optional<Calibration> before = in_force_;
    auto measured = measure_and_store();
    if (!measured) {
        warnings_.push_back(fmt::format("{}; re-measuring the ceilings failed: {}", why, measured.error().message));
        return nullptr;
    }
    in_force_ = std::move(*measured);
    warnings_.push_back(fmt::format("{}; the ceilings were re-measured: {:.1f} -> {:.1f} GB/s, {:.1f} -> {:.1f} GFLOP/s",
                                    why, before ? before->bandwidth_gbs : 0.0, in_force_->bandwidth_gbs,
                                    before ? before->fp32_gflops : 0.0, in_force_->fp32_gflops));
    return &*in_force_;
}

void CeilingKeeper::adopt(Calibration measured) {
    in_force_ = std::move(measured);
    warnings_.clear();
}

void CeilingKeeper::pin(std::optional<Calibration> pinned) {
    pinned_ = std::move(pinned);
    pinned_warnings_.clear();
}

std::vector<std::string> CeilingKeeper::warnings() const {
    std::vector<std::string> out = pinned_ ? pinned_warnings_ : warnings_;
    const std::optional<Calibration>& used = pinned_ ? pinned_ : in_force_;
    if (used)
        for (const auto& note : used->notes) out.push_back("calibration: " + note);
    return out;
}

}  // namespace kevo
