// Scoring against the roofline: achieved rate of one timed run and its fraction of the device
// ceiling, static (device peak) or workload-aware (bandwidth measured at this working set).
#pragma once

#include <string>

#include "eval/calibration.hpp"
#include "task/task.hpp"

namespace kevo {

struct Rate {
    double achieved = 0;  // GB/s or GFLOP/s
    std::string unit;
    double ceiling_static = 0;
    double ceiling_workload = 0;
};

Rate measure_rate(Bound bound, double work, double seconds, double working_set_bytes, const Calibration& ceilings);

}  // namespace kevo
