// The table of search strategies, by name: `kevo run --strategy NAME`, `kevo sweep` and the run's
// stored settings all name a strategy through it. Each strategy's file adds itself to the table
// (register_strategy, at static initialisation) with its options; the executables link kevo_lib whole, so that no
// strategy's object file is dropped for want of a reference (CMakeLists.txt).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/expected.hpp"
#include "search/options.hpp"
#include "search/strategies/strategy.hpp"

namespace kevo {

// Every strategy's name, in the order they are listed to users.
std::vector<std::string> strategy_names();
// A one-line description of each, for --help.
std::string strategy_help();
// The strategy `name`, configured; an error naming `name` and listing the accepted ones.
Expected<std::unique_ptr<Strategy>> make_strategy(const std::string& name, const StrategySettings& settings);

// One row of the table. `rank` orders the list users see (the default strategy first).
struct StrategyEntry {
    const char* name;
    const char* help;
    int rank;
    std::unique_ptr<Strategy> (*make)(const StrategySettings&);
    // Its own options (search/options.hpp; part and owner are filled in by the table), which
    // StrategySettings::options hands it.
    std::vector<RunOption> options = {};
};
const std::vector<StrategyEntry>& strategy_entries();
// Adds a strategy; returns true, so that a file can register with `const bool registered = ...`.
bool register_strategy(const StrategyEntry& entry);

}  // namespace kevo
