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

// The gate's first examination as the summary holds it, or null.
const nlohmann::json* first_examination(const nlohmann::json& summary) {
    if (!summary.is_object() || !summary.contains("gate") || !summary["gate"].is_array() || summary["gate"].empty())
        return nullptr;
    return &summary["gate"].front();
}

// From the held-out table's row of the search's best when the store has one, else from the summary
// (the same figures: the loop writes both from one examination).
void add_gate_figures(const RunData& run, RunFigures& f) {
    f.outcome = string_field(run.run.summary, "outcome");
    const HeldoutRecord* row = search_best_row(run);
    if (row) {
        f.speedup = row->speedup;
        f.heldout_speedup = row->heldout_speedup;
        f.heldout_fraction = row->fraction;
        f.gate_reason = row->reason;
        if (const HeldoutRecord* seed = seed_row(run)) f.seed_heldout_fraction = seed->fraction;
    } else if (const nlohmann::json* best = first_examination(run.run.summary)) {
        f.speedup = number(*best, "speedup");
        f.heldout_speedup = number(*best, "heldout_speedup");
        f.heldout_fraction = number(*best, "heldout_fraction");
        f.seed_heldout_fraction = number(*best, "seed_heldout_fraction");
        f.gate_reason = string_field(*best, "reason");
    } else {
        return;
    }
    // The worst verdict of the gate's rounds; when it failed on re-evaluation in distribution, the
    // held-out size did not decide it, and the verdict says so.
    const std::string verdict = row ? row->verdict : string_field(*first_examination(run.run.summary), "verdict");
    f.heldout_verdict = f.gate_reason.rfind("recheck-", 0) == 0 ? f.gate_reason : verdict;
}

// The search's score of the gate's first examination over the seed's, for a best the gate could not time.
void add_search_speedup(const RunData& run, RunFigures& f) {
    if (f.speedup || f.gate_reason.rfind("heldout-", 0) != 0 || !run.run.seed_score || *run.run.seed_score <= 0) return;
    const HeldoutRecord* row = search_best_row(run);
    const nlohmann::json* first = first_examination(run.run.summary);
    const auto number_id = first ? number(*first, "candidate_id") : std::nullopt;
    const std::optional<int64_t> candidate =
        row ? std::optional<int64_t>(row->candidate_id)
            : number_id ? std::optional<int64_t>(static_cast<int64_t>(*number_id)) : std::nullopt;
    for (const auto& it : run.iterations)
        if (candidate && it.candidate_id == *candidate && it.score) {
            f.speedup = *it.score / *run.run.seed_score;
            f.speedup_from_search = true;
            return;
        }
}

}  // namespace

const HeldoutRecord* seed_row(const RunData& run) {
    for (const auto& h : run.heldout)
        if (h.role == "seed") return &h;
    return nullptr;
}

const HeldoutRecord* search_best_row(const RunData& run) {
    // The summary names the first examination's kernel; the seed's own row shares the seed's id
    // when the search found nothing better, so the examination's row is the one not in the seed role.
    if (const nlohmann::json* first = first_examination(run.run.summary))
        if (const auto id = number(*first, "candidate_id"))
            for (const auto& h : run.heldout)
                if (h.role != "seed" && h.candidate_id == static_cast<int64_t>(*id)) return &h;
    // Without a summary: the rows are stored in the order examined, the handed-out one ("best")
    // last among the examinations, so a rejected row before it is the first examination.
    for (const auto& h : run.heldout)
        if (h.role.rfind("rejected-", 0) == 0) return &h;
    for (const auto& h : run.heldout)
        if (h.role == "best") return &h;
    return nullptr;
}

std::string left_out_reason(const RunData& run) {
    if (run.run.status != RunStatus::finished) return run_status_name(run.run.status);
    return search_best_row(run) ? std::string() : std::string("not gated");
}

bool is_evaluated_proposal(const IterationRecord& it) { return it.iteration > 0 && it.status == IterationStatus::evaluated; }

RunFigures run_figures(const RunData& run) {
    RunFigures f;
    add_gate_figures(run, f);
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
