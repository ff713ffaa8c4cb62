// Scoring against the roofline: achieved rate of one timed run and its fraction of the device
// ceiling, static (device peak) or workload-aware (bandwidth measured at this working set), and
// the plausibility rules for a fraction above 1.
#pragma once

#include <cstdint>
#include <string>

#include "eval/calibration.hpp"
#include "eval/eval_types.hpp"
#include "task/task.hpp"

namespace kevo {

// A fraction above this is flagged (and re-measured first).
inline constexpr double kImplausibleFraction = 1.05;

struct Rate {
    double achieved = 0;  // GB/s or GFLOP/s
    std::string unit;
    double ceiling_static = 0;
    double ceiling_workload = 0;
};

Rate measure_rate(Bound bound, double work, double seconds, double working_set_bytes, const Calibration& ceilings);

// Fills a timed size's achieved rate, both ceilings and the fraction of the one in force.
void score_size(SizeResult& size, Bound bound, double working_set_bytes, const Calibration& ceilings, RooflineMode mode);

// Faster than the device itself ran at this working set (cache included): the timing or the
// ceilings are wrong, whichever ceiling the score uses.
bool beyond_physical(const SizeResult& size);

// Why a fraction above kImplausibleFraction survived re-timing (and, when it was beyond the device,
// re-measuring the ceilings): the warning the result carries.
std::string implausible_warning(const SizeResult& size, double working_set_bytes, uint64_t llc_bytes);

}  // namespace kevo
