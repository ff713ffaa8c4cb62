// The table of search strategies, by name: `kevo run --strategy NAME`, `kevo sweep` and the run's
// stored settings all name a strategy through it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/expected.hpp"
#include "search/strategies/strategy.hpp"

namespace kevo {

// Every strategy's name, in the order they are listed to users.
std::vector<std::string> strategy_names();
// A one-line description of each, for --help.
std::string strategy_help();
// The strategy `name`, configured; an error naming `name` and listing the accepted ones.
Expected<std::unique_ptr<Strategy>> make_strategy(const std::string& name, const StrategySettings& settings);

// The factories registry.cpp lists, one per strategy file.
std::unique_ptr<Strategy> make_one_plus_one(const StrategySettings& settings);
std::unique_ptr<Strategy> make_islands(const StrategySettings& settings);
std::unique_ptr<Strategy> make_map_elites(const StrategySettings& settings);

}  // namespace kevo
