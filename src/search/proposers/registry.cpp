// See registry.hpp.
#include "search/proposers/registry.hpp"

#include <algorithm>
#include <cassert>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kevo {
namespace {

// Built on first use, so that registrations from other files' static initialisers find it ready.
std::vector<ProposerEntry>& table() {
    static std::vector<ProposerEntry> entries;
    return entries;
}

std::vector<std::string> spending_proposers() {
    std::vector<std::string> names;
    for (const ProposerEntry& e : table())
        if (e.spends_cost) names.emplace_back(e.name);
    return names;
}

}  // namespace

bool register_proposer(ProposerEntry entry) {
    auto& entries = table();
    assert(!find_proposer(entry.name) && "two proposers registered under one name");
    entries.push_back(std::move(entry));
    std::stable_sort(entries.begin(), entries.end(),
                     [](const ProposerEntry& a, const ProposerEntry& b) { return a.rank < b.rank; });
    return true;
}

const std::vector<ProposerEntry>& proposer_entries() { return table(); }

const ProposerEntry* find_proposer(const std::string& name) {
    for (const ProposerEntry& e : table())
        if (name == e.name) return &e;
    return nullptr;
}

std::vector<std::string> proposer_names() {
    std::vector<std::string> names;
    for (const ProposerEntry& e : table()) names.emplace_back(e.name);
    return names;
}

std::string proposer_help() {
    std::string out;
    for (const ProposerEntry& e : table()) out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", e.name, e.help);
    return out;
}

Expected<std::unique_ptr<Proposer>> make_proposer(const std::string& name, const ProposerContext& context) {
    const ProposerEntry* e = find_proposer(name);
    if (!e) return make_error(fmt::format("unknown proposer '{}'; expected one of: {}", name, fmt::join(proposer_names(), ", ")));
    if (context.max_cost_usd > 0 && !e->spends_cost)
        return make_error(fmt::format("--max-cost {:g}: the {} proposer spends nothing that kevo can count; a cost cap "
                                      "applies to --proposer {}", context.max_cost_usd, name,
                                      fmt::join(spending_proposers(), "/")));
    assert(context.language && "a proposer is made for a run, in the run's language");
    return e->make(context);
}

}  // namespace kevo
