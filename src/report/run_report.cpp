// See run_report.hpp.
#include "report/run_report.hpp"

#include <fmt/format.h>

#include "core/json.hpp"
#include "eval/roofline.hpp"
#include "report/eval_text.hpp"
#include "report/run_pack.hpp"
#include "core/text_table.hpp"

namespace kevo {

namespace {

// A stored EvalResult's score and held-out fraction on the datasheet basis (absent without one).
std::optional<double> stored_datasheet_score(const nlohmann::json& result) {
    if (!result.is_object()) return std::nullopt;
    auto r = eval_result_from_json(result);
    return r ? datasheet_score(*r) : std::nullopt;
}
std::optional<double> stored_datasheet_heldout(const nlohmann::json& result) {
    if (!result.is_object()) return std::nullopt;
    auto r = eval_result_from_json(result);
    return r ? datasheet_heldout_fraction(*r) : std::nullopt;
}
nlohmann::json opt(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
nlohmann::json opt(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }
std::string num(const nlohmann::json& v, const char* format = "{:.4f}") {
    return v.is_number() ? fmt::format(fmt::runtime(format), v.get<double>()) : std::string("-");
}

nlohmann::json run_json(const RunRecord& r) {
    return {{"run_id", r.run_id}, {"task", r.task}, {"backend", r.backend}, {"device", r.device}, {"profile", r.profile},
            {"proposer", r.proposer}, {"strategy", r.strategy}, {"status", run_status_name(r.status)}, {"created_at", r.created_at},
            {"updated_at", r.updated_at}, {"iterations_done", r.iterations_done}, {"seed_score", opt(r.seed_score)},
            {"best_score", opt(r.best_score)}, {"best_candidate_id", opt(r.best_candidate_id)}, {"settings", r.settings},
            {"summary", r.summary}};
}

// The segments of a run's settings: each --resume that changed how the proposer is reached (its
// base URL, model, ...) adds one, {"from_iteration", "at", "changed": {key: {"from", "to"}}}.
nlohmann::json settings_segments(const nlohmann::json& settings) {
    if (!settings.is_object()) return nlohmann::json::array();
    const auto cli = settings.find("settings");
    if (cli == settings.end() || !cli->is_object()) return nlohmann::json::array();
    const auto segments = cli->find("segments");
    return segments != cli->end() && segments->is_array() ? *segments : nlohmann::json::array();
}

std::string render_segments_text(const nlohmann::json& segments) {
    std::string out;
    for (const auto& seg : segments) {
        std::string changes;
        const nlohmann::json changed = seg.value("changed", nlohmann::json::object());
        for (const auto& [key, change] : changed.items())
            changes += fmt::format("{}{} {} -> {}", changes.empty() ? "" : ", ", key, change.value("from", nlohmann::json()).dump(),
                                   change.value("to", nlohmann::json()).dump());
        out += fmt::format("resumed from iteration {} ({}) with another connection: {}\n", seg.value("from_iteration", 0),
                           seg.value("at", std::string("-")), changes);
    }
    return out;
}

// A string field of `doc`, "-" when it is absent or not a string.
std::string string_or(const nlohmann::json& doc, const char* key) {
    const auto it = doc.find(key);
    return it != doc.end() && it->is_string() ? it->get<std::string>() : std::string("-");
}

// The gate's table: one row per kernel it examined (the seed's side, the one handed out, the rejected).
std::string render_gate_text(const nlohmann::json& rows) {
    std::string out = fmt::format("\ngate\n{:<14} {:>5}  {:<14} {:<6} {:>18} {:>18} {:>9}  {}\n", "role", "iter", "verdict",
                                  "passed", "speed-up", "held-out speed-up", "Phi", "reason");
    auto speed = [](const nlohmann::json& v, const nlohmann::json& spread) {
        if (!v.is_number()) return std::string("-");
        return spread.is_number() ? fmt::format("{:.3f}x ±{:.1f}%", v.get<double>(), 100 * spread.get<double>())
                                  : fmt::format("{:.3f}x", v.get<double>());
    };
    for (const auto& h : rows)
        out += fmt::format("{:<14} {:>5}  {:<14} {:<6} {:>18} {:>18} {:>9}  {}\n", h["role"].get<std::string>(),
                           h["iteration"].is_number() ? std::to_string(h["iteration"].get<int>()) : "-",
                           h["verdict"].get<std::string>(), h["passed"].get<bool>() ? "yes" : "NO",
                           speed(h["speedup"], h["speedup_spread"]), speed(h["heldout_speedup"], h["heldout_speedup_spread"]),
                           num(h["fraction"]), h["reason"].get<std::string>());
    return out;
}
}  // namespace

Expected<nlohmann::json> run_report_json(Store& store, const std::string& run_id) {
    auto run = store.load_run(run_id);
    if (!run) return run.error();
    nlohmann::json doc = run_json(*run);
    doc["segments"] = settings_segments(run->settings);
    auto iterations = store.load_iterations(run_id);
    if (!iterations) return iterations.error();
    doc["iterations"] = nlohmann::json::array();
    int tokens = 0;
    double cost = 0;
    for (const auto& it : *iterations) {
        tokens += it.prompt_tokens + it.completion_tokens;
        cost += it.cost_usd;
        doc["iterations"].push_back({{"iteration", it.iteration}, {"status", iteration_status_name(it.status)},
                                     {"verdict", it.verdict.empty() ? nlohmann::json(nullptr) : nlohmann::json(it.verdict)},
                                     {"score", opt(it.score)}, {"score_datasheet", opt(stored_datasheet_score(it.result))},
                                     {"diagnostics", it.diagnostics}, {"accepted", it.accepted},
                                     {"candidate_id", opt(it.candidate_id)}, {"note", it.note}, {"seconds", it.seconds},
                                     {"prompt_tokens", it.prompt_tokens}, {"completion_tokens", it.completion_tokens},
                                     {"cost_usd", it.cost_usd}, {"dropout", it.dropout}, {"result", it.result},
                                     {"failure", it.failure.empty() ? nlohmann::json(nullptr) : nlohmann::json(it.failure)},
                                     {"http_status", it.http_status}});
    }
    doc["tokens"] = tokens;
    doc["cost_usd"] = cost;
    auto heldout = store.load_heldout(run_id);
    if (!heldout) return heldout.error();
    doc["heldout"] = nlohmann::json::array();
    for (const auto& h : *heldout)
        doc["heldout"].push_back({{"role", h.role}, {"candidate_id", h.candidate_id}, {"iteration", h.iteration},
                                  {"verdict", h.verdict}, {"fraction", opt(h.fraction)},
                                  {"fraction_datasheet", opt(stored_datasheet_heldout(h.result))}, {"seconds", h.seconds},
                                  {"passed", h.passed}, {"reason", h.reason}, {"speedup", opt(h.speedup)},
                                  {"speedup_spread", opt(h.speedup_spread)}, {"heldout_speedup", opt(h.heldout_speedup)},
                                  {"heldout_speedup_spread", opt(h.heldout_speedup_spread)}, {"rounds", h.rounds}});
    return doc;
}

Expected<nlohmann::json> all_runs_json(Store& store) {
    auto runs = store.list_runs();
    if (!runs) return runs.error();
    nlohmann::json doc = {{"runs", nlohmann::json::array()}};
    for (const auto& r : *runs) doc["runs"].push_back(run_json(r));
    return doc;
}

std::string render_run_text(const nlohmann::json& d) {
    std::string out = fmt::format("run {}  {}  {} on {} ({}), profile {}, proposer {}, strategy {}, {}\n",
                                  d["run_id"].get<std::string>(), d["task"].get<std::string>(), d["status"].get<std::string>(),
                                  d["device"].get<std::string>(), d["backend"].get<std::string>(),
                                  d["profile"].get<std::string>(), d["proposer"].get<std::string>(),
                                  d["strategy"].get<std::string>(), d["created_at"].get<std::string>());
    if (d.contains("segments")) out += render_segments_text(d["segments"]);
    // The score is the candidate's own evaluation in the search (in-distribution sizes); the gate's
    // side-by-side figures are in the gate table below. Notes are whole: the decision comes last.
    // Each score on both bases: the ceilings in force, and the datasheet's (docs/evaluation.md).
    out += fmt::format("\n{:>5}  {:<14} {:<14} {:>8} {:>11}  {:<3}  {}\n", "iter", "status", "verdict", "search S",
                       "datasheet S", "acc", "note / diagnostics");
    for (const auto& it : d["iterations"]) {
        std::string note = it["note"].get<std::string>();
        if (it["verdict"].is_string() && it["verdict"] != "ok") note = it["diagnostics"].get<std::string>();
        for (auto& c : note)
            if (c == '\n') c = ' ';
        out += fmt::format("{:>5}  {:<14} {:<14} {:>8} {:>11}  {:<3}  {}\n", it["iteration"].get<int>(),
                           it["status"].get<std::string>(), it["verdict"].is_string() ? it["verdict"].get<std::string>() : "-",
                           num(it["score"]), num(it.value("score_datasheet", nlohmann::json())),
                           it["accepted"].get<bool>() ? "*" : "", note);
    }
    if (!d["heldout"].empty()) out += render_gate_text(d["heldout"]);
    const auto& s = d["summary"];
    if (s.is_object() && s.contains("interruption") && s["interruption"].is_string())
        out += fmt::format("\ninterrupted before the gate: {}\nresume with {}\n", string_or(s, "stop_reason"),
                           string_or(s, "resume"));
    else if (s.is_object() && !s.empty()) {
        out += fmt::format("\noutcome {}{}\n", s.value("outcome", "-"),
                           s.contains("recommended") ? fmt::format(" (handed out: iteration {})", s["recommended"].get<int>()) : "");
        out += fmt::format("seed {}  best {}  speed-up {}  held-out fraction {} (seed {})  held-out speed-up {}\nbest kernel: {}\n",
                           num(s["seed_score"]), num(s["best_score"]), num(s["speedup"], "{:.3f}x"),
                           num(s["heldout_fraction"]), num(s["heldout_seed_fraction"]), num(s["heldout_speedup"], "{:.3f}x"),
                           s.value("best_path", ""));
        if (s.contains("rejected") && s["rejected"].is_object())
            out += fmt::format("rejected kernel: {} ({}: {})\n", s["rejected"].value("path", ""),
                               s["rejected"].value("reason", ""), s["rejected"].value("detail", ""));
    }
    if (d["tokens"].get<int>() > 0) out += fmt::format("tokens {}, cost ${:.4f}\n", d["tokens"].get<int>(), d["cost_usd"].get<double>());
    if (d.contains("pack")) out += render_run_pack_text(d["pack"]);
    return out;
}

Expected<nlohmann::json> iteration_report_json(Store& store, const std::string& run_id, int iteration) {
    auto run = store.load_run(run_id);
    if (!run) return run.error();
    auto iterations = store.load_iterations(run_id);
    if (!iterations) return iterations.error();
    for (const auto& it : *iterations) {
        if (it.iteration != iteration) continue;
        nlohmann::json doc = {{"run_id", run_id}, {"task", run->task}, {"iteration", it.iteration}, {"status", iteration_status_name(it.status)},
                              {"verdict", it.verdict}, {"score", opt(it.score)}, {"accepted", it.accepted},
                              {"dropout", it.dropout}, {"note", it.note}, {"diagnostics", it.diagnostics},
                              {"prompt_tokens", it.prompt_tokens}, {"completion_tokens", it.completion_tokens},
                              {"cost_usd", it.cost_usd}, {"seconds", it.seconds}, {"prompt", it.prompt},
                              {"answer", it.answer}, {"result", it.result}, {"source", nullptr},
                              {"knowledge", it.knowledge}, {"gain", opt(it.gain)}, {"gain_spread", opt(it.gain_spread)}};
        if (it.candidate_id) {
            auto candidate = store.load_candidate(*it.candidate_id);
            if (!candidate) return candidate.error();
            doc["source"] = candidate->source;
            doc["defines"] = candidate->defines;
        }
        return doc;
    }
    return make_error(fmt::format("run {} has no iteration {} (it has {} recorded, 0..{})", run_id, iteration,
                                  iterations->size(), iterations->empty() ? 0 : iterations->back().iteration));
}

std::string render_iteration_text(const nlohmann::json& d) {
    auto section = [](const char* title, const nlohmann::json& text) {
        const std::string body = text.is_string() ? text.get<std::string>() : std::string();
        return fmt::format("\n--- {} ---\n{}{}", title, body.empty() ? "(none)" : body,
                           !body.empty() && body.back() == '\n' ? "" : "\n");
    };
    std::string out = fmt::format("run {}  {}  iteration {}: {}{}{}, search S {}{}\n", d["run_id"].get<std::string>(),
                                  d["task"].get<std::string>(), d["iteration"].get<int>(), d["status"].get<std::string>(),
                                  d["verdict"].get<std::string>().empty() ? "" : " " + d["verdict"].get<std::string>(),
                                  d["accepted"].get<bool>() ? " (accepted)" : "", num(d["score"]),
                                  d["dropout"].get<bool>() ? "; began with an optimisation dropout" : "");
    out += fmt::format("note: {}\ndiagnostics: {}\ntokens {} + {}, cost ${:.4f}, {:.1f} s\n", d["note"].get<std::string>(),
                       d["diagnostics"].get<std::string>(), d["prompt_tokens"].get<int>(), d["completion_tokens"].get<int>(),
                       d["cost_usd"].get<double>(), d["seconds"].get<double>());
    if (d["gain"].is_number())
        out += fmt::format("promotion rule: gain {:+.1f}% over the kernel it was judged against, spread {:.1f}%{}\n",
                           100 * d["gain"].get<double>(), 100 * d["gain_spread"].get<double>(),
                           d["accepted"].get<bool>() ? " (both re-timed side by side)" : "");
    const auto& notes = d["knowledge"];
    out += "knowledge notes in the prompt: ";
    for (size_t i = 0; i < notes.size(); ++i) out += (i ? ", " : "") + notes[i].get<std::string>();
    out += notes.empty() ? "none\n" : "\n";
    // The candidate's result as kevo eval shows it: verdict, the per-size table, resources.
    if (d["result"].is_object() && !d["result"].empty()) {
        if (auto result = eval_result_from_json(d["result"])) out += "\n" + render_eval_text(*result);
        else out += fmt::format("\n(the stored result cannot be read: {})\n", result.error().message);
    }
    out += section("prompt", d["prompt"]);
    out += section("answer", d["answer"]);
    out += section("candidate source", d["source"]);
    return out;
}

std::string render_runs_text(const nlohmann::json& doc) {
    // The outcome is the summary's (set once the gate ran); an interrupted or failed run has none.
    TextTable table({{"run"}, {"task"}, {"status"}, {"outcome"}, {"proposer"}, {"strategy"}, {"iters", TextTable::Align::right},
                     {"seed", TextTable::Align::right}, {"best", TextTable::Align::right}, {"created"}});
    for (const auto& r : doc["runs"]) {
        const auto& summary = r["summary"];
        const std::string outcome = summary.is_object() ? summary.value("outcome", std::string("-")) : std::string("-");
        table.add_row({r["run_id"].get<std::string>(), r["task"].get<std::string>(), r["status"].get<std::string>(), outcome,
                       r["proposer"].get<std::string>(), r["strategy"].get<std::string>(),
                       std::to_string(r["iterations_done"].get<int>()), num(r["seed_score"]), num(r["best_score"]),
                       r["created_at"].get<std::string>()});
    }
    return table.render();
}

}  // namespace kevo
