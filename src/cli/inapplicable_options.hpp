// The options of a `kevo run` command line that the run will not use: a strategy's options under
// another strategy (--islands with one-plus-one), a proposer's under another proposer (--model with
// tune). kevo run warns about each instead of ignoring it silently.
#pragma once

#include <string>
#include <vector>

namespace kevo::cli {

// One warning per option in `given` (long names, "--islands") that neither `strategy` nor
// `proposer` uses, naming the option, what it applies to and what the run is.
std::vector<std::string> inapplicable_options(const std::vector<std::string>& given, const std::string& strategy,
                                              const std::string& proposer);

}  // namespace kevo::cli
