// The gate at the end of a run. It takes candidates in preference order (the (1+1) loop passes its
// incumbents, newest first; a population strategy can pass its top-k) and examines them one by one,
// each side by side with the seed, interleaved, for a few rounds on every size, held-out included,
// until one passes. A kernel passes when it is correct at every size in every round, is faster
// than the seed beyond the spread in distribution (its speed-up, seed time / its time, above 1 by
// more than the spread) and not slower beyond the spread at the held-out size. A kernel that is
// correct and not slower, but not faster beyond the noise, is `within-noise`: the gate stops there
// and hands out the seed (older incumbents are no faster), keeping that kernel beside it. The seed
// is the last resort. The first candidate is what the search found; when it fails for a fault or a
// loss, the outcome says so and the passing one (or the seed) is handed out.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "search/promotion.hpp"
#include "search/search_state.hpp"

namespace kevo {

enum class RunOutcome {
    improved,          // the search's best passed the gate: faster than the seed beyond the spread
    no_gain,           // nothing beat the seed beyond the noise; the seed is handed out
    best_failed_gate,  // the search's best failed the gate; an earlier incumbent (or the seed) is handed out
    interrupted,       // stopped by Ctrl-C / SIGTERM before the gate: the best so far is on disk, resumable
};
const char* outcome_name(RunOutcome outcome);
void to_json(nlohmann::json& j, RunOutcome outcome);
void from_json(const nlohmann::json& j, RunOutcome& outcome);

enum class GateFailure {
    none,
    heldout_fault,     // wrong (or crashed, timed out) at the held-out size
    recheck_fault,     // wrong at an in-distribution size when evaluated again
    slower_than_seed,  // in distribution, slower than the seed by more than the spread
    slower_heldout,    // at the held-out size, slower than the seed by more than the spread
    within_noise,      // correct and not slower, but not faster than the seed beyond the spread
};

// One round of an examination: both sides' verdicts and median times by size label.
struct GateRound {
    Verdict seed_verdict = Verdict::ok, verdict = Verdict::ok;
    std::map<std::string, double> seed_seconds, seconds;
};
KEVO_JSON_FIELDS(GateRound, seed_verdict, verdict, seed_seconds, seconds)

// What the gate found about one candidate. Speed-ups are seed time / its time: the geometric mean
// over the sizes of the ratio of the two median times over the rounds (the lower median with an
// even count, so that it is one measured sample). The held-out fraction comes from the same
// samples as the held-out speed-up, so their ratios agree.
struct GateExamination {
    int iteration = 0;
    int64_t candidate_id = 0;
    bool passed = false;
    GateFailure failure = GateFailure::none;
    std::string reason;  // "heldout-incorrect", "recheck-timeout", "slower-than-seed", "slower-heldout", "within-noise";
                         // empty when it passed
    std::string detail;  // one line with the figures: what failed where, or what passed
    Verdict verdict = Verdict::ok;
    std::optional<double> speedup, speedup_spread;                  // in distribution
    std::optional<double> heldout_speedup, heldout_speedup_spread;  // at the held-out size
    std::optional<double> heldout_fraction, seed_heldout_fraction;  // Phi at the held-out size
    double heldout_seconds = 0, seed_heldout_seconds = 0;           // median times at the held-out size
    // Multi-class roofline (the ML pack): the term that bounds the held-out size and its
    // speed-of-light time, so heldout_fraction = heldout_sol_seconds / heldout_seconds; "none" and 0
    // for a task scored by a single bound.
    Limiter heldout_limiter = Limiter::none;
    double heldout_sol_seconds = 0;
    std::vector<GateRound> rounds;
    EvalResult result, seed_result;  // the rounds that gave the held-out medians (or the failing one)
};
KEVO_JSON_FIELDS(GateExamination, iteration, candidate_id, passed, reason, detail, verdict, speedup, speedup_spread,
                 heldout_speedup, heldout_speedup_spread, heldout_fraction, seed_heldout_fraction, heldout_seconds,
                 seed_heldout_seconds, heldout_limiter, heldout_sol_seconds, rounds)

struct GateReport {
    RunOutcome outcome = RunOutcome::no_gain;
    std::vector<GateExamination> examined;  // in the order examined; the last is the one handed out
    const GateExamination& recommended() const { return examined.back(); }
    // The search's best when it failed (best_failed_gate), else null.
    const GateExamination* rejected() const;
    // The kernel that was correct and not slower but within the noise of the seed (the gate stopped
    // there and handed out the seed), else null.
    const GateExamination* within_noise() const;
};

struct GateOptions {
    int rounds = 3;
    std::function<void(const std::string&)> progress;  // one line per examination; may be empty
};

// Examines `preference` (best first; an entry that is the seed ends the list) side by side with
// `seed`; `evaluate_all` evaluates a kernel on every size, held-out included. An Error only when
// an evaluation could not be made.
Expected<GateReport> run_gate(const StoredAttempt& seed, const std::vector<StoredAttempt>& preference,
                              const EvaluateAttempt& evaluate_all, const GateOptions& options);

// The examination of `candidate` from paired rounds: seed_rounds[r] was measured beside
// candidate_rounds[r]. The candidate's rounds may end early, at the one it failed.
GateExamination examine(const StoredAttempt& candidate, const std::vector<EvalResult>& seed_rounds,
                        const std::vector<EvalResult>& candidate_rounds);
// The seed's own examination, from its rounds alone (speed-ups are 1 by definition).
GateExamination examine_seed(const StoredAttempt& seed, const std::vector<EvalResult>& seed_rounds);

}  // namespace kevo
