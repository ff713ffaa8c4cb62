// Repeating a rate measurement (a bandwidth, a FLOP rate) until it settles. Interference (another
// process, a hypervisor taking a core, a clock stepping down) only ever makes a device look slower,
// so the figure is the best pass, and it has settled once another pass confirms it: passes are
// taken until the two highest agree within a relative tolerance, or a bound is reached. On the
// 2-core CPU machine an FMA calibration's passes went 124.9, 95.9, 66.2, 67.5 GFLOP/s: "two in a row
// agree" settled on the slowed 67.5. A measurement that never settles is reported as such (with
// its spread) instead of passing for a number that means something.
#pragma once

#include <functional>
#include <vector>

#include "core/expected.hpp"

namespace kevo {

struct SettleRules {
    int max_passes = 5;      // at least 2
    double agreement = 0.05;  // |a - b| / max(a, b) of two consecutive passes
};

struct Settled {
    double value = 0;            // the highest pass (another pass agreed with it when `agreed`)
    bool agreed = false;
    double spread = 0;           // (max - min) / median over every pass
    std::vector<double> passes;
};

// `pass` returns one positive measurement (or an error, which ends the settling).
Expected<Settled> settle(const std::function<Expected<double>()>& pass, const SettleRules& rules);

// The relative spread of a set of measurements: (max - min) / median; 0 for fewer than two.
double relative_spread(std::vector<double> values);

}  // namespace kevo
