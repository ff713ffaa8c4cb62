// See inapplicable_options.hpp. The proposers' options come from the one table the study file and
// the report use (study/option_keys), so a new proposer option is covered without a second list.
#include "cli/inapplicable_options.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "study/option_keys.hpp"

namespace kevo::cli {

std::vector<std::string> inapplicable_options(const std::vector<std::string>& given, const std::string& strategy,
                                              const std::string& proposer) {
    std::vector<std::string> out;
    for (const auto& flag : given) {
        if ((flag == "--islands" || flag == "--migration-every") && strategy != "islands")
            out.push_back(fmt::format("{} applies to --strategy islands; this run's strategy is {}, which ignores it", flag,
                                      strategy));
        for (const auto& key : model_keys()) {
            if (key.flag != flag || key.proposers.empty()) continue;
            if (std::find(key.proposers.begin(), key.proposers.end(), proposer) != key.proposers.end()) continue;
            out.push_back(fmt::format("{} applies to --proposer {}; this run's proposer is {}, which ignores it", flag,
                                      fmt::join(key.proposers, "/"), proposer));
        }
    }
    return out;
}

}  // namespace kevo::cli
