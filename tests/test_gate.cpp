// The gate on constructed EvalResults: a faster correct kernel passes and its held-out fraction and
// speed-up agree (one set of samples); a kernel wrong at the held-out size, wrong on re-check,
// slower than the seed by more than the spread, or slower only at the held-out size fails with the
// reason that names it; a kernel within the noise of the seed (slightly slower or slightly faster)
// is `within-noise`, and only a gain beyond the spread passes; run_gate walks back through the
// candidates to the first that passes, stops at one within the noise, the seed last.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "constructed_results.hpp"
#include "search/gate.hpp"

namespace kevo {
namespace {

using test::timed_size;

// A kernel of the fake world: its times relative to the seed's, and where it is wrong.
struct Kernel {
    double in_factor = 1, heldout_factor = 1;
    bool wrong_heldout = false, wrong_in = false;
    double cv = 0.01;
};

// Sizes 128 and 256 in distribution, 384 held-out; `jitter` scales every time (drift between rounds).
// Like the evaluator, a kernel wrong anywhere is not timed at all.
EvalResult evaluation(const Kernel& k, double jitter = 1.0) {
    EvalResult r;
    r.verdict = Verdict::ok;
    r.sizes = {timed_size("128", 1e-3 * k.in_factor * jitter, k.cv, 10), timed_size("256", 2e-3 * k.in_factor * jitter, k.cv, 10),
               timed_size("384", 1.5e-3 * k.heldout_factor * jitter, k.cv, 10, true)};
    if (k.wrong_in || k.wrong_heldout) {
        r.verdict = Verdict::incorrect;
        r.diagnostics = k.wrong_in ? "size 256 (nominal trial): max_abs 0.5 > 1e-4" : "size 384 (nominal trial): max_abs 3 > 1e-4";
        for (auto& s : r.sizes) s.timed = false;
        r.sizes[k.wrong_in ? 1 : 2].correct = false;
        if (k.wrong_in) r.sizes.pop_back();
        return r;
    }
    r.score = std::sqrt(r.sizes[0].fraction * r.sizes[1].fraction);
    r.heldout_fraction = r.sizes[2].fraction;
    return r;
}

StoredAttempt attempt(int iteration, const std::string& name) {
    return StoredAttempt{100 + iteration, "hash-" + name, Attempt{iteration, name, {}, {}}};
}

std::vector<EvalResult> rounds(const Kernel& k, const std::vector<double>& jitters) {
    std::vector<EvalResult> out;
    for (double j : jitters) out.push_back(evaluation(k, j));
    return out;
}

const std::vector<double> kJitters = {1.0, 1.02, 0.99};

TEST(Gate, FasterCorrectKernelPassesAndItsHeldoutFiguresAgree) {
    const auto e = examine(attempt(4, "fast"), rounds(Kernel{}, kJitters), rounds(Kernel{0.5, 0.55}, {1.01, 0.98, 1.0}));
    EXPECT_TRUE(e.passed) << e.detail;
    EXPECT_EQ(e.failure, GateFailure::none);
    EXPECT_TRUE(e.reason.empty());
    EXPECT_EQ(e.iteration, 4);
    ASSERT_TRUE(e.speedup && e.heldout_speedup && e.heldout_fraction && e.seed_heldout_fraction);
    EXPECT_NEAR(*e.speedup, 2.0, 0.05);
    EXPECT_NEAR(*e.heldout_speedup, 1 / 0.55, 0.05);
    // Phi and the held-out speed-up come from the same samples: their ratios agree exactly.
    EXPECT_NEAR(*e.heldout_fraction / *e.seed_heldout_fraction, *e.heldout_speedup, 1e-12);
    EXPECT_NEAR(*e.heldout_speedup, e.seed_heldout_seconds / e.heldout_seconds, 1e-12);
    EXPECT_EQ(e.rounds.size(), 3u);
    EXPECT_EQ(e.rounds[1].seconds.at("384"), 1.5e-3 * 0.55 * 0.98);
}

TEST(Gate, HeldoutFiguresAgreeWithAnEvenNumberOfRounds) {
    // With two rounds the median is the lower one, a measured sample, not an average of two.
    const auto e = examine(attempt(1, "fast"), rounds(Kernel{}, {1.0, 1.1}), rounds(Kernel{0.5, 0.5}, {1.0, 1.3}));
    ASSERT_TRUE(e.heldout_speedup && e.heldout_fraction && e.seed_heldout_fraction) << e.detail;
    EXPECT_NEAR(*e.heldout_fraction / *e.seed_heldout_fraction, *e.heldout_speedup, 1e-12);
    EXPECT_NEAR(*e.heldout_speedup, 2.0, 1e-12);  // 1.0 (lower seed median) / 0.5 (lower candidate median)
}

// Multi-class roofline: the examination names the term that bounds the held-out size and its
// speed-of-light time, from the same median sample as the held-out fraction.
TEST(Gate, HeldoutLimiterAndSpeedOfLightComeFromTheMedianSample) {
    const double sol = 4e-4;
    auto multi_class = [&](std::vector<EvalResult> rs) {
        for (auto& r : rs) {
            SizeResult& held = r.sizes[2];
            held.limiter = Limiter::memory;
            held.sol_seconds = sol;
            held.fraction = sol / held.seconds;
        }
        return rs;
    };
    const auto e = examine(attempt(2, "fast"), multi_class(rounds(Kernel{}, kJitters)),
                           multi_class(rounds(Kernel{0.5, 0.5}, {1.01, 0.98, 1.0})));
    ASSERT_TRUE(e.passed) << e.detail;
    EXPECT_EQ(e.heldout_limiter, Limiter::memory);
    EXPECT_EQ(e.heldout_sol_seconds, sol);
    EXPECT_NEAR(*e.heldout_fraction, e.heldout_sol_seconds / e.heldout_seconds, 1e-12);
    EXPECT_EQ(nlohmann::json(e)["heldout_limiter"], "memory");
    // A task scored by one bound has no binding term.
    const auto single = examine(attempt(2, "fast"), rounds(Kernel{}, kJitters), rounds(Kernel{0.5, 0.5}, kJitters));
    EXPECT_EQ(single.heldout_limiter, Limiter::none);
    EXPECT_EQ(single.heldout_sol_seconds, 0.0);
}

TEST(Gate, WrongAtTheHeldoutSizeFails) {
    Kernel wrong{0.3, 0.3};
    wrong.wrong_heldout = true;
    const auto e = examine(attempt(7, "wrong"), rounds(Kernel{}, {1.0}), rounds(wrong, {1.0}));
    EXPECT_FALSE(e.passed);
    EXPECT_EQ(e.failure, GateFailure::heldout_fault);
    EXPECT_EQ(e.reason, "heldout-incorrect");
    EXPECT_EQ(e.verdict, Verdict::incorrect);
    EXPECT_EQ(e.heldout_fraction, 0.0);
    EXPECT_FALSE(e.speedup.has_value());
    EXPECT_NE(e.detail.find("at the held-out size 384 in gate round 1"), std::string::npos) << e.detail;
}

TEST(Gate, WrongOnReCheckInDistributionFails) {
    Kernel flaky;
    flaky.wrong_in = true;
    const auto e = examine(attempt(2, "flaky"), rounds(Kernel{}, {1.0, 1.0}), {evaluation(Kernel{0.5, 0.5}), evaluation(flaky)});
    EXPECT_FALSE(e.passed);
    EXPECT_EQ(e.failure, GateFailure::recheck_fault);
    EXPECT_EQ(e.reason, "recheck-incorrect");
    EXPECT_NE(e.detail.find("at size 256 in gate round 2"), std::string::npos) << e.detail;
}

TEST(Gate, SlowerThanTheSeedBeyondTheSpreadFailsWithinItIsNoGain) {
    // 10% slower with 1% noise: a loss.
    const auto slow = examine(attempt(3, "slow"), rounds(Kernel{}, kJitters), rounds(Kernel{1.10, 1.0}, kJitters));
    EXPECT_FALSE(slow.passed) << slow.detail;
    EXPECT_EQ(slow.failure, GateFailure::slower_than_seed);
    EXPECT_EQ(slow.reason, "slower-than-seed");
    EXPECT_NEAR(*slow.speedup, 1 / 1.10, 1e-9);
    EXPECT_LT(*slow.speedup_spread, 0.1);
    // 1% slower with 5% noise per evaluation: within the spread, so not a loss, and no gain either.
    Kernel noisy_seed, near{1.01, 1.0};
    noisy_seed.cv = near.cv = 0.05;
    const auto close = examine(attempt(3, "near"), rounds(noisy_seed, kJitters), rounds(near, kJitters));
    EXPECT_FALSE(close.passed) << close.detail;
    EXPECT_EQ(close.failure, GateFailure::within_noise);
    EXPECT_EQ(close.reason, "within-noise");
    EXPECT_LT(*close.speedup, 1.0);
    EXPECT_GT(*close.speedup_spread, 1 - *close.speedup);
    // 1% slower with the rounds drifting apart (the candidate's first round 8% slow): also noise.
    const auto drift = examine(attempt(3, "drift"), rounds(Kernel{}, {1.0, 1.0, 1.0}), rounds(Kernel{1.01, 1.0}, {1.08, 0.98, 1.0}));
    EXPECT_EQ(drift.failure, GateFailure::within_noise) << drift.detail;
}

TEST(Gate, FasterOnlyWithinTheSpreadIsNoGainBeyondItPasses) {
    // 3% faster with 5% noise per evaluation and rounds that drift by 4%: not a gain.
    Kernel noisy_seed, slightly{0.97, 0.97};
    noisy_seed.cv = slightly.cv = 0.05;
    const auto e = examine(attempt(2, "slightly"), rounds(noisy_seed, {1.0, 1.04, 0.98}), rounds(slightly, {1.03, 0.99, 1.0}));
    EXPECT_FALSE(e.passed) << e.detail;
    EXPECT_EQ(e.failure, GateFailure::within_noise);
    ASSERT_TRUE(e.speedup && e.speedup_spread);
    EXPECT_GT(*e.speedup, 1.0);
    EXPECT_LE(std::log(*e.speedup), std::log1p(*e.speedup_spread));
    EXPECT_NE(e.detail.find("not faster than the seed beyond the spread"), std::string::npos) << e.detail;
    // 20% faster with 1% noise: a gain.
    const auto fast = examine(attempt(2, "fast"), rounds(Kernel{}, kJitters), rounds(Kernel{0.8, 0.8}, kJitters));
    EXPECT_TRUE(fast.passed) << fast.detail;
    EXPECT_GT(std::log(*fast.speedup), std::log1p(*fast.speedup_spread));
}

TEST(Gate, SlowerOnlyAtTheHeldoutSizeFails) {
    const auto e = examine(attempt(5, "overfit"), rounds(Kernel{}, kJitters), rounds(Kernel{0.8, 1.5}, kJitters));
    EXPECT_FALSE(e.passed) << e.detail;
    EXPECT_EQ(e.failure, GateFailure::slower_heldout);
    EXPECT_EQ(e.reason, "slower-heldout");
    EXPECT_GT(*e.speedup, 1.2);
    EXPECT_NEAR(*e.heldout_speedup, 1 / 1.5, 1e-9);
}

// A fake evaluator over named kernels, recording the order of evaluations.
struct FakeWorld {
    std::map<std::string, Kernel> kernels;
    std::vector<std::string> calls;
    EvaluateAttempt evaluate() {
        return [this](const Attempt& a) -> Expected<EvalResult> {
            calls.push_back(a.source);
            return evaluation(kernels.at(a.source), 1.0 + 0.01 * (calls.size() % 3));
        };
    }
};

TEST(Gate, WalksBackToTheNewestIncumbentThatPasses) {
    Kernel wrong{0.3, 0.3};
    wrong.wrong_heldout = true;
    FakeWorld world{{{"seed", Kernel{}}, {"good", Kernel{0.6, 0.6}}, {"wrong", wrong}}};
    const auto seed = attempt(0, "seed");
    std::vector<std::string> lines;
    auto report = run_gate(seed, {attempt(5, "wrong"), attempt(2, "good"), seed}, world.evaluate(),
                           GateOptions{3, [&](const std::string& l) { lines.push_back(l); }});
    ASSERT_TRUE(report.has_value()) << report.error().message;
    EXPECT_EQ(report->outcome, RunOutcome::best_failed_gate);
    ASSERT_EQ(report->examined.size(), 2u);
    EXPECT_EQ(report->recommended().iteration, 2);
    EXPECT_TRUE(report->recommended().passed);
    ASSERT_NE(report->rejected(), nullptr);
    EXPECT_EQ(report->rejected()->iteration, 5);
    EXPECT_EQ(report->rejected()->reason, "heldout-incorrect");
    // The wrong kernel stops after its first round; the good one gets three, alternating who goes first.
    EXPECT_EQ(world.calls, (std::vector<std::string>{"seed", "wrong", "seed", "good", "good", "seed", "seed", "good"}));
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_NE(lines[0].find("iteration 5 FAILED (heldout-incorrect)"), std::string::npos) << lines[0];
    EXPECT_NE(lines[1].find("iteration 2 passed"), std::string::npos) << lines[1];
}

TEST(Gate, OutcomesImprovedNoGainAndTheSeedAsLastResort) {
    Kernel wrong{0.3, 0.3}, slow{1.5, 1.5};
    wrong.wrong_heldout = true;
    FakeWorld world{{{"seed", Kernel{}}, {"good", Kernel{0.6, 0.6}}, {"wrong", wrong}, {"slow", slow}}};
    const auto seed = attempt(0, "seed");

    auto improved = run_gate(seed, {attempt(3, "good"), seed}, world.evaluate(), {});
    ASSERT_TRUE(improved.has_value());
    EXPECT_EQ(improved->outcome, RunOutcome::improved);
    EXPECT_EQ(improved->rejected(), nullptr);
    EXPECT_EQ(improved->recommended().iteration, 3);

    world.calls.clear();
    auto no_gain = run_gate(seed, {seed}, world.evaluate(), {});
    ASSERT_TRUE(no_gain.has_value());
    EXPECT_EQ(no_gain->outcome, RunOutcome::no_gain);
    EXPECT_EQ(no_gain->recommended().iteration, 0);
    EXPECT_EQ(*no_gain->recommended().speedup, 1.0);
    EXPECT_EQ(*no_gain->recommended().heldout_speedup, 1.0);
    EXPECT_EQ(*no_gain->recommended().heldout_fraction, *no_gain->recommended().seed_heldout_fraction);
    EXPECT_EQ(world.calls, (std::vector<std::string>{"seed", "seed", "seed"}));

    // Nothing passes: the seed is handed out, from the rounds already measured beside the others.
    world.calls.clear();
    auto fallback = run_gate(seed, {attempt(6, "wrong"), attempt(4, "slow"), seed}, world.evaluate(), {});
    ASSERT_TRUE(fallback.has_value());
    EXPECT_EQ(fallback->outcome, RunOutcome::best_failed_gate);
    ASSERT_EQ(fallback->examined.size(), 3u);
    EXPECT_EQ(fallback->examined[1].reason, "slower-than-seed");
    EXPECT_EQ(fallback->recommended().iteration, 0);
    EXPECT_TRUE(fallback->recommended().passed);
    EXPECT_EQ(fallback->rejected()->iteration, 6);
    EXPECT_EQ(world.calls.size(), 2u + 6u);

    // The best within the noise of the seed: the gate stops there (the older incumbent is not
    // examined), hands out the seed and keeps the candidate beside it; the outcome is no_gain.
    Kernel same_speed{1.0, 1.0};
    same_speed.cv = 0.05;  // noisier than the fake world's 1-2% jitter between rounds
    world.kernels["same"] = same_speed;
    world.calls.clear();
    auto same = run_gate(seed, {attempt(7, "same"), attempt(3, "good"), seed}, world.evaluate(), {});
    ASSERT_TRUE(same.has_value());
    EXPECT_EQ(same->outcome, RunOutcome::no_gain);
    ASSERT_EQ(same->examined.size(), 2u);
    EXPECT_EQ(same->recommended().iteration, 0);
    EXPECT_EQ(same->rejected(), nullptr);
    ASSERT_NE(same->within_noise(), nullptr);
    EXPECT_EQ(same->within_noise()->iteration, 7);
    EXPECT_EQ(std::count(world.calls.begin(), world.calls.end(), "good"), 0);

    // A best that failed, then one within the noise: best_failed_gate, the seed handed out.
    world.calls.clear();
    auto failed_then_same = run_gate(seed, {attempt(8, "wrong"), attempt(7, "same"), seed}, world.evaluate(), {});
    ASSERT_TRUE(failed_then_same.has_value());
    EXPECT_EQ(failed_then_same->outcome, RunOutcome::best_failed_gate);
    EXPECT_EQ(failed_then_same->recommended().iteration, 0);
    ASSERT_NE(failed_then_same->rejected(), nullptr);
    EXPECT_EQ(failed_then_same->rejected()->iteration, 8);
    ASSERT_NE(failed_then_same->within_noise(), nullptr) << failed_then_same->examined[1].detail;
    EXPECT_EQ(failed_then_same->within_noise()->iteration, 7);

    // An evaluation that cannot be made is an error.
    auto broken = [](const Attempt&) -> Expected<EvalResult> { return make_error("no device"); };
    EXPECT_FALSE(run_gate(seed, {attempt(3, "good")}, broken, {}).has_value());
}

TEST(Gate, OutcomeJsonNames) {
    nlohmann::json j = RunOutcome::best_failed_gate;
    EXPECT_EQ(j, "best_failed_gate");
    EXPECT_EQ(nlohmann::json("no_gain").get<RunOutcome>(), RunOutcome::no_gain);
    EXPECT_THROW(nlohmann::json("better").get<RunOutcome>(), nlohmann::json::exception);
}

}  // namespace
}  // namespace kevo
