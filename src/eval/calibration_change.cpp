// See calibration_change.hpp.
#include "eval/calibration_change.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <thread>

namespace kevo {
namespace {

double spread_of(const std::vector<double>& passes) {
    if (passes.size() < 2) return 0;
    const auto [lo, hi] = std::minmax_element(passes.begin(), passes.end());
    return *lo > 0 ? *hi / *lo - 1 : 0;
}

FigureChange figure_change(double before, double after, const std::vector<double>& passes) {
    FigureChange f;
    f.before = before;
    f.after = after;
    f.difference = before > 0 ? after / before - 1 : 0;
    f.spread = spread_of(passes);
    return f;
}

std::optional<double> load_average_1min() {
    std::ifstream in("/proc/loadavg");
    double load = 0;
    if (in >> load) return load;
    return std::nullopt;
}

nlohmann::json figure_json(const FigureChange& f) {
    return {{"before", f.before}, {"after", f.after}, {"difference", f.difference}, {"spread", f.spread},
            {"beyond_spread", f.beyond_spread()}};
}

}  // namespace

bool FigureChange::beyond_spread() const {
    // The passes' own spread, and at least the agreement the passes are settled to.
    return std::abs(difference) > std::max(spread, kCalibrationAgreement);
}

CalibrationChange compare_calibrations(const Calibration& replaced, const Calibration& measured) {
    CalibrationChange c;
    c.replaced_measured_at = replaced.measured_at;
    c.bandwidth = figure_change(replaced.bandwidth_gbs, measured.bandwidth_gbs, measured.bandwidth_passes);
    c.fp32 = figure_change(replaced.fp32_gflops, measured.fp32_gflops, measured.fp32_passes);
    c.load_1min = load_average_1min();
    c.cores = std::thread::hardware_concurrency();
    return c;
}

std::vector<std::string> describe_calibration_change(const CalibrationChange& c) {
    std::vector<std::string> lines;
    lines.push_back(fmt::format("replaced the cached calibration of {}: DRAM {:.1f} -> {:.1f} GB/s ({:+.1f}%, passes spread "
                                "{:.1f}%), FP32 {:.1f} -> {:.1f} GFLOP/s ({:+.1f}%, passes spread {:.1f}%)",
                                c.replaced_measured_at, c.bandwidth.before, c.bandwidth.after, 100 * c.bandwidth.difference,
                                100 * c.bandwidth.spread, c.fp32.before, c.fp32.after, 100 * c.fp32.difference,
                                100 * c.fp32.spread));
    if (c.beyond_spread()) {
        std::string load = "";
        if (c.load_1min)
            load = fmt::format(" (1-minute load average {:.2f} on {} cores{})", *c.load_1min, c.cores,
                               *c.load_1min > 0.5 * c.cores ? ": other work is running" : "");
        lines.push_back(fmt::format("the difference is beyond the spread of the passes: the machine was likely busy "
                                    "during one of the two calibrations{}; runs already started keep the ceilings "
                                    "they started with", load));
    }
    return lines;
}

nlohmann::json to_json(const CalibrationChange& c) {
    nlohmann::json j = {{"measured_at", c.replaced_measured_at},
                        {"bandwidth_gbs", figure_json(c.bandwidth)},
                        {"fp32_gflops", figure_json(c.fp32)},
                        {"beyond_spread", c.beyond_spread()},
                        {"cores", c.cores}};
    j["load_1min"] = c.load_1min ? nlohmann::json(*c.load_1min) : nlohmann::json(nullptr);
    return j;
}

}  // namespace kevo
