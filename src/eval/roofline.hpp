// Scoring against the roofline: achieved rate of one timed run and its fraction of the device
// ceiling, static (device peak) or workload-aware (bandwidth measured at this working set), and
// the plausibility rules for a fraction above 1. A task whose Case declares FLOPs per compute class
// is scored on the multi-class roofline instead: fraction = speed-of-light time / measured time.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

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

// The speed-of-light time of one run: max(memory, CUDA cores, tensor cores), where
//   memory       = Q / B
//   CUDA cores   = W_fp32 / P_fp32
//   tensor cores = sum over the tensor classes d of W_d / P_d
// The tensor classes share one unit per SM (an MMA of one type at a time), so their times add, as
// in Atrex-Bench's roofline; the CUDA cores are another pipe that runs beside them (FlashAttention-3
// overlaps its softmax with wgmma), so that term is a max, keeping the bound a true lower bound.
struct SpeedOfLight {
    double seconds = 0;
    double memory_seconds = 0, cuda_core_seconds = 0, tensor_seconds = 0;
    Limiter limiter = Limiter::memory;
    // Classes with work but no ceiling (absent): left out of the bound, which is then lower and the
    // fraction conservative; the result says so.
    std::vector<ComputeClass> missing;
};
SpeedOfLight speed_of_light(const std::map<ComputeClass, double>& flops, double bytes, double bandwidth_gbs,
                            const Calibration& ceilings);

// The speed-of-light time of one run of `c` against the static ceilings: the multi-class bound
// when the case declares flops_by_class, else its work at the bandwidth or FP32 ceiling by `bound`.
// 0 when the ceiling is unknown. The same for every candidate, so it decides how a size is timed.
double sol_seconds_of(Bound bound, const Case& c, const Calibration& ceilings);

// Fills a timed size's achieved rate, both ceilings and the fraction of the one in force: by the
// task's Bound, or on the multi-class roofline when the case declares flops_by_class (then also
// sol_seconds and limiter; achieved and ceiling are in the limiter's unit, ceiling = achieved /
// fraction, so that the two stay comparable).
// Also fills the datasheet basis (fraction_datasheet, ceiling_datasheet) when the calibration
// carries the device's datasheet, and tensor_class / tensor_flops for a size of one tensor class.
void score_size(SizeResult& size, Bound bound, const Case& c, const Calibration& ceilings, RooflineMode mode);

// The ceilings of the datasheet basis: the vendor's bandwidth, FP32 and dense tensor figures.
Calibration datasheet_ceilings(const Datasheet& sheet);
// A result's score and held-out fraction on the datasheet basis: the geometric mean of the
// in-distribution sizes' fraction_datasheet; absent when a size has none (no datasheet entry).
std::optional<double> datasheet_score(const EvalResult& r);
std::optional<double> datasheet_heldout_fraction(const EvalResult& r);

// What a multi-class size's result must say about its ceilings: classes absent (left out of the
// bound) or taken from the datasheet. Empty when all were measured or the case is not multi-class.
std::optional<std::string> roofline_note(const SizeResult& size, const Case& c, const Calibration& ceilings);

// Faster than the device itself ran at this working set (cache included): the timing or the
// ceilings are wrong, whichever ceiling the score uses.
bool beyond_physical(const SizeResult& size);

// Why a fraction above kImplausibleFraction survived re-timing (and, when it was beyond the device,
// re-measuring the ceilings): the warning the result carries.
std::string implausible_warning(const SizeResult& size, double working_set_bytes, uint64_t llc_bytes);

}  // namespace kevo
