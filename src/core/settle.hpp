// Repeating a measurement until it settles: passes are taken until two in a row agree within a
// relative tolerance, or a bound is reached. A measurement that never settles is reported as
// such (with its spread) instead of passing for a number that means something.
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
    double value = 0;            // the last pass (it agreed with the one before it when `agreed`)
    bool agreed = false;
    double spread = 0;           // (max - min) / median over every pass
    std::vector<double> passes;
};

// `pass` returns one positive measurement (or an error, which ends the settling).
Expected<Settled> settle(const std::function<Expected<double>()>& pass, const SettleRules& rules);

// The relative spread of a set of measurements: (max - min) / median; 0 for fewer than two.
double relative_spread(std::vector<double> values);

}  // namespace kevo
