// Timing one size: warm-ups, then repeated timed runs (each from restored state with a cold cache),
// and more rounds while the spread stays above the noise threshold, within a bound. A size whose
// timings stay noisy is marked so: its median is still the best estimate, but it is not trusted
// as if it were quiet.
#pragma once

#include <functional>
#include <vector>

#include "core/stats.hpp"
#include "eval/case_run.hpp"

namespace kevo {

// The counts come from the EvalRequest (where their defaults live).
struct TimingPolicy {
    int warmup = 0;
    int repeat = 1;             // timed runs of the first round, and of each extra round
    int max_repeat = 1;         // timed runs in all, extra rounds included
    double noise_cv = 0;        // a round ends the timing once the cv is at or below this
    double extra_seconds = 2.0; // wall time the extra rounds of one size may take: they stop there
};

struct Timed {
    std::vector<double> samples;
    Summary summary;
    bool noisy = false;  // the cv stayed above noise_cv
    int rounds = 0;
};

// The policy over any timed run: `timed_run` returns one sample in seconds.
Expected<Timed> time_samples(const std::function<Expected<double>()>& timed_run, const TimingPolicy& policy,
                             const std::function<void()>& before_run);

// `before_run` is called before every timed run (the worker reports a stage for the deadlines).
Expected<Timed> time_case(CaseRun& run, CacheFlusher& flusher, const TimingPolicy& policy,
                          const std::function<void()>& before_run);

}  // namespace kevo
