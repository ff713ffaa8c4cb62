// Weights against the pack they weigh (see weights.hpp): the match of a file's tasks with the
// pack's, and which file each pack's aggregates use.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pack/pack.hpp"
#include "pack/pack_files.hpp"
#include "pack/weights.hpp"

namespace kevo {
namespace {

bool contains(const std::vector<std::string>& list, const std::string& item) {
    return std::find(list.begin(), list.end(), item) != list.end();
}

// The shipped file of `pack`, parsed; nullopt when the pack ships none.
Expected<std::optional<PackWeights>> shipped_weights(const std::string& pack) {
    const auto text = pack_file(pack, "weights.toml");
    if (text.empty()) return std::optional<PackWeights>();
    auto weights = parse_weights(std::string(text), "packs/" + pack + "/weights.toml");
    if (!weights) return weights.error();
    return std::optional<PackWeights>(std::move(*weights));
}

}  // namespace

std::vector<std::string> weights_mismatches(const PackWeights& weights, const std::string& pack,
                                            const std::vector<std::string>& pack_tasks,
                                            const std::vector<std::string>& pending) {
    std::vector<std::string> problems;
    if (weights.pack != pack)
        problems.push_back(fmt::format("{}: pack = \"{}\", but it is used for pack {}", weights.path, weights.pack, pack));
    for (const auto& v : weights.vectors) {
        for (const auto& w : v.weights)
            if (!contains(pack_tasks, w.task) && !contains(pending, w.task))
                problems.push_back(fmt::format("{}:{}: vectors.{}.weights.{}: pack {} has no task {}; its tasks are: {}",
                                               weights.path, w.line, v.name, w.task, pack, w.task,
                                               pack_tasks.empty() ? "(none yet)" : fmt::format("{}", fmt::join(pack_tasks, ", "))));
        for (const auto& task : pack_tasks)
            if (!v.find(task))
                problems.push_back(fmt::format("{}:{}: vectors.{} leaves out task {} of pack {}: give it a weight (0 with "
                                               "a reason in zero_because if the source has none)",
                                               weights.path, v.line, v.name, task, pack));
    }
    return problems;
}

const PackWeights* PackWeightsSet::find(const std::string& pack) const {
    const auto it = by_pack.find(pack);
    return it == by_pack.end() ? nullptr : &it->second;
}

Expected<PackWeightsSet> load_pack_weights(const std::string& given_file) {
    PackWeightsSet set;
    for (const auto& pack : pack_names()) {
        auto shipped = shipped_weights(pack);
        if (!shipped) return shipped.error();  // a build whose shipped data is broken (the tests refuse it)
        if (!*shipped) continue;
        const auto tasks = pack_tasks(pack);
        // Tasks the shipped weights name that this build lacks are pending, not wrong: the pack grows.
        std::vector<std::string> pending;
        for (const auto& v : (*shipped)->vectors)
            for (const auto& w : v.weights)
                if (!contains(tasks, w.task)) pending.push_back(w.task);
        const auto problems = weights_mismatches(**shipped, pack, tasks, pending);
        if (!problems.empty()) set.problems[pack] = problems;
        else set.by_pack[pack] = std::move(**shipped);
    }
    if (given_file.empty()) return set;
    auto given = read_weights_file(given_file);
    if (!given) return make_error("--weights: " + given.error().message);
    auto tasks = resolve_pack(given->pack, fmt::format("--weights {}: pack", given_file));
    if (!tasks) return tasks.error();
    const auto problems = weights_mismatches(*given, given->pack, *tasks);
    if (!problems.empty()) return make_error(fmt::format("--weights: {}", fmt::join(problems, "\n")));
    set.problems.erase(given->pack);
    set.given_pack = given->pack;
    set.by_pack[given->pack] = std::move(*given);
    return set;
}

}  // namespace kevo
