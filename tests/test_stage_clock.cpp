// eval/stage_clock: the evaluation's deadlines over typed stages, on made-up times (no waiting).
#include <gtest/gtest.h>

#include "eval/stage_clock.hpp"

namespace kevo {
namespace {

using Clock = StageClock::Clock;

Clock::time_point at(double seconds) {
    return Clock::time_point{} + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
}

StageLimits limits() {
    StageLimits l;
    l.candidate_s = 10;
    l.compile_s = 4;
    l.launch_s = 2;
    l.reference_s = 100;
    return l;
}

TEST(StageClock, CompileHasItsOwnLimit) {
    StageClock clock(limits(), at(0));
    clock.enter({Stage::compile}, at(0));
    EXPECT_FALSE(clock.check(at(3.9)));
    auto over = clock.check(at(4.1));
    ASSERT_TRUE(over);
    EXPECT_EQ(over->reason, "compilation exceeded its 4 s deadline");
    EXPECT_FALSE(over->kevo_fault);
}

TEST(StageClock, RunGetsItsLaunchesTimesTheLaunchLimit) {
    StageClock clock(limits(), at(0));
    clock.enter({Stage::run, "1M", "nominal", 3}, at(0));
    EXPECT_FALSE(clock.check(at(5.9)));
    auto over = clock.check(at(6.1));
    ASSERT_TRUE(over);
    EXPECT_EQ(over->reason, "a run exceeded its 6 s deadline (run at size 1M (nominal trial))");
    // A timed run without a launch count falls back to the candidate's limit.
    StageClock timed(limits(), at(0));
    timed.enter({Stage::timed_run, "1M"}, at(0));
    EXPECT_FALSE(timed.check(at(9.9)));
    EXPECT_TRUE(timed.check(at(10.1)));
}

TEST(StageClock, KevosOwnStagesDoNotCountForTheCandidate) {
    StageClock clock(limits(), at(0));
    clock.enter({Stage::compile}, at(0));
    clock.enter({Stage::reference, "1M", "nominal"}, at(3));    // 3 s of the candidate's
    clock.enter({Stage::lease}, at(50));                       // 47 s of kevo's
    clock.enter({Stage::run, "1M", "nominal", 1}, at(80));     // 30 s waiting for the device
    EXPECT_FALSE(clock.check(at(81.5)));
    clock.enter({Stage::check, "1M", "nominal"}, at(81.5));    // 4.5 s used; the check is kevo's
    EXPECT_FALSE(clock.check(at(150)));
    clock.enter({Stage::timing, "1M"}, at(150));
    EXPECT_FALSE(clock.check(at(155.4)));
    auto over = clock.check(at(155.6));                         // 10.1 s used
    ASSERT_TRUE(over);
    EXPECT_EQ(over->reason, "the candidate exceeded its 10 s deadline during timing at size 1M");
    EXPECT_FALSE(over->kevo_fault);
}

TEST(StageClock, CheckPastKevosLimitIsKevosFault) {
    StageClock clock(limits(), at(0));
    clock.enter({Stage::check, "T2048", "nominal"}, at(0));
    EXPECT_FALSE(clock.check(at(99.9)));
    auto over = clock.check(at(100.1));
    ASSERT_TRUE(over);
    EXPECT_TRUE(over->kevo_fault);
    EXPECT_EQ(over->reason,
              "kevo's check of the outputs exceeded its 100 s deadline (check at size T2048 (nominal trial))");
}

TEST(StageClock, ReferencePastItsLimitIsKevosFault) {
    StageClock clock(limits(), at(0));
    clock.enter({Stage::reference, "1G", "outlier"}, at(1));
    EXPECT_FALSE(clock.check(at(100.9)));
    auto over = clock.check(at(101.1));
    ASSERT_TRUE(over);
    EXPECT_TRUE(over->kevo_fault);
    EXPECT_EQ(over->reason, "kevo's reference exceeded its 100 s deadline (reference at size 1G (outlier trial))");
}

TEST(StageClock, StagesAreClassified) {
    EXPECT_TRUE(is_kevo_stage(Stage::reference));
    EXPECT_TRUE(is_kevo_stage(Stage::calibrate));
    EXPECT_TRUE(is_kevo_stage(Stage::check));
    EXPECT_FALSE(is_kevo_stage(Stage::run));
    EXPECT_FALSE(counts_for_candidate(Stage::check));
    EXPECT_FALSE(counts_for_candidate(Stage::lease));
    EXPECT_TRUE(counts_for_candidate(Stage::start));
    EXPECT_TRUE(worth_announcing({Stage::run, "1M", "nominal"}));
    EXPECT_FALSE(worth_announcing({Stage::run, "1M", "outlier"}));
    EXPECT_TRUE(worth_announcing({Stage::compile}));
    EXPECT_FALSE(worth_announcing({Stage::check}));
}

}  // namespace
}  // namespace kevo
