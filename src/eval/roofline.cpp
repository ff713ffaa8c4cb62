// See roofline.hpp.
#include "eval/roofline.hpp"

#include <algorithm>

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

}  // namespace kevo
