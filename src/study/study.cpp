// See study.hpp.
#include "study/study.hpp"

#include <cassert>

#include <fmt/format.h>

#include "search/options.hpp"
#include "search/proposers/registry.hpp"

namespace kevo {
namespace {

std::string replace_all(std::string text, std::string_view from, std::string_view to) {
    for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
        text.replace(at, from.size(), to);
    return text;
}

// The options in `given` (a study's [run] or a model's keys, search/options.hpp) as kevo run's
// words, "{task}" substituted in paths; a strategy's options only for its own cells, the keys
// that are no flag (api_key_env) not at all.
void add_options(std::vector<std::string>& args, const nlohmann::json& given, const StudyCell& cell) {
    for (const auto& [key, value] : given.items()) {
        const RunOption* o = find_run_option(key);
        assert(o && "the parser accepts only known keys");
        if (o->part == OptionPart::strategy && o->owner != cell.strategy) continue;
        const nlohmann::json v = o->type == OptionType::path ? nlohmann::json(replace_all(value.get<std::string>(), "{task}", cell.task)) : value;
        const auto words = option_words(*o, v);
        args.insert(args.end(), words.begin(), words.end());
    }
}

void differences(const nlohmann::json& stored, const nlohmann::json& now, const std::string& path,
                 std::vector<std::string>& out) {
    if (stored.is_object() && now.is_object()) {
        for (const auto& [key, value] : stored.items()) {
            const std::string at = path.empty() ? key : path + "." + key;
            differences(value, now.contains(key) ? now.at(key) : nlohmann::json(), at, out);
        }
        for (const auto& [key, value] : now.items())
            if (!stored.contains(key)) differences(nlohmann::json(), value, path.empty() ? key : path + "." + key, out);
        return;
    }
    if (stored != now)
        out.push_back(fmt::format("{}: {} stored, {} in the file", path, stored.is_null() ? "none" : stored.dump(),
                                  now.is_null() ? "none" : now.dump()));
}

// Models are compared by name: their order in the file does not matter, their settings do.
nlohmann::json comparable(const nlohmann::json& study) {
    nlohmann::json out = study;
    out.erase("concurrency");
    nlohmann::json models = nlohmann::json::object();
    for (const auto& m : study.value("models", nlohmann::json::array())) models[m.value("name", "")] = m;
    out["models"] = models;
    return out;
}

}  // namespace

std::vector<StudyCell> study_cells(const Study& study) {
    std::vector<StudyCell> cells;
    for (const auto& task : study.tasks)
        for (const auto& model : study.models)
            for (const auto& strategy : study.strategies)
                for (const int64_t seed : study.seeds)
                    cells.push_back({fmt::format("{}/{}/{}/{}", task, model.name, strategy, seed), task, model.name,
                                     strategy, seed});
    return cells;
}

const StudyModel& cell_model(const Study& study, const StudyCell& cell) {
    for (const auto& m : study.models)
        if (m.name == cell.model) return m;
    assert(false && "a cell's model is one of the study's");
    return study.models.front();
}

std::string replay_folder(const StudyModel& model, const std::string& task) {
    if (model.proposer != "replay") return {};
    return replace_all(model.options.value("replay", std::string()), "{task}", task);
}

std::string start_kernel(const Study& study, const std::string& task) {
    return replace_all(study.run_options.value("from", std::string()), "{task}", task);
}

std::vector<std::string> run_arguments(const Study& study, const StudyCell& cell, const CellTarget& target) {
    const StudyModel& model = cell_model(study, cell);
    std::vector<std::string> args = {cell.task, "--run-id", target.run_id, "--db", target.db, "--out", target.out_dir,
                                     "--backend", study.backend,
                                     "--device", std::to_string(target.device >= 0 ? target.device : study.device),
                                     "--proposer", model.proposer, "--strategy", cell.strategy,
                                     "--seed", std::to_string(cell.seed),
                                     "--iterations", std::to_string(study.budget.iterations)};
    if (!study.profile.empty()) args.insert(args.end(), {"--profile", study.profile});
    if (study.budget.max_tokens > 0) args.insert(args.end(), {"--max-tokens-total", std::to_string(study.budget.max_tokens)});
    if (study.budget.max_wall_s > 0) args.insert(args.end(), {"--max-wall", fmt::format("{}", study.budget.max_wall_s)});
    // Only an LLM's spending is counted; the other proposers spend nothing, so their cap is moot.
    if (const ProposerEntry* p = find_proposer(model.proposer); study.budget.max_cost_usd > 0 && p && p->spends_cost)
        args.insert(args.end(), {"--max-cost", fmt::format("{}", study.budget.max_cost_usd)});
    add_options(args, study.run_options, cell);
    add_options(args, model.options, cell);
    if (!target.ceilings_file.empty()) args.insert(args.end(), {"--ceilings", target.ceilings_file});
    nlohmann::json tag = {{"study_id", target.study_id}, {"cell", cell.key}, {"model", model.name}};
    if (!target.replaces.empty()) tag.update({{"replaces", target.replaces}, {"replaced_because", target.replaced_because}});
    // The study's pinned ceilings file of the run's device model, which the reproduce line names.
    if (!target.ceilings_file.empty()) tag["ceilings_file"] = target.ceilings_file;
    args.insert(args.end(), {"--study", tag.dump()});
    return args;
}

std::vector<std::string> study_differences(const nlohmann::json& stored, const Study& now) {
    std::vector<std::string> out;
    differences(comparable(stored), comparable(nlohmann::json(now)), "", out);
    return out;
}

}  // namespace kevo
