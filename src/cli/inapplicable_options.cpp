// See inapplicable_options.hpp. What an option applies to comes from the one option table
// (search/options.hpp): the strategy or proposer that declared it.
#include "cli/inapplicable_options.hpp"

#include <fmt/format.h>

#include "search/options.hpp"
#include "search/proposers/registry.hpp"

namespace kevo::cli {

std::vector<std::string> inapplicable_options(const std::vector<std::string>& given, const std::string& strategy,
                                              const std::string& proposer) {
    std::vector<std::string> out;
    const ProposerEntry* entry = find_proposer(proposer);
    for (const auto& flag : given) {
        const RunOption* o = find_run_option_by_flag(flag);
        if (!o) continue;
        if (o->part == OptionPart::strategy && o->owner != strategy)
            out.push_back(fmt::format("{} applies to --strategy {}; this run's strategy is {}, which ignores it", flag,
                                      o->owner, strategy));
        if (o->prompt && entry && !entry->reads_prompt)
            out.push_back(fmt::format("{} shapes the prompt, which --proposer {} does not read; it is ignored", flag, proposer));
        if (o->part == OptionPart::proposer && o->owner != proposer)
            out.push_back(fmt::format("{} applies to --proposer {}; this run's proposer is {}, which ignores it", flag,
                                      o->owner, proposer));
    }
    return out;
}

}  // namespace kevo::cli
