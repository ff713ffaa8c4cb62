// See stage_clock.hpp. The switches are exhaustive (no default), so a new stage does not compile
// without a decision on its deadline.
#include "eval/stage_clock.hpp"

#include <fmt/format.h>

#include "task/task.hpp"

namespace kevo {

namespace {
double seconds_between(StageClock::Clock::time_point a, StageClock::Clock::time_point b) {
    return std::chrono::duration<double>(b - a).count();
}
}  // namespace

bool counts_for_candidate(Stage stage) {
    switch (stage) {
        case Stage::reference:
        case Stage::calibrate:
        case Stage::check:
        case Stage::lease:  // another process timing on the device: not the candidate's time
            return false;
        case Stage::start:
        case Stage::compile:
        case Stage::run:
        case Stage::timing:
        case Stage::timed_run:
            return true;
    }
    return true;
}

bool is_kevo_stage(Stage stage) {
    switch (stage) {
        case Stage::reference:  // building inputs, computing or uploading the reference
        case Stage::calibrate:
        // Checking the outputs the candidate left against the reference: host work whose cost is the
        // size's (fused_moe's check at Mixtral's 2048-token prefill ran past the candidate's 240 s on
        // the H100 while it was counted as the candidate's).
        case Stage::check:
            return true;
        case Stage::start:
        case Stage::lease:
        case Stage::compile:
        case Stage::run:
        case Stage::timing:
        case Stage::timed_run:
            return false;
    }
    return false;
}

bool worth_announcing(const StageEvent& stage) {
    switch (stage.stage) {
        case Stage::compile:
        case Stage::timing:
        case Stage::calibrate:
            return true;
        case Stage::run:
            return stage.trial == trial_name(Trial::nominal);
        case Stage::start:
        case Stage::lease:
        case Stage::reference:
        case Stage::check:
        case Stage::timed_run:
            return false;
    }
    return false;
}

StageClock::StageClock(StageLimits limits, Clock::time_point start)
    : limits_(limits), stage_start_(start), run_limit_(limits.candidate_s) {}

void StageClock::enter(const StageEvent& stage, Clock::time_point now) {
    if (counts_for_candidate(current_.stage)) candidate_seconds_ += seconds_between(stage_start_, now);
    current_ = stage;
    stage_start_ = now;
    run_limit_ = stage.launches > 0 ? static_cast<double>(stage.launches) * limits_.launch_s : limits_.candidate_s;
}

std::optional<Overrun> StageClock::check(Clock::time_point now) const {
    const double in_stage = seconds_between(stage_start_, now);
    switch (current_.stage) {
        case Stage::reference:
        case Stage::check:
            if (in_stage > limits_.reference_s)
                return Overrun{fmt::format("kevo's {} exceeded its {:.0f} s deadline ({})",
                                           current_.stage == Stage::check ? "check of the outputs" : "reference",
                                           limits_.reference_s, current_.describe()),
                               true};
            break;
        case Stage::compile:
            if (in_stage > limits_.compile_s)
                return Overrun{fmt::format("compilation exceeded its {:.0f} s deadline", limits_.compile_s), false};
            break;
        case Stage::run:
        case Stage::timed_run:
            if (in_stage > run_limit_)
                return Overrun{fmt::format("a run exceeded its {:.0f} s deadline ({})", run_limit_, current_.describe()),
                               false};
            break;
        case Stage::start:
        case Stage::lease:
        case Stage::timing:
        case Stage::calibrate:
            break;
    }
    const double used = candidate_seconds_ + (counts_for_candidate(current_.stage) ? in_stage : 0);
    if (used > limits_.candidate_s)
        return Overrun{fmt::format("the candidate exceeded its {:.0f} s deadline during {}", limits_.candidate_s,
                                   current_.describe()),
                       false};
    return std::nullopt;
}

}  // namespace kevo
