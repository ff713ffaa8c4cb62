// See timing.hpp.
#include "eval/timing.hpp"

#include <algorithm>
#include <chrono>

namespace kevo {

Expected<Timed> time_case(CaseRun& run, CacheFlusher& flusher, const TimingPolicy& policy,
                          const std::function<void()>& before_run) {
    return time_samples([&] { return run.run_timed(flusher); }, policy, before_run);
}

Expected<Timed> time_samples(const std::function<Expected<double>()>& timed_run, const TimingPolicy& policy,
                             const std::function<void()>& before_run) {
    auto timed_runs = [&](int count, std::vector<double>* samples) -> Expected<void> {
        for (int r = 0; r < count; ++r) {
            if (before_run) before_run();
            auto t = timed_run();
            if (!t) return t.error();
            if (samples) samples->push_back(*t);
        }
        return {};
    };
    Timed timed;
    if (auto e = timed_runs(policy.warmup, nullptr); !e) return e.error();
    const int first = std::max(1, policy.repeat);
    if (auto e = timed_runs(first, &timed.samples); !e) return e.error();
    timed.rounds = 1;
    timed.summary = summarize(timed.samples);
    const auto extra_start = std::chrono::steady_clock::now();
    auto extra_time = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - extra_start).count(); };
    while (timed.summary.cv > policy.noise_cv && static_cast<int>(timed.samples.size()) < policy.max_repeat &&
           extra_time() < policy.extra_seconds) {
        const int more = std::min(first, policy.max_repeat - static_cast<int>(timed.samples.size()));
        if (auto e = timed_runs(more, &timed.samples); !e) return e.error();
        ++timed.rounds;
        timed.summary = summarize(timed.samples);
    }
    timed.noisy = timed.summary.cv > policy.noise_cv;
    return timed;
}

}  // namespace kevo
