// See promotion.hpp. The rules, with gains and spreads relative (log-ratio) figures:
// - first evaluation: gain = candidate score / incumbent score - 1; spread = two standard errors
//   of the difference of the two medians at the noisiest size. gain <= 0 rejects; gain > spread
//   says "looks better", anything between is too close. Only the re-timed rounds can accept.
// - re-timed: round r gives the paired log-ratio l_r = ln(candidate score / incumbent score).
//   The gain is exp(mean l) - 1 and its spread that of paired_estimate. Only mean l > spread
//   accepts. The gate (gate.cpp) judges a loss against the seed with the same estimate.
#include "search/promotion.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace kevo {
namespace {

// Two-sided 95% quantile of Student's t with `dof` degrees of freedom.
double student_t95(int dof) {
    static constexpr double kTable[] = {12.71, 4.30, 3.18, 2.78, 2.57, 2.45, 2.36, 2.31, 2.26, 2.23};
    if (dof < 1) return INFINITY;
    return dof <= 10 ? kTable[dof - 1] : 2.0;
}

double median_of(std::vector<double> v) {
    std::sort(v.begin(), v.end());
    const size_t n = v.size();
    return n == 0 ? 0 : n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// Noisy sizes of one side, by label, with the largest cv seen.
using NoisySizes = std::map<std::string, double>;

void collect_noisy(const EvalResult& r, NoisySizes& out) {
    for (const auto& s : r.sizes)
        if (s.noisy) out[s.label] = std::max(out[s.label], s.cv);
}

std::string noisy_text(const NoisySizes& candidate, const NoisySizes& incumbent) {
    std::string out;
    for (const auto& [side, sizes] : {std::pair{"candidate", &candidate}, std::pair{"incumbent", &incumbent}})
        for (const auto& [label, cv] : *sizes)
            out += fmt::format("{}{} {} (cv {:.0f}%)", out.empty() ? "" : ", ", side, label, 100 * cv);
    return out.empty() ? out : "; noisy sizes (cv above the threshold after extra repeats): " + out;
}

PromotionDecision rejected(std::string why) {
    PromotionDecision d;
    d.why = std::move(why);
    return d;
}

}  // namespace

PairedEstimate paired_estimate(const std::vector<double>& log_ratios, const std::vector<double>& sigmas) {
    assert(!log_ratios.empty() && log_ratios.size() == sigmas.size());
    const int n = static_cast<int>(log_ratios.size());
    PairedEstimate e;
    for (double l : log_ratios) e.mean_log += l / n;
    double var = 0;
    for (double l : log_ratios) var += (l - e.mean_log) * (l - e.mean_log) / std::max(1, n - 1);
    const double between = n >= 2 ? student_t95(n - 1) * std::sqrt(var / n) : 0.0;
    e.spread_log = std::max(between, 2 * median_of(sigmas) / std::sqrt(n));
    return e;
}

double median_spread(const SizeResult& s) {
    return s.timed && s.seconds > 0 ? 1.25 * s.cv / std::sqrt(std::max(1, s.samples)) : 0.0;
}

double timing_spread(const EvalResult& r) {
    double spread = 0;
    for (const auto& s : r.sizes) spread = std::max(spread, median_spread(s));
    return spread;
}

std::string noisy_note(const EvalResult& candidate, const EvalResult& incumbent) {
    NoisySizes c, i;
    collect_noisy(candidate, c);
    collect_noisy(incumbent, i);
    return noisy_text(c, i);
}

PromotionDecision judge(const EvalResult& candidate, const EvalResult& incumbent) {
    if (candidate.verdict != Verdict::ok || !candidate.score)
        return rejected(fmt::format("not accepted: {}", verdict_name(candidate.verdict)));
    PromotionDecision d;
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
    d.why += noisy_note(candidate, incumbent);
    return d;
}

PromotionDecision judge_retimed(const std::vector<EvalResult>& candidate, const std::vector<EvalResult>& incumbent) {
    assert(candidate.size() == incumbent.size() && !candidate.empty() && "paired rounds");
    const int n = static_cast<int>(candidate.size());
    std::vector<double> logs, within;
    NoisySizes noisy_c, noisy_i;
    for (int r = 0; r < n; ++r) {
        const EvalResult &c = candidate[r], &i = incumbent[r];
        if (c.verdict != Verdict::ok || !c.score || *c.score <= 0)
            return rejected(fmt::format("re-timing round {}: the candidate failed ({}): {}", r + 1,
                                        verdict_name(c.verdict), c.diagnostics));
        if (i.verdict != Verdict::ok || !i.score || *i.score <= 0)
            return rejected(fmt::format("re-timing round {}: the incumbent failed ({}): {}; kept it", r + 1,
                                        verdict_name(i.verdict), i.diagnostics));
        logs.push_back(std::log(*c.score / *i.score));
        const double a = timing_spread(c), b = timing_spread(i);
        within.push_back(std::sqrt(a * a + b * b));
        collect_noisy(c, noisy_c);
        collect_noisy(i, noisy_i);
    }
    const PairedEstimate e = paired_estimate(logs, within);
    PromotionDecision d;
    d.gain = std::expm1(e.mean_log);
    d.spread = std::expm1(e.spread_log);
    const bool better = e.mean_log > e.spread_log;
    d.decision = better ? Promotion::accept : Promotion::reject;
    d.why = fmt::format("re-timed {}x interleaved: gain {:+.1f}%, spread {:.1f}%: {}", n, 100 * d.gain, 100 * d.spread,
                        better ? "accepted"
                               : e.mean_log > 0 ? "within the noise, kept the incumbent" : "not better, kept the incumbent");
    d.why += noisy_text(noisy_c, noisy_i);
    return d;
}

Expected<PromotionDecision> decide_promotion(const Attempt& candidate, const Attempt& incumbent,
                                             const EvaluateAttempt& evaluate, int rounds) {
    // The first evaluation can only reject: the incumbent's figures come from another window, and a
    // drift between the two (a busy machine, clocks, another calibration) must not promote. A
    // candidate that looks better, clearly or not, is re-timed beside the incumbent.
    PromotionDecision first = judge(candidate.result, incumbent.result);
    if (first.decision == Promotion::reject) return first;
    std::vector<EvalResult> mine, theirs;
    for (int r = 0; r < rounds; ++r) {
        // Which kernel goes first alternates, so that a drift within a round favours neither.
        for (const bool incumbent_turn : {r % 2 == 0, r % 2 != 0}) {
            auto e = evaluate(incumbent_turn ? incumbent : candidate);
            if (!e) return make_error(fmt::format("re-timing failed: {}", e.error().message));
            (incumbent_turn ? theirs : mine).push_back(std::move(*e));
        }
    }
    PromotionDecision d = judge_retimed(mine, theirs);
    d.why = first.why + "; " + d.why;
    return d;
}

}  // namespace kevo
