// See promotion.hpp.
#include "search/promotion.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

namespace kevo {

double timing_spread(const EvalResult& r) {
    // The standard error of a median is about 1.25 sigma / sqrt(n); take the worst size.
    double spread = 0;
    for (const auto& s : r.sizes)
        if (s.timed && s.seconds > 0) spread = std::max(spread, 1.25 * s.cv / std::sqrt(std::max(1, s.samples)));
    return spread;
}

PromotionDecision judge(const EvalResult& candidate, const EvalResult& incumbent) {
    PromotionDecision d;
    if (candidate.verdict != Verdict::ok || !candidate.score) {
        d.why = fmt::format("not accepted: {}", verdict_name(candidate.verdict));
        return d;
    }
    const double inc = incumbent.score.value_or(0);
    d.gain = inc > 0 ? *candidate.score / inc - 1 : 1;
    // Two standard errors of the difference of the two medians.
    const double a = timing_spread(candidate), b = timing_spread(incumbent);
    d.spread = 2 * std::sqrt(a * a + b * b);
    if (d.gain <= 0) {
        d.why = fmt::format("not better ({:+.1f}%)", 100 * d.gain);
    } else if (d.gain > d.spread) {
        d.decision = Promotion::accept;
        d.why = fmt::format("better by {:+.1f}% (spread {:.1f}%)", 100 * d.gain, 100 * d.spread);
    } else {
        d.decision = Promotion::too_close;
        d.why = fmt::format("{:+.1f}% is within the spread ({:.1f}%): re-timing both", 100 * d.gain, 100 * d.spread);
    }
    return d;
}

}  // namespace kevo
