// Terminal rendering of one evaluation: verdict, per-size table, resources, stage times.
#pragma once

#include <string>

#include "eval/eval_types.hpp"

namespace kevo {

std::string render_eval_text(const EvalResult& r);

// "ceilings: 4329.2 GB/s, 64734 GFLOP/s, measured on this device 2026-12-01T16:01:41Z; datasheet ...":
// what a score was divided by, where it came from and when.
std::string ceilings_text(const CeilingsUsed& c);

// A duration for humans: "12.3 us", "4.567 ms", "1.234 s"; "-" when not positive.
std::string seconds_text(double s);

}  // namespace kevo
