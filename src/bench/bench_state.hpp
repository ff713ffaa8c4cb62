// A bench's progress on disk (`kevo bench --state FILE`): written after every check and every
// task, so that a bench cut short (a deadline, a crash, Ctrl-C) resumes where it stopped instead of
// starting over. A state file is only taken up by the same bench: same device, driver, timed
// profile, seed, warm-ups, repeats and kernels folder.
#pragma once

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"

namespace kevo {

nlohmann::json bench_state_json(const BenchReport& report, const BenchOptions& options);

// Fills report.tasks (already listed, in order) with the checks and timed results the state holds.
// An error when the state belongs to another bench or cannot be read.
Expected<void> restore_bench_state(const nlohmann::json& state, const BenchOptions& options, BenchReport& report);

// Rebuilds a task's per-size rows from its evaluations; `peers` by size label.
void fill_bench_sizes(BenchTask& task, const std::vector<SizeSpec>& sizes,
                      const std::map<std::string, std::vector<PeerTiming>>& peers);

}  // namespace kevo
