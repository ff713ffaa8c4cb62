// `kevo tasks`: the suite with pack, regime, bound, roofline model and sizes per profile
// (`--profile` picks the profile whose sizes are listed; the text fits 100 columns: a row per task,
// its sizes and model wrapped on indented lines below it; --json adds category and kernels).
// `--pack P` lists one pack, with its weights (docs/packs.md) checked against its tasks.
#include <algorithm>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "pack/pack.hpp"
#include "pack/weights.hpp"
#include "pack/weights_text.hpp"
#include "core/text_table.hpp"
#include "task/registry.hpp"

namespace kevo::cli {

namespace {

struct TasksOptions {
    std::string profile, pack, weights;
    bool json = false;
};

nlohmann::json task_json(const TaskSpec& spec, const std::string& only_profile, const PackWeightsSet& weights) {
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : spec.kernels) kernels.push_back(k.name);
    nlohmann::json profiles = nlohmann::json::object();
    for (const auto& [profile, sizes] : spec.profiles) {
        if (!only_profile.empty() && profile != only_profile) continue;
        nlohmann::json list = nlohmann::json::array();
        for (const auto& s : sizes) {
            nlohmann::json params = nlohmann::json::object();
            for (const auto& [name, value] : s.params) params[name] = value;
            nlohmann::json size = {{"label", s.label}, {"heldout", s.heldout}, {"params", params}};
            if (profile == kTraceProfile) size.update({{"weight", s.weight}, {"source", s.source}});
            list.push_back(std::move(size));
        }
        profiles[profile] = {{"sizes", list}};
    }
    nlohmann::json task_weights = nlohmann::json::object();  // vector -> this task's weight
    if (const auto* w = weights.find(spec.pack))
        for (const auto& v : w->vectors)
            if (const auto* found = v.find(spec.name)) task_weights[v.name] = found->weight;
    return {{"name", spec.name}, {"pack", spec.pack}, {"category", spec.category}, {"regime", spec.regime},
            {"kernels", kernels}, {"bound", spec.bound == Bound::bandwidth ? "bandwidth" : "compute"},
            {"model", spec.model}, {"tolerance", spec.tolerance}, {"weights", task_weights}, {"profiles", profiles}};
}

// Each listed pack: its tasks, its weights (null when it ships none) and what of them does not match.
nlohmann::json packs_json(const std::vector<std::string>& packs, const PackWeightsSet& weights) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& pack : packs) {
        const auto* w = weights.find(pack);
        const auto problems = weights.problems.count(pack) ? weights.problems.at(pack) : std::vector<std::string>{};
        out.push_back({{"name", pack}, {"tasks", pack_tasks(pack)}, {"weights", w ? nlohmann::json(*w) : nlohmann::json(nullptr)},
                       {"weights_problems", problems}});
    }
    return out;
}

constexpr size_t kTextWidth = 100;

// The table's header and rows, each row followed by its detail lines.
std::string interleave_rows(const std::string& table, const std::vector<std::string>& details) {
    std::string out;
    size_t row = 0, at = 0;
    while (at < table.size()) {
        const size_t end = table.find('\n', at);
        out += table.substr(at, end - at + 1);
        if (at > 0 && row < details.size()) out += details[row++];
        at = end + 1;
    }
    return out;
}

int run(const TasksOptions& o) {
    std::vector<std::string> packs = pack_names();
    if (!o.pack.empty()) {
        if (auto known = resolve_pack(o.pack, "--pack"); !known) return fail(known.error().message);
        packs = {o.pack};
    }
    auto weights = load_pack_weights(o.weights);
    if (!weights) return fail(weights.error().message);
    const std::string shown = o.profile.empty() ? "paper" : o.profile;
    nlohmann::json doc = {{"tasks", nlohmann::json::array()}, {"packs", packs_json(packs, *weights)}};
    // One row per task (name, pack, regime, bound), then its sizes and its model on indented lines
    // wrapped to the terminal's usual 100 columns: the model text alone can be 190 characters.
    TextTable table({{"task"}, {"pack"}, {"regime"}, {"bound"}});
    std::vector<std::string> details;
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        const TaskSpec& spec = (*task)->spec();
        if (std::find(packs.begin(), packs.end(), spec.pack) == packs.end()) continue;
        doc["tasks"].push_back(task_json(spec, o.profile, *weights));
        std::vector<std::string> labels;
        if (spec.profiles.count(shown))
            for (const auto& s : spec.profiles.at(shown)) {
                std::string label = s.heldout ? "[" + s.label + "]" : s.label;
                if (shown == kTraceProfile) label += fmt::format("*{:g}", s.weight);
                labels.push_back(std::move(label));
            }
        if (!spec.profiles.count(shown)) labels.push_back("none (this task has no " + shown + " profile)");
        table.add_row({spec.name, spec.pack, spec.regime, spec.bound == Bound::bandwidth ? "bandwidth" : "compute"});
        details.push_back(wrap_words(fmt::format("{}", fmt::join(labels, " ")), kTextWidth, "  " + shown + " sizes: ", "    ") +
                          wrap_words(spec.model, kTextWidth, "  model: ", "    "));
    }
    if (o.json) {
        print_json(doc);
        return kExitOk;
    }
    std::string text = doc["tasks"].empty() ? fmt::format("pack {} has no task in this build yet\n", o.pack)
                                            : interleave_rows(table.render(), details) + "(held-out sizes in [])\n";
    if (shown == kTraceProfile && !doc["tasks"].empty())
        text += "(trace: label*w, w the shape's production call count, 1 where the anchor gives none; S over the profile "
                "is the w-weighted geometric mean; tasks/<task>/trace.toml names each shape's source)\n";
    // The weights of the pack listed, or of the file given.
    const std::string weighed = o.pack.empty() ? weights->given_pack : o.pack;
    if (!weighed.empty()) {
        if (const auto* w = weights->find(weighed)) text += "\n" + render_weights_text(*w, pack_tasks(weighed));
        else if (!weights->problems.count(weighed)) text += fmt::format("\npack {} carries no weights\n", weighed);
    }
    for (const auto& pack : packs)
        if (weights->problems.count(pack))
            text += fmt::format("\nwarning: the weights of pack {} do not match its tasks (no S_agg is given for it):\n  {}\n",
                                pack, fmt::join(weights->problems.at(pack), "\n  "));
    say(false, text);
    return kExitOk;
}

}  // namespace

void setup_tasks(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("tasks", "the suite: name, pack, category, regime, sizes, held-out, model");
    auto o = std::make_shared<TasksOptions>();
    add_json_option(*cmd, o->json);
    cmd->add_option("--profile", o->profile, "list this profile's sizes: small, paper (default), large or trace (the ML pack's production shapes with their call-count weights); with --json only its sizes")
        ->check(CLI::IsMember(kProfileNames));
    cmd->add_option("--pack", o->pack, "list this pack's tasks (sci, ml) and its weights");
    cmd->add_option("--weights", o->weights, "check this weights file (docs/packs.md) against its pack and show it in place "
                                             "of the pack's shipped one")
        ->check(CLI::ExistingFile);
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
