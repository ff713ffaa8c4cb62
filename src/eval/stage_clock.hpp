// The parent's deadlines over the worker's typed stages (eval/protocol.hpp). The compile stage has
// its own limit; each run of N launches gets N x the launch limit; kevo's own reference and its check
// of the outputs have their own (past it the evaluation is an environment error); the whole-candidate limit counts only time spent
// in the candidate's stages (not the reference, the check, a first-use calibration or the lease wait).
// Times are passed in, so the rules are tested without waiting.
#pragma once

#include <chrono>
#include <optional>
#include <string>

#include "eval/protocol.hpp"

namespace kevo {

// Which stages are the candidate's time, and where a dying worker is kevo's fault.
bool counts_for_candidate(Stage stage);
bool is_kevo_stage(Stage stage);
// The stages worth a progress line for humans (compile, timing, calibrate, a nominal run).
bool worth_announcing(const StageEvent& stage);

struct StageLimits {
    double candidate_s = 0;  // the request's timeout: the candidate's stages together
    double compile_s = 0;    // the compile stage
    double launch_s = 0;     // per launch of a run stage (a run without a launch count gets candidate_s)
    double reference_s = 0;  // kevo's own reference and check stages, each
};

// A deadline that passed: why, and whether it was kevo's own stage (an environment error).
struct Overrun {
    std::string reason;
    bool kevo_fault = false;
};

class StageClock {
public:
    using Clock = std::chrono::steady_clock;
    StageClock(StageLimits limits, Clock::time_point start);

    void enter(const StageEvent& stage, Clock::time_point now);
    // The deadline that has passed by `now`, if one has.
    std::optional<Overrun> check(Clock::time_point now) const;
    const StageEvent& current() const { return current_; }

private:
    StageLimits limits_;
    StageEvent current_;
    Clock::time_point stage_start_;
    double candidate_seconds_ = 0;  // closed candidate stages
    double run_limit_ = 0;          // of the current run stage
};

}  // namespace kevo
