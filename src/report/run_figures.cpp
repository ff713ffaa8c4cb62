// See run_figures.hpp.
#include "report/run_figures.hpp"

namespace kevo {

namespace {

std::optional<double> number(const nlohmann::json& doc, const char* key) {
    if (!doc.is_object()) return std::nullopt;
    const auto it = doc.find(key);
    return it != doc.end() && it->is_number() ? std::optional<double>(it->get<double>()) : std::nullopt;
}

bool evaluated(const IterationRecord& it) { return it.status == IterationStatus::evaluated || it.status == IterationStatus::from; }

void add_gate_figures(const nlohmann::json& summary, RunFigures& f) {
    f.outcome = string_field(summary, "outcome");
    if (!summary.is_object() || !summary.contains("gate") || !summary["gate"].is_array() || summary["gate"].empty()) return;
    const auto& best = summary["gate"].front();
    f.speedup = number(best, "speedup");
    f.heldout_speedup = number(best, "heldout_speedup");
    f.gate_reason = string_field(best, "reason");
    // The worst verdict of the gate's rounds; when it failed on re-evaluation in distribution, the
    // held-out size did not decide it, and the verdict says so.
    f.heldout_verdict = f.gate_reason.rfind("recheck-", 0) == 0 ? f.gate_reason : string_field(best, "verdict");
}

// The search's score of the gate's first examination over the seed's, for a best the gate could not time.
void add_search_speedup(const RunData& run, RunFigures& f) {
    if (f.speedup || f.gate_reason.rfind("heldout-", 0) != 0 || !run.run.seed_score || *run.run.seed_score <= 0) return;
    const auto candidate = number(run.run.summary["gate"].front(), "candidate_id");
    for (const auto& it : run.iterations)
        if (candidate && it.candidate_id == static_cast<int64_t>(*candidate) && it.score) {
            f.speedup = *it.score / *run.run.seed_score;
            f.speedup_from_search = true;
            return;
        }
}

}  // namespace

bool is_evaluated_proposal(const IterationRecord& it) { return it.iteration > 0 && it.status == IterationStatus::evaluated; }

RunFigures run_figures(const RunData& run) {
    RunFigures f;
    add_gate_figures(run.run.summary, f);
    std::optional<double> best;
    for (const auto& it : run.iterations) {
        f.tokens += it.prompt_tokens + it.completion_tokens;
        f.cost_usd += it.cost_usd;
        if (is_evaluated_proposal(it)) ++f.candidates_by_verdict[it.verdict];
        // The best accepted so far: a population strategy accepts into an island or an archive
        // cell candidates that score below another island's or cell's best.
        if (it.accepted && it.score && (!best || *it.score > *best)) best = it.score;
        if (it.iteration >= 0) {
            if (f.best_so_far.size() <= static_cast<size_t>(it.iteration)) f.best_so_far.resize(it.iteration + 1, best);
            f.best_so_far[it.iteration] = best;
        }
    }
    add_search_speedup(run, f);
    return f;
}

std::vector<CorrectCandidate> correct_candidates(const RunData& run) {
    std::vector<CorrectCandidate> out;
    const IterationRecord* previous = nullptr;
    for (const auto& it : run.iterations) {
        if (!evaluated(it)) continue;
        if (is_evaluated_proposal(it) && it.verdict == "ok") {
            CorrectCandidate c;
            c.iteration = it.iteration;
            c.kind = previous && previous->verdict != "ok" ? RepairKind::repaired : RepairKind::first_try;
            if (it.score && run.run.seed_score && *run.run.seed_score > 0) c.speedup = *it.score / *run.run.seed_score;
            out.push_back(c);
        }
        previous = &it;
    }
    return out;
}

}  // namespace kevo
