// The `trace` profile of an ML task: the production shapes of its anchor operators (Atrex-Bench's
// shape files, FlashInfer-Bench's workloads), each weighted by its call count, read from the
// task's own tasks/<name>/trace.toml (docs/packs.md gives the format). A task that ships the file
// gets the profile from make_task; the task's C++ knows nothing of it.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/expected.hpp"
#include "task/task.hpp"

namespace kevo {

inline constexpr std::string_view kTraceFile = "trace.toml";

// Anchor shapes the task cannot represent, with the reason.
struct TraceLeftOut {
    std::string anchor;
    std::vector<std::string> ids;
    std::string why;
};

struct TraceProfile {
    std::string source;   // where the shapes come from (anchor, files, commit)
    std::string mapping;  // how an anchor shape becomes the task's parameters
    std::vector<SizeSpec> sizes;
    std::vector<TraceLeftOut> left_out;
    int uncounted = 0;    // shapes whose anchor gives no call count (weight 1)
};

// Parses and checks a trace file against the task's parameters: every shape has exactly the
// parameter names of the task's paper sizes, labels are unique, exactly one shape is held out,
// call counts are positive. Errors name the file and line.
Expected<TraceProfile> parse_trace_file(const std::string& text, const std::string& path, const TaskSpec& spec);

// The task with its trace profile added when its folder ships trace.toml; unchanged otherwise.
Expected<std::unique_ptr<Task>> with_trace_profile(std::unique_ptr<Task> task);

}  // namespace kevo
