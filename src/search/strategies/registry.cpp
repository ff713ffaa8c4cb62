// See registry.hpp.
#include "search/strategies/registry.hpp"

namespace kevo {

std::vector<std::string> strategy_names() { return {"one-plus-one"}; }

}  // namespace kevo
