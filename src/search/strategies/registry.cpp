// See registry.hpp. The table is written out here, one line per strategy, rather than filled by
// static initialisers in each strategy's file: kevo_lib is a static library, and a linker drops an
// object file that nothing refers to, registration and all.
#include "search/strategies/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kevo {
namespace {

struct Entry {
    const char* name;
    const char* help;
    std::unique_ptr<Strategy> (*make)(const StrategySettings&);
};

constexpr Entry kStrategies[] = {
    {"one-plus-one", "one incumbent; a candidate replaces it when its gain exceeds the noise", make_one_plus_one},
    {"islands", "--islands K populations, each with its own incumbent and dropout; the best migrates along a ring "
                "every --migration-every proposals", make_islands},
    {"map-elites", "an archive of the best kernel per measured behaviour (size profile x work per thread); parents "
                   "drawn from rarely chosen cells", make_map_elites},
};

}  // namespace

std::vector<std::string> strategy_names() {
    std::vector<std::string> names;
    for (const Entry& e : kStrategies) names.emplace_back(e.name);
    return names;
}

std::string strategy_help() {
    std::string out;
    for (const Entry& e : kStrategies) out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", e.name, e.help);
    return out;
}

Expected<std::unique_ptr<Strategy>> make_strategy(const std::string& name, const StrategySettings& settings) {
    for (const Entry& e : kStrategies)
        if (name == e.name) return e.make(settings);
    return make_error(fmt::format("unknown strategy '{}'; expected one of: {}", name, fmt::join(strategy_names(), ", ")));
}

}  // namespace kevo
