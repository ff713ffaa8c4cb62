// `kevo tasks`: the suite with regime, kernels, roofline model and sizes per profile (`--profile`
// picks the profile whose sizes are listed; columns are as wide as their longest entry).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "report/text_table.hpp"
#include "task/registry.hpp"

namespace kevo::cli {

namespace {

nlohmann::json task_json(const TaskSpec& spec, const std::string& only_profile) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : spec.kernels) kernels.push_back(k.name);
    nlohmann::json profiles = nlohmann::json::object();
    for (const auto& [profile, sizes] : spec.profiles) {
        if (!only_profile.empty() && profile != only_profile) continue;
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

int run(bool json, const std::string& profile) {
    const std::string shown = profile.empty() ? "paper" : profile;
    nlohmann::json doc = {{"tasks", nlohmann::json::array()}};
    TextTable table({{"task"}, {"regime"}, {"bound"}, {"model"}, {shown + " sizes (held-out in [])"}});
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        const TaskSpec& spec = (*task)->spec();
        doc["tasks"].push_back(task_json(spec, profile));
        std::vector<std::string> labels;
        if (spec.profiles.count(shown))
            for (const auto& s : spec.profiles.at(shown)) labels.push_back(s.heldout ? "[" + s.label + "]" : s.label);
        table.add_row({spec.name, spec.regime, spec.bound == Bound::bandwidth ? "bandwidth" : "compute", spec.model,
                       fmt::format("{}", fmt::join(labels, " "))});
    }
    if (json) print_json(doc);
    else say(false, table.render());
    return kExitOk;
}

}  // namespace

void setup_tasks(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("tasks", "the suite: name, regime, sizes, held-out, model");
    auto json = std::make_shared<bool>(false);
    auto profile = std::make_shared<std::string>();
    add_json_option(*cmd, *json);
    cmd->add_option("--profile", *profile, "list this profile's sizes: small, paper (default) or large; with --json only its sizes")
        ->check(CLI::IsMember({"small", "paper", "large"}));
    cmd->callback([&exit_code, json, profile] { exit_code = run(*json, *profile); });
}

}  // namespace kevo::cli
