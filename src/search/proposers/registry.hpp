// The table of proposers, by name: `kevo run --proposer NAME`, a study's [[models]] proposer and
// the stored settings all name a proposer through it. Each proposer's file adds itself to the table
// (register_proposer, at static initialisation) with its options (search/options.hpp) and its
// factory, so that a new proposer is one file; the executables link kevo_lib whole (CMakeLists.txt).
#pragma once

#include <memory>
#include <set>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"
#include "search/options.hpp"
#include "search/proposer.hpp"

namespace kevo {

// What a proposer is built from: the run's option values by name (its own among them, defaults
// filled in) and the run's cost cap.
struct ProposerContext {
    const nlohmann::json& values;
    double max_cost_usd = 0;
    Language language = {};  // the run's candidates' language (the tuner reads its directives in it)
};

// One row of the table. `rank` orders the list users see (the default proposer first).
struct ProposerEntry {
    const char* name;
    const char* help;
    int rank;
    std::vector<RunOption> options = {};  // part and owner are filled in by the table
    // The proposer, or an error naming the option that is missing or wrong ("--proposer cmd needs --command").
    Expected<std::unique_ptr<Proposer>> (*make)(const ProposerContext& context);
    bool spends_cost = false;        // its spending is counted in USD, so a --max-cost applies to it
    // Rules between its options on the values in force, given the flags named on the command line
    // (llm: --max-completion-tokens takes the place of --max-tokens); null: none.
    Expected<void> (*settle)(nlohmann::json& values, const std::set<std::string>& given) = nullptr;
    bool reads_prompt = false;       // it reads kevo's prompt (search/prompt.hpp), so the prompt's options apply
};
// Adds a proposer; returns true, so that a file can register with `const bool registered = ...`.
bool register_proposer(ProposerEntry entry);

const std::vector<ProposerEntry>& proposer_entries();
const ProposerEntry* find_proposer(const std::string& name);
// Every proposer's name, in the order they are listed to users.
std::vector<std::string> proposer_names();
// "tune (built-in), llm, cmd or replay"-like help of --proposer: each name with its description.
std::string proposer_help();
// The proposer `name`, built; an error naming `name` and listing the registered ones.
Expected<std::unique_ptr<Proposer>> make_proposer(const std::string& name, const ProposerContext& context);

}  // namespace kevo
