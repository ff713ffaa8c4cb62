// `kevo tasks`: the suite with regime, kernels, roofline model and sizes per profile.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "task/registry.hpp"

namespace kevo::cli {

namespace {

nlohmann::json task_json(const TaskSpec& spec) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : spec.kernels) kernels.push_back(k.name);
    nlohmann::json profiles = nlohmann::json::object();
    for (const auto& [profile, sizes] : spec.profiles) {
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : sizes) {
            nlohmann::json params = nlohmann::json::object();
            for (const auto& [name, value] : s.params) params[name] = value;
            list.push_back({{"label", s.label}, {"heldout", s.heldout}, {"params", params}});
        }
        profiles[profile] = {{"sizes", list}};
    }
    return {{"name", spec.name}, {"regime", spec.regime}, {"kernels", kernels},
            {"bound", spec.bound == Bound::bandwidth ? "bandwidth" : "compute"}, {"model", spec.model},
            {"tolerance", spec.tolerance}, {"profiles", profiles}};
}

int run(bool json) {
    nlohmann::json doc = {{"tasks", nlohmann::json::array()}};
    std::string text = fmt::format("{:<10} {:<20} {:<10} {:<34} {}\n", "task", "regime", "bound", "model", "paper sizes (held-out in [])");
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        const TaskSpec& spec = (*task)->spec();
        doc["tasks"].push_back(task_json(spec));
        std::vector<std::string> labels;
        if (spec.profiles.count("paper"))
            for (const auto& s : spec.profiles.at("paper")) labels.push_back(s.heldout ? "[" + s.label + "]" : s.label);
        text += fmt::format("{:<10} {:<20} {:<10} {:<34} {}\n", spec.name, spec.regime,
                            spec.bound == Bound::bandwidth ? "bandwidth" : "compute", spec.model, fmt::join(labels, " "));
    }
    if (json) print_json(doc);
    else say(false, text);
    return kExitOk;
}

}  // namespace

void setup_tasks(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("tasks", "the suite: name, regime, sizes, held-out, model");
    auto json = std::make_shared<bool>(false);
    add_json_option(*cmd, *json);
    cmd->callback([&exit_code, json] { exit_code = run(*json); });
}

}  // namespace kevo::cli
