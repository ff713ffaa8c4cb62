// `kevo run --from FILE`: the user's kernel checked for correctness before anything is run or
// stored, so that a wrong one ends the command at once (exit 1, like a rejected candidate of kevo
// eval) instead of after a full seed evaluation, leaving a failed run behind.
#pragma once

#include <optional>
#include <string>

#include "core/expected.hpp"
#include "eval/evaluating.hpp"
#include "search/loop.hpp"

namespace kevo::cli {

// nullopt when the --from kernel of `options` is correct at the run's in-distribution sizes; else
// the reason ("--from FILE: the kernel is incorrect: ..."). An error: the check itself could not run.
Expected<std::optional<std::string>> from_kernel_problem(Evaluating& evaluator, const RunOptions& options);

}  // namespace kevo::cli
