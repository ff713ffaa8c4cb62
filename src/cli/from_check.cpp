// See from_check.hpp.
#include "cli/from_check.hpp"

#include <fmt/format.h>

namespace kevo::cli {

Expected<std::optional<std::string>> from_kernel_problem(Evaluating& evaluator, const RunOptions& options) {
    EvalRequest request;
    request.task = options.task;
    request.profile = options.profile;
    request.source = options.from_source;
    request.source_name = options.from_file;
    request.language = options.language;
    request.sizes = SizeSelection::in;
    request.timeout_s = options.timeout_s;
    request.seed = options.seed;
    request.check_only = true;  // correctness is what is asked here; the run times it as iteration 1
    auto result = evaluator.evaluate(request);
    if (!result) return result.error();
    if (result->verdict == Verdict::ok) return std::optional<std::string>();
    return std::optional<std::string>(fmt::format("--from {}: the kernel is {}: {}; nothing was run or stored", options.from_file,
                                                  verdict_name(result->verdict), result->diagnostics));
}

}  // namespace kevo::cli
