// See pack.hpp. Packs are derived from the task registry and the embedded pack files, so adding a
// task (or a pack's data) touches no list here.
#include "pack/pack.hpp"

#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pack/pack_files.hpp"
#include "task/registry.hpp"

namespace kevo {

std::vector<std::string> pack_names() {
    std::vector<std::string> packs;
    const auto add = [&](const std::string& pack) {
        if (std::find(packs.begin(), packs.end(), pack) == packs.end()) packs.push_back(pack);
    };
    for (const auto& name : task_names()) add(task_pack(name));
    for (const auto& pack : packs_with_files()) add(pack);
    return packs;
}

std::vector<std::string> pack_tasks(const std::string& pack) {
    std::vector<std::string> tasks;
    for (const auto& name : task_names())
        if (task_pack(name) == pack) tasks.push_back(name);
    return tasks;
}

std::string task_pack(const std::string& task) {
    auto made = make_task(task);
    return made ? (*made)->spec().pack : std::string();
}

Expected<std::vector<std::string>> resolve_pack(const std::string& pack, const std::string& what) {
    const auto packs = pack_names();
    if (std::find(packs.begin(), packs.end(), pack) == packs.end())
        return make_error(fmt::format("{}: unknown pack '{}'; the packs are: {}", what, pack, fmt::join(packs, ", ")));
    return pack_tasks(pack);
}

}  // namespace kevo
