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
