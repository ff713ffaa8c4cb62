// Packs: the suite's tasks grouped by what they stand for (`sci`: the Metal-Sci suite; `ml`:
// production-shaped ML operators). A task names its pack in its spec; a pack may also exist with
// no task yet when it ships data (packs/<pack>/weights.toml).
#pragma once

#include <string>
#include <vector>

#include "core/expected.hpp"

namespace kevo {

// Every pack: those of the tasks in suite order, then those that only ship files, by name.
std::vector<std::string> pack_names();
// The pack's tasks in suite order (empty for an unknown pack or one with no task yet).
std::vector<std::string> pack_tasks(const std::string& pack);
// The pack of a task of the suite ("" for an unknown task).
std::string task_pack(const std::string& task);
// The pack's tasks; an unknown pack is an error naming `what` (e.g. "--pack") and the packs there are.
Expected<std::vector<std::string>> resolve_pack(const std::string& pack, const std::string& what);

}  // namespace kevo
