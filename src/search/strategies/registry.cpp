// See registry.hpp.
#include "search/strategies/registry.hpp"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kevo {
namespace {

// Built on first use, so that registrations from other files' static initialisers find it ready.
std::vector<StrategyEntry>& table() {
    static std::vector<StrategyEntry> entries;
    return entries;
}

}  // namespace

bool register_strategy(const StrategyEntry& entry) {
    auto& entries = table();
    assert(std::none_of(entries.begin(), entries.end(),
                        [&](const StrategyEntry& e) { return std::string_view(e.name) == entry.name; }) &&
           "two strategies registered under one name");
    entries.push_back(entry);
    std::stable_sort(entries.begin(), entries.end(), [](const StrategyEntry& a, const StrategyEntry& b) { return a.rank < b.rank; });
    return true;
}

const std::vector<StrategyEntry>& strategy_entries() { return table(); }

std::vector<std::string> strategy_names() {
    std::vector<std::string> names;
    for (const StrategyEntry& e : table()) names.emplace_back(e.name);
    return names;
}

std::string strategy_help() {
    std::string out;
    for (const StrategyEntry& e : table()) out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", e.name, e.help);
    return out;
}

Expected<std::unique_ptr<Strategy>> make_strategy(const std::string& name, const StrategySettings& settings) {
    for (const StrategyEntry& e : table())
        if (name == e.name) return e.make(settings);
    return make_error(fmt::format("unknown strategy '{}'; expected one of: {}", name, fmt::join(strategy_names(), ", ")));
}

}  // namespace kevo
