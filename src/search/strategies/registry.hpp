// The search strategies kevo knows, by name (placeholder: the strategies' own registry replaces it).
#pragma once

#include <string>
#include <vector>

namespace kevo {

std::vector<std::string> strategy_names();

}  // namespace kevo
