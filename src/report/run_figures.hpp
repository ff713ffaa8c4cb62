// The figures the study report and the CSV export derive from one stored run: how the search's
// best fared side by side with the seed (in distribution and held out), what became of its
// candidates, its tokens and cost, the best-so-far curve, and which correct candidates were repairs.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/report_data.hpp"

namespace kevo {

struct RunFigures {
    // The search's best (the gate's first examination), seed time / its time; absent before the gate.
    std::optional<double> speedup, heldout_speedup;
    // Phi at the held-out size, of the search's best and of the seed, from the same gate rounds
    // (0 for a best that failed there); absent before the gate.
    std::optional<double> heldout_fraction, seed_heldout_fraction;
    // A best that failed its held-out check was never timed by the gate (the evaluation stops at the
    // failing check): its in-distribution speed-up is then the search's own, its score over the
    // seed's, and this says so. One that failed in distribution on re-check keeps no figure.
    bool speedup_from_search = false;
    std::string heldout_verdict;  // its worst verdict in the gate's rounds ("ok", "incorrect", ...), or "recheck-<verdict>"
                                  // when it failed in distribution on re-evaluation; empty before the gate
    std::string gate_reason;      // why it failed the gate ("heldout-incorrect", ...); empty when it passed or no gate
    std::string outcome;          // the summary's outcome; empty before the gate
    std::map<std::string, int> candidates_by_verdict;  // evaluated proposals (the seed and a --from kernel are not)
    int tokens = 0;
    double cost_usd = 0;
    // Per iteration 0..last: the best accepted score after it (absent until the seed is scored).
    std::vector<std::optional<double>> best_so_far;
};

RunFigures run_figures(const RunData& run);

// The held-out table's rows of the gate's first examination (the search's best, whatever the gate
// then handed out) and of the seed; null when the run has no such row (not through the gate).
const HeldoutRecord* search_best_row(const RunData& run);
const HeldoutRecord* seed_row(const RunData& run);

// Why a run's figures cannot enter a study's aggregates: "running", "interrupted", "failed" (its
// status), "not gated" (finished without a gate row); empty when they can.
std::string left_out_reason(const RunData& run);

// A correct proposal's history: repaired when the attempt the proposer was shown last (the previous
// evaluated iteration; the loop's parent_id is the incumbent, always correct, so it cannot tell)
// was not correct, first_try otherwise.
enum class RepairKind { first_try, repaired };
struct CorrectCandidate {
    int iteration = 0;
    RepairKind kind = RepairKind::first_try;
    std::optional<double> speedup;  // its score over the seed's (in distribution)
};
std::vector<CorrectCandidate> correct_candidates(const RunData& run);

// Whether an iteration evaluated a proposal (not the seed, not a --from kernel, not a skipped answer).
bool is_evaluated_proposal(const IterationRecord& it);

}  // namespace kevo
