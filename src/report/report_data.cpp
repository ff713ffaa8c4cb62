// See report_data.hpp.
#include "report/report_data.hpp"

#include <algorithm>
#include <set>
#include <tuple>

#include <fmt/format.h>

namespace kevo {

namespace {

Expected<RunData> load_run_data(Store& store, RunRecord run) {
    RunData d;
    auto iterations = store.load_iterations(run.run_id);
    if (!iterations) return iterations.error();
    auto heldout = store.load_heldout(run.run_id);
    if (!heldout) return heldout.error();
    d.iterations = std::move(*iterations);
    d.heldout = std::move(*heldout);
    d.model = run_model(run);
    if (const auto seed = run.settings.find("seed"); seed != run.settings.end() && seed->is_number_integer())
        d.seed = seed->get<int64_t>();
    const auto& tag = study_tag(run.settings);
    if (tag.is_object()) {
        d.study_id = string_field(tag, "study_id");
        d.cell = string_field(tag, "cell");
    }
    d.run = std::move(run);
    return d;
}

// The study's runs: those its cells name, and those tagged with its id.
Expected<std::vector<RunRecord>> study_runs(Store& store, const std::string& study_id,
                                            const std::vector<StudyCellRecord>& cells) {
    std::set<std::string> ids;
    for (const auto& c : cells)
        if (c.run_id) ids.insert(*c.run_id);
    auto all = store.list_runs();
    if (!all) return all.error();
    std::vector<RunRecord> runs;
    for (auto& r : *all) {
        const auto& tag = study_tag(r.settings);
        const bool tagged = string_field(tag, "study_id") == study_id;
        if (tagged || ids.count(r.run_id)) runs.push_back(std::move(r));
    }
    return runs;
}

Expected<std::vector<RunRecord>> scope_runs(Store& store, ReportData& data) {
    switch (data.scope.kind) {
        case ReportScope::Kind::run: {
            auto run = store.load_run(data.scope.id);
            if (!run) return run.error();
            return std::vector<RunRecord>{std::move(*run)};
        }
        case ReportScope::Kind::all: return store.list_runs();
        case ReportScope::Kind::study: break;
    }
    if (data.scope.id == "latest") {
        auto studies = store.list_studies();
        if (!studies) return studies.error();
        if (studies->empty()) return make_error(fmt::format("--study latest: there is no study in {}", store.path()));
        data.scope.id = studies->front().study_id;
    }
    auto study = store.load_study(data.scope.id);
    if (!study) return study.error();
    data.study = std::move(*study);
    auto cells = store.load_study_cells(data.scope.id);
    if (!cells) return cells.error();
    data.cells = std::move(*cells);
    return study_runs(store, data.scope.id, data.cells);
}

}  // namespace

const nlohmann::json& study_tag(const nlohmann::json& settings) {
    static const nlohmann::json kNone;
    if (!settings.is_object()) return kNone;
    if (auto it = settings.find("study"); it != settings.end() && it->is_object()) return *it;
    if (auto cli = settings.find("settings"); cli != settings.end() && cli->is_object())
        if (auto it = cli->find("study"); it != cli->end() && it->is_object()) return *it;
    return kNone;
}

std::string string_field(const nlohmann::json& doc, const char* key) {
    if (!doc.is_object()) return {};
    const auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string run_model(const RunRecord& run) {
    if (std::string model = string_field(study_tag(run.settings), "model"); !model.empty()) return model;
    if (run.proposer == "llm" && run.settings.is_object()) {
        const auto cli = run.settings.find("settings");
        if (cli != run.settings.end())
            if (std::string model = string_field(*cli, "model"); !model.empty()) return model;
    }
    return run.proposer;
}

Expected<ReportData> collect_report_data(Store& store, const ReportScope& scope) {
    ReportData data;
    data.scope = scope;
    data.db_path = store.path();
    auto runs = scope_runs(store, data);
    if (!runs) return runs.error();
    // Oldest first, whatever order the store lists them in: the same store gives the same report.
    std::sort(runs->begin(), runs->end(), [](const RunRecord& a, const RunRecord& b) {
        return std::tie(a.created_at, a.run_id) < std::tie(b.created_at, b.run_id);
    });
    for (auto& r : *runs) {
        auto d = load_run_data(store, std::move(r));
        if (!d) return d.error();
        data.runs.push_back(std::move(*d));
    }
    return data;
}

}  // namespace kevo
