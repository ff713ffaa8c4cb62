// A fraction of a ceiling as kevo prints it beside a run's figures: four decimals, and above
// kImplausibleFraction the same `implausible` mark `kevo eval` and `kevo bench` give (such a figure
// is not a fact about the kernel: the ceiling did not bound it, e.g. a working set in cache).
#pragma once

#include <optional>
#include <string>

#include <fmt/format.h>

#include "eval/roofline.hpp"

namespace kevo {

inline std::string fraction_text(const std::optional<double>& fraction) {
    if (!fraction) return "-";
    if (*fraction <= kImplausibleFraction) return fmt::format("{:.4f}", *fraction);
    return fmt::format("{:.4f} (implausible: above {} of its ceiling)", *fraction, kImplausibleFraction);
}

}  // namespace kevo
