// Human forms of a BenchReport: a terminal table and a markdown document (for docs/).
#pragma once

#include <string>

#include "bench/bench.hpp"

namespace kevo {

std::string render_bench_text(const BenchReport& report);
// One task's rows of the terminal table (no header), for progress as tasks complete.
std::string render_bench_task_text(const BenchTask& task);
// `command` is the command line that produced the report, quoted in the document so that a reader
// can rerun it.
std::string render_bench_markdown(const BenchReport& report, const std::string& command);

}  // namespace kevo
