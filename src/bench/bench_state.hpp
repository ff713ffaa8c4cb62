// A bench's progress on disk (`kevo bench --state FILE`): written after every check and every
// task, so that a bench cut short (a deadline, a crash, Ctrl-C) resumes where it stopped instead of
// starting over. A state file belongs to one device (name, backend, driver); within it every
// entry (a task's check at one profile, a task's timed results) carries the key it was measured
// under: the content hashes of the kernels, the task's sizes and check, the profile, the seed,
// warm-ups, repeats, timeout, peers and kevo's version. An entry whose key differs from the
// present bench's is not reused but measured again, and the bench says what changed.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench/bench.hpp"

namespace kevo {

nlohmann::json bench_state_json(const BenchReport& report, const BenchOptions& options);

// Fills report.tasks (already listed, in order, with their source hashes) with the checks and
// timed results the state holds under the present key. Returns one line per task that must be
// re-measured, "re-measuring <task>: <what changed>". An error when the state belongs to another
// device or cannot be read.
Expected<std::vector<std::string>> restore_bench_state(const nlohmann::json& state, const BenchOptions& options,
                                                       BenchReport& report);

// What differs between two entry keys, in words ("best kernel source 1f2e... -> 9a8b..., repeat 3 -> 10");
// empty when they are equal.
std::string key_changes(const nlohmann::json& saved, const nlohmann::json& now);

// Rebuilds a task's per-size rows from its evaluations; `peers` by size label.
void fill_bench_sizes(BenchTask& task, const std::vector<SizeSpec>& sizes,
                      const std::map<std::string, std::vector<PeerTiming>>& peers);

}  // namespace kevo
