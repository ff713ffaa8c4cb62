// What a new calibration changed against the cached one of the same device it replaces: the old and
// new DRAM bandwidth and FP32 figures, their relative difference, the spread of the new passes, and,
// when the difference is beyond that spread, the machine's load (a busy machine is the usual cause).
// `kevo calibrate` reports it, so that a replaced calibration is never replaced silently.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "eval/calibration.hpp"

namespace kevo {

struct FigureChange {
    double before = 0, after = 0;
    double difference = 0;  // after / before - 1
    double spread = 0;      // of the new calibration's passes: best / worst - 1 (0 with fewer than 2)
    bool beyond_spread() const;
};

struct CalibrationChange {
    std::string replaced_measured_at;
    FigureChange bandwidth, fp32;  // DRAM plateau GB/s; FMA GFLOP/s
    std::optional<double> load_1min;  // /proc/loadavg, where readable
    unsigned cores = 0;
    bool beyond_spread() const { return bandwidth.beyond_spread() || fp32.beyond_spread(); }
};

CalibrationChange compare_calibrations(const Calibration& replaced, const Calibration& measured);
// Lines for stderr: the figures and, beyond the spread, that the machine was likely busy.
std::vector<std::string> describe_calibration_change(const CalibrationChange& change);
nlohmann::json to_json(const CalibrationChange& change);

}  // namespace kevo
