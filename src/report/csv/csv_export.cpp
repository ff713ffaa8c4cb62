// See csv_export.hpp. Every stored field a table holds is written as stored (text verbatim,
// numbers exact), so that a reader computes what the HTML report shows from the same values.
#include "report/csv/csv_export.hpp"

#include <filesystem>

#include <fmt/format.h>

#include "eval/eval_types.hpp"
#include "eval/roofline.hpp"
#include "report/csv/csv_table.hpp"
#include "report/run_figures.hpp"
#include "report/study_aggregates.hpp"

namespace kevo {

namespace {

std::string opt_int(const std::optional<int64_t>& v) { return v ? std::to_string(*v) : std::string(); }

CsvTable runs_table(const ReportData& data) {
    CsvTable t({"run_id", "task", "model", "strategy", "proposer", "seed", "backend", "device", "profile", "status",
                "created_at", "updated_at", "iterations_done", "seed_score", "best_score", "outcome", "speedup",
                "speedup_source", "heldout_speedup", "heldout_fraction", "seed_heldout_fraction", "heldout_verdict",
                "gate_reason", "left_out", "tokens", "cost_usd", "study_id", "cell"});
    for (const auto& d : data.runs) {
        const auto& r = d.run;
        const RunFigures f = run_figures(d);
        const std::string speedup_source = !f.speedup ? "" : f.speedup_from_search ? "search" : "gate";
        t.add_row({r.run_id, r.task, d.model, r.strategy, r.proposer, std::to_string(d.seed), r.backend, r.device, r.profile,
                   run_status_name(r.status), r.created_at, r.updated_at, std::to_string(r.iterations_done),
                   csv_number(r.seed_score), csv_number(r.best_score), f.outcome, csv_number(f.speedup),
                   speedup_source, csv_number(f.heldout_speedup), csv_number(f.heldout_fraction),
                   csv_number(f.seed_heldout_fraction), f.heldout_verdict, f.gate_reason, left_out_reason(d),
                   std::to_string(f.tokens),
                   csv_number(f.cost_usd), d.study_id, d.cell});
    }
    return t;
}

CsvTable iterations_table(const ReportData& data) {
    CsvTable t({"run_id", "iteration", "status", "verdict", "score", "score_datasheet", "speedup_vs_seed", "accepted", "dropout",
                "candidate_id", "prompt_tokens", "completion_tokens", "cost_usd", "seconds", "note", "diagnostics",
                "strategy"});
    for (const auto& d : data.runs) {
        const auto seed = d.run.seed_score;
        for (const auto& it : d.iterations) {
            std::optional<double> speedup;
            if (it.score && seed && *seed > 0) speedup = *it.score / *seed;
            std::optional<double> score_datasheet;
            if (it.result.is_object())
                if (auto result = eval_result_from_json(it.result)) score_datasheet = datasheet_score(*result);
            t.add_row({d.run.run_id, std::to_string(it.iteration), iteration_status_name(it.status), it.verdict, csv_number(it.score),
                       csv_number(score_datasheet), csv_number(speedup), csv_bool(it.accepted), csv_bool(it.dropout), opt_int(it.candidate_id),
                       std::to_string(it.prompt_tokens), std::to_string(it.completion_tokens), csv_number(it.cost_usd),
                       csv_number(it.seconds), it.note, it.diagnostics,
                       it.strategy.is_null() ? std::string()
                                                     : it.strategy.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace)});
        }
    }
    return t;
}

Expected<CsvTable> sizes_table(const ReportData& data) {
    CsvTable t({"run_id", "iteration", "label", "heldout", "correct", "error_kind", "error", "tolerance", "timed",
                "seconds", "seconds_min", "seconds_max", "cv", "samples", "noisy", "achieved", "unit", "ceiling",
                "fraction", "ceiling_datasheet", "fraction_datasheet", "work", "implausible"});
    for (const auto& d : data.runs)
        for (const auto& it : d.iterations) {
            if (!it.result.is_object()) continue;
            auto result = eval_result_from_json(it.result);
            if (!result)
                return make_error(fmt::format("run {} iteration {}: its stored result does not read: {}", d.run.run_id,
                                              it.iteration, result.error().message));
            for (const auto& s : result->sizes)
                t.add_row({d.run.run_id, std::to_string(it.iteration), s.label, csv_bool(s.heldout), csv_bool(s.correct),
                           s.error_kind, csv_number(s.error), csv_number(s.tolerance), csv_bool(s.timed),
                           csv_number(s.seconds), csv_number(s.seconds_min), csv_number(s.seconds_max), csv_number(s.cv),
                           std::to_string(s.samples), csv_bool(s.noisy), csv_number(s.achieved), s.unit,
                           csv_number(s.ceiling), csv_number(s.fraction), csv_number(s.ceiling_datasheet),
                           csv_number(s.fraction_datasheet), csv_number(s.work), csv_bool(s.implausible)});
        }
    return t;
}

CsvTable gate_table(const ReportData& data) {
    CsvTable t({"run_id", "role", "iteration", "candidate_id", "verdict", "passed", "reason", "fraction", "seconds",
                "speedup", "speedup_spread", "heldout_speedup", "heldout_speedup_spread"});
    for (const auto& d : data.runs)
        for (const auto& h : d.heldout)
            t.add_row({d.run.run_id, h.role, h.iteration ? std::to_string(*h.iteration) : std::string(),
                       std::to_string(h.candidate_id), h.verdict, csv_bool(h.passed), h.reason, csv_number(h.fraction),
                       csv_number(h.seconds), csv_number(h.speedup), csv_number(h.speedup_spread),
                       csv_number(h.heldout_speedup), csv_number(h.heldout_speedup_spread)});
    return t;
}

// The study aggregates (study_aggregates.hpp), one row per (model, strategy, figure, pack, vector):
// basis "gate" or "search", vector empty for the geometric mean S.
CsvTable aggregates_table(const ReportData& data) {
    CsvTable t({"model", "strategy", "basis", "figure", "pack", "vector", "value", "tasks_scored", "tasks_missing",
                "runs_gated", "runs_untimed", "cells_left_out", "left_out"});
    for (const auto& r : study_aggregates(data)) {
        const std::vector<std::tuple<const char*, const char*, const std::vector<PackAggregate>*>> figures = {
            {"gate", "speedup", &r.speedup},
            {"gate", "heldout_speedup", &r.heldout_speedup},
            {"gate", "heldout_fraction", &r.heldout_fraction},
            {"gate", "seed_heldout_fraction", &r.seed_heldout_fraction},
            {"search", "best_score", &r.search_best},
            {"search", "seed_score", &r.search_seed}};
        auto add = [&](const char* basis, const char* figure, const PackAggregate& a, const std::string& vector,
                       const std::optional<double>& value) {
            t.add_row({r.model, r.strategy, basis, figure, a.pack, vector, csv_number(value), std::to_string(a.scored.size()),
                       std::to_string(a.missing.size()), std::to_string(r.gated), std::to_string(r.untimed),
                       std::to_string(r.left_out.size()), left_out_text(r.left_out)});
        };
        for (const auto& [basis, figure, list] : figures)
            for (const auto& a : *list) {
                add(basis, figure, a, "", a.geomean);
                for (const auto& w : a.weighted) add(basis, figure, a, w.vector, w.value);
            }
    }
    return t;
}

}  // namespace

Expected<std::vector<std::string>> export_csv(const ReportData& data, const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) return make_error(fmt::format("--csv {}: cannot create the folder: {}", dir, ec.message()));
    auto sizes = sizes_table(data);
    if (!sizes) return sizes.error();
    const std::vector<std::pair<std::string, CsvTable>> tables = {
        {"runs.csv", runs_table(data)}, {"iterations.csv", iterations_table(data)},
        {"sizes.csv", std::move(*sizes)}, {"gate.csv", gate_table(data)}, {"aggregates.csv", aggregates_table(data)}};
    std::vector<std::string> paths;
    for (const auto& [name, table] : tables) {
        const std::string path = (std::filesystem::path(dir) / name).string();
        if (auto ok = table.write(path); !ok) return ok.error();
        paths.push_back(path);
    }
    return paths;
}

}  // namespace kevo
