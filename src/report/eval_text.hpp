// Terminal rendering of one evaluation: verdict, per-size table, resources, stage times.
#pragma once

#include <string>

#include "eval/eval_types.hpp"

namespace kevo {

std::string render_eval_text(const EvalResult& r);

}  // namespace kevo
