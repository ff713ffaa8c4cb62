// Noise-aware promotion for the (1+1) strategy: a candidate replaces the incumbent only if it is
// better by more than the measured spread; when the gain is within the spread, both are re-timed
// interleaved and the medians decide.
#pragma once

#include <string>

#include "eval/eval_types.hpp"

namespace kevo {

enum class Promotion { reject, accept, too_close };

struct PromotionDecision {
    Promotion decision = Promotion::reject;
    double gain = 0;    // relative score gain of the candidate over the incumbent
    double spread = 0;  // relative timing spread the gain must exceed
    std::string why;
};

PromotionDecision judge(const EvalResult& candidate, const EvalResult& incumbent);

// The relative uncertainty of one evaluation's median times: about the standard error of the
// median, at the noisiest size.
double timing_spread(const EvalResult& r);

}  // namespace kevo
