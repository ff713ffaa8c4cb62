// Noise-aware promotion: a candidate replaces the incumbent only when its gain exceeds the measured
// spread against the incumbent re-timed beside it. The first evaluation is compared with the
// incumbent's stored one only to reject (not better); a candidate that looks better, by any margin,
// is re-timed interleaved with the incumbent for a few rounds and the gain and its spread are
// computed from those paired samples alone, so that a drift between windows cannot promote it; a
// gain within that spread keeps the incumbent. Sizes the evaluator marked noisy are named in the
// decision text.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "core/expected.hpp"
#include "eval/eval_types.hpp"
#include "search/proposer.hpp"

namespace kevo {

enum class Promotion { reject, accept, too_close };

struct PromotionDecision {
    Promotion decision = Promotion::reject;
    double gain = 0;    // relative score gain of the candidate over the incumbent
    double spread = 0;  // relative spread the gain must exceed
    std::string why;    // names the gain and the spread (and any noisy size)
};

// Interleaved re-timing rounds when the first evaluation is too close.
constexpr int kRetimeRounds = 3;

// The decision on the candidate's first evaluation against the incumbent's stored one.
PromotionDecision judge(const EvalResult& candidate, const EvalResult& incumbent);

// The decision from paired re-timings: round r of `candidate` was measured beside round r of
// `incumbent`. Never too_close: a gain within the spread rejects.
PromotionDecision judge_retimed(const std::vector<EvalResult>& candidate, const std::vector<EvalResult>& incumbent);

// judge, and unless that rejects, `rounds` interleaved re-timings through `evaluate` (the
// in-distribution sizes) and judge_retimed. An Error only when an evaluation could not be made.
using EvaluateAttempt = std::function<Expected<EvalResult>(const Attempt&)>;
Expected<PromotionDecision> decide_promotion(const Attempt& candidate, const Attempt& incumbent,
                                             const EvaluateAttempt& evaluate, int rounds = kRetimeRounds);

// A gain (or loss) estimated from paired rounds, as natural logs of ratios.
struct PairedEstimate {
    double mean_log = 0;    // mean of the rounds' log-ratios
    double spread_log = 0;  // what |mean_log| must exceed to count
};
// `log_ratios[r]` is round r's log-ratio, `sigmas[r]` the standard error of that round's log-ratio
// from within its two evaluations. The spread is the larger of Student's t at 95% times the
// standard error of the mean (between rounds; needs two rounds) and two within-round standard
// errors over sqrt(rounds).
PairedEstimate paired_estimate(const std::vector<double>& log_ratios, const std::vector<double>& sigmas);

// The relative uncertainty of one evaluation's median times: about the standard error of the
// median, at the noisiest size.
double timing_spread(const EvalResult& r);
// The standard error of one size's median time, relative: 1.25 cv / sqrt(samples).
double median_spread(const SizeResult& s);

// "; noisy sizes: candidate 256 (cv 31%)" for every size marked noisy, or empty.
std::string noisy_note(const EvalResult& candidate, const EvalResult& incumbent);

}  // namespace kevo
