// Terminal rendering of one evaluation: verdict, per-size table, resources, stage times.
#pragma once

#include <string>

#include "eval/eval_types.hpp"

namespace kevo {

std::string render_eval_text(const EvalResult& r);

// A duration for humans: "12.3 us", "4.567 ms", "1.234 s"; "-" when not positive.
std::string seconds_text(double s);

}  // namespace kevo
