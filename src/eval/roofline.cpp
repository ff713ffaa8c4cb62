// See roofline.hpp.
#include "eval/roofline.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace kevo {

Rate measure_rate(Bound bound, double work, double seconds, double working_set_bytes, const Calibration& ceilings) {
    Rate r;
    r.achieved = seconds > 0 ? work / seconds / 1e9 : 0;
    if (bound == Bound::compute) {
        r.unit = "GFLOP/s";
        r.ceiling_static = r.ceiling_workload = ceilings.fp32_gflops;
    } else {
        r.unit = "GB/s";
        r.ceiling_static = ceilings.bandwidth_gbs;
        // A cache-resident working set streams faster than DRAM; never score against less than DRAM.
        r.ceiling_workload = std::max(ceilings.bandwidth_at(working_set_bytes), ceilings.bandwidth_gbs);
    }
    return r;
}

void score_size(SizeResult& size, Bound bound, double working_set_bytes, const Calibration& ceilings, RooflineMode mode) {
    const Rate rate = measure_rate(bound, size.work, size.seconds, working_set_bytes, ceilings);
    size.achieved = rate.achieved;
    size.unit = rate.unit;
    size.ceiling_static = rate.ceiling_static;
    size.ceiling_workload = rate.ceiling_workload;
    size.ceiling = mode == RooflineMode::static_peak ? rate.ceiling_static : rate.ceiling_workload;
    size.fraction = size.ceiling > 0 ? rate.achieved / size.ceiling : 0;
}

bool beyond_physical(const SizeResult& size) {
    const double physical = std::max(size.ceiling_static, size.ceiling_workload);
    return physical > 0 && size.achieved / physical > kImplausibleFraction;
}

std::string implausible_warning(const SizeResult& s, double working_set_bytes, uint64_t llc_bytes) {
    auto mib = [](double bytes) { return fmt::format("{:.1f} MiB", bytes / (1024.0 * 1024.0)); };
    if (beyond_physical(s))
        return fmt::format("size {}: {:.3g} {} is {:.2f}x what the device reached at this working set, after re-timing "
                           "and re-measuring the ceilings; the figure is implausible (check the task's model)",
                           s.label, s.achieved, s.unit, s.achieved / std::max(s.ceiling_static, s.ceiling_workload));
    return fmt::format("size {}: fraction {:.2f} is above the static ceiling ({:.1f} {}, DRAM): its working set ({}) "
                       "fits in the last-level cache ({}); --roofline workload scores it against the cache",
                       s.label, s.fraction, s.ceiling_static, s.unit, mib(working_set_bytes), mib(double(llc_bytes)));
}

}  // namespace kevo
