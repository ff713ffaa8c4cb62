// The promotion rules on constructed EvalResults: the first evaluation only rejects (a gain, clear
// or within the spread, re-times beside the incumbent), and the re-timed decision accepts only a
// paired gain beyond its spread, whatever drift made the first evaluation look; the
// noise of the CPU case the reviewer measured (+199% against a cv of 285%) never accepts. Both
// sides of every rule, and the noisy-size note.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "constructed_results.hpp"
#include "core/stats.hpp"
#include "search/promotion.hpp"

namespace kevo {
namespace {

using test::timed_size;

// An ok result over two in-distribution sizes whose times are `base` and 2 * `base`.
EvalResult result(double base, double cv = 0.01, int samples = 10) {
    EvalResult r;
    r.verdict = Verdict::ok;
    r.sizes = {timed_size("64", base, cv, samples), timed_size("128", 2 * base, cv, samples)};
    std::vector<double> fractions;
    for (const auto& s : r.sizes) fractions.push_back(s.fraction);
    r.score = geometric_mean(fractions);
    return r;
}

TEST(Promotion, ClearGainBeyondTheSpreadIsAccepted) {
    const auto d = judge(result(0.8e-3), result(1.0e-3));
    EXPECT_EQ(d.decision, Promotion::accept) << d.why;
    EXPECT_NEAR(d.gain, 0.25, 1e-9);
    EXPECT_LT(d.spread, 0.02);
    EXPECT_NE(d.why.find("+25.0%"), std::string::npos) << d.why;
    EXPECT_NE(d.why.find("spread"), std::string::npos) << d.why;
}

TEST(Promotion, GainWithinTheSpreadIsTooCloseAndIsNotAccepted) {
    // A 3% gain against 1% cv at 10 samples clears the spread ...
    EXPECT_EQ(judge(result(0.97e-3), result(1.0e-3)).decision, Promotion::accept);
    // ... but not against 10% cv: re-time.
    const auto d = judge(result(0.97e-3, 0.10), result(1.0e-3, 0.10));
    EXPECT_EQ(d.decision, Promotion::too_close) << d.why;
    EXPECT_GT(d.spread, d.gain);
    EXPECT_NE(d.why.find("within the spread"), std::string::npos) << d.why;
}

TEST(Promotion, TheReviewersCpuCaseIsTooCloseNotAccepted) {
    // +199% against a cv of 285% at 3 samples: the spread is wider than the difference.
    const auto d = judge(result(1.0e-3 / 2.991, 2.85, 3), result(1.0e-3, 2.85, 3));
    EXPECT_EQ(d.decision, Promotion::too_close) << d.why;
    EXPECT_NEAR(d.gain, 1.991, 1e-3);
    EXPECT_GT(d.spread, d.gain);
}

TEST(Promotion, NotBetterOrFailedIsRejected) {
    EXPECT_EQ(judge(result(1.1e-3), result(1.0e-3)).decision, Promotion::reject);
    EvalResult wrong = result(0.1e-3);
    wrong.verdict = Verdict::incorrect;
    const auto d = judge(wrong, result(1.0e-3));
    EXPECT_EQ(d.decision, Promotion::reject);
    EXPECT_NE(d.why.find("incorrect"), std::string::npos) << d.why;
}

// Paired rounds: candidate round r runs at base * factor[r], the incumbent at base.
PromotionDecision retimed(const std::vector<double>& factors, double cv = 0.01, int samples = 10) {
    std::vector<EvalResult> candidate, incumbent;
    for (double f : factors) {
        candidate.push_back(result(1.0e-3 * f, cv, samples));
        incumbent.push_back(result(1.0e-3, cv, samples));
    }
    return judge_retimed(candidate, incumbent);
}

TEST(Promotion, RetimedConsistentGainIsAccepted) {
    const auto d = retimed({1 / 1.05, 1 / 1.06, 1 / 1.05});
    EXPECT_EQ(d.decision, Promotion::accept) << d.why;
    EXPECT_NEAR(d.gain, 0.0533, 2e-3);
    EXPECT_LT(d.spread, d.gain);
    EXPECT_NE(d.why.find("re-timed 3x interleaved"), std::string::npos) << d.why;
    EXPECT_NE(d.why.find("accepted"), std::string::npos) << d.why;
}

TEST(Promotion, RetimedGainThatSwingsBetweenRoundsIsWithinTheNoise) {
    // Mean gain about +14%, but one round is a loss: the between-round spread is wider.
    const auto d = retimed({1 / 1.30, 1 / 0.90, 1 / 1.25});
    EXPECT_EQ(d.decision, Promotion::reject) << d.why;
    EXPECT_GT(d.gain, 0.1);
    EXPECT_GT(d.spread, d.gain);
    EXPECT_NE(d.why.find("within the noise"), std::string::npos) << d.why;
    EXPECT_NE(d.why.find(fmt::format("gain {:+.1f}%", 100 * d.gain)), std::string::npos) << d.why;
    EXPECT_NE(d.why.find(fmt::format("spread {:.1f}%", 100 * d.spread)), std::string::npos) << d.why;
}

TEST(Promotion, RetimedGainAgainstTheWithinEvaluationSpreadBothSides) {
    // A steady +2% in every round. The within-evaluation spread is 2 sqrt(2) 1.25 cv / sqrt(samples)
    // per round, over sqrt(3) for three rounds: about 0.65 cv at 10 samples.
    const std::vector<double> steady = {1 / 1.02, 1 / 1.02, 1 / 1.02};
    const auto quiet = retimed(steady, 0.02);   // spread ~1.3%
    EXPECT_EQ(quiet.decision, Promotion::accept) << quiet.why;
    const auto loud = retimed(steady, 0.045);   // spread ~2.9%
    EXPECT_EQ(loud.decision, Promotion::reject) << loud.why;
    EXPECT_NE(loud.why.find("within the noise"), std::string::npos) << loud.why;
    // The CPU case: +199% in every round, cv 285% at 3 samples, is still noise.
    const auto cpu = retimed({1 / 2.991, 1 / 2.991, 1 / 2.991}, 2.85, 3);
    EXPECT_EQ(cpu.decision, Promotion::reject) << cpu.why;
    EXPECT_GT(cpu.spread, cpu.gain);
}

TEST(Promotion, RetimedFailureOfTheCandidateRejects) {
    std::vector<EvalResult> candidate = {result(0.5e-3), result(0.5e-3)}, incumbent = {result(1e-3), result(1e-3)};
    candidate[1].verdict = Verdict::incorrect;
    candidate[1].score.reset();
    const auto d = judge_retimed(candidate, incumbent);
    EXPECT_EQ(d.decision, Promotion::reject);
    EXPECT_NE(d.why.find("round 2"), std::string::npos) << d.why;
}

TEST(Promotion, NoisySizesAreNamedInTheDecision) {
    EvalResult candidate = result(0.5e-3), incumbent = result(1.0e-3);
    EXPECT_EQ(judge(candidate, incumbent).why.find("noisy"), std::string::npos);
    candidate.sizes[1].noisy = true;
    candidate.sizes[1].cv = 0.31;
    incumbent.sizes[0].noisy = true;
    const auto d = judge(candidate, incumbent);
    EXPECT_NE(d.why.find("noisy sizes"), std::string::npos) << d.why;
    EXPECT_NE(d.why.find("candidate 128 (cv 31%)"), std::string::npos) << d.why;
    EXPECT_NE(d.why.find("incumbent 64"), std::string::npos) << d.why;
    const auto r = judge_retimed({candidate}, {incumbent});
    EXPECT_NE(r.why.find("candidate 128"), std::string::npos) << r.why;
}

TEST(Promotion, DecideAcceptsOnlyAfterReTimingBesideTheIncumbent) {
    const Attempt incumbent{0, "incumbent", {}, result(1.0e-3, 0.10)};
    const Attempt candidate{1, "candidate", {}, result(0.97e-3, 0.10)};
    std::vector<std::string> order;
    auto evaluate = [&](const Attempt& a) -> Expected<EvalResult> {
        order.push_back(a.source);
        return a.source == "incumbent" ? result(1.0e-3) : result(0.90e-3);
    };
    auto d = decide_promotion(candidate, incumbent, evaluate);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->decision, Promotion::accept) << d->why;
    // Three rounds; which kernel goes first alternates.
    EXPECT_EQ(order, (std::vector<std::string>{"incumbent", "candidate", "candidate", "incumbent", "incumbent", "candidate"}));
    EXPECT_NE(d->why.find("re-timing both"), std::string::npos) << d->why;

    // A clear gain on the first evaluation is re-timed too: the incumbent's figure is from another window.
    order.clear();
    const Attempt fast{2, "fast", {}, result(0.5e-3)};
    d = decide_promotion(fast, Attempt{0, "incumbent", {}, result(1.0e-3)}, evaluate);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->decision, Promotion::accept);
    EXPECT_EQ(order.size(), 6u);
    EXPECT_NE(d->why.find("re-timed 3x interleaved"), std::string::npos) << d->why;

    // Drift: the candidate's first evaluation ran in a fast window (2x the incumbent's stored
    // figure), but beside the incumbent it is the same kernel: kept out.
    order.clear();
    auto same_speed = [&](const Attempt& a) -> Expected<EvalResult> {
        order.push_back(a.source);
        return result(1.0e-3);
    };
    d = decide_promotion(fast, Attempt{0, "incumbent", {}, result(1.0e-3)}, same_speed);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->decision, Promotion::reject) << d->why;
    EXPECT_EQ(order.size(), 6u);

    // Not better on the first evaluation: rejected without re-timing.
    order.clear();
    d = decide_promotion(Attempt{3, "slow", {}, result(1.2e-3)}, Attempt{0, "incumbent", {}, result(1.0e-3)}, evaluate);
    ASSERT_TRUE(d.has_value());
    EXPECT_EQ(d->decision, Promotion::reject);
    EXPECT_TRUE(order.empty());

    // An evaluation that cannot be made is an error, not a decision.
    auto broken = [](const Attempt&) -> Expected<EvalResult> { return make_error("worker gone"); };
    EXPECT_FALSE(decide_promotion(candidate, incumbent, broken).has_value());
}

}  // namespace
}  // namespace kevo
