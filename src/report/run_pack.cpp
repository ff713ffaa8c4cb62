// See run_pack.hpp.
#include "report/run_pack.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "pack/pack.hpp"

namespace kevo {

nlohmann::json run_pack_json(const std::string& task, const std::optional<double>& best_score, const PackWeightsSet& weights) {
    const std::string pack = task_pack(task);
    nlohmann::json out = {{"name", pack}, {"weights", nlohmann::json::array()}, {"note", ""}};
    const auto* w = weights.find(pack);
    if (!w) {
        out["note"] = weights.problems.count(pack) ? "its weights do not match its tasks (kevo tasks --pack " + pack + ")"
                                                   : "the pack carries no weights";
        return out;
    }
    for (const auto& v : w->vectors) {
        const auto* found = v.find(task);
        const double weight = found ? found->weight : 0;
        out["weights"].push_back({{"vector", v.name}, {"weight", weight},
                                  {"contribution", best_score ? nlohmann::json(weight * *best_score) : nlohmann::json(nullptr)}});
    }
    out["note"] = "one run has no S_agg of its own: the pack's S_agg sums these contributions w_i S_i over its tasks "
                  "(kevo bench, the study report)";
    return out;
}

std::string render_run_pack_text(const nlohmann::json& pack) {
    if (!pack.is_object() || pack.value("name", "").empty()) return {};
    std::vector<std::string> parts;
    for (const auto& w : pack["weights"])
        parts.push_back(fmt::format("{} weight {:.4f}, w*S {}", w["vector"].get<std::string>(), w["weight"].get<double>(),
                                    w["contribution"].is_number() ? fmt::format("{:.4f}", w["contribution"].get<double>()) : "-"));
    return fmt::format("pack {}{}{}{}\n", pack["name"].get<std::string>(), parts.empty() ? "" : ": ",
                       fmt::format("{}", fmt::join(parts, "; ")), " (" + pack.value("note", "") + ")");
}

}  // namespace kevo
