// Human forms of a BenchReport: a terminal table and a markdown document (for docs/).
#pragma once

#include <string>

#include "bench/bench.hpp"

namespace kevo {

// Widths of the terminal table's text columns, from the longest task name and size label benched,
// so that rows printed as tasks complete line up with each other and with the header.
struct BenchLayout {
    size_t task = 4, size = 4;
};
BenchLayout bench_layout(const std::vector<std::string>& tasks, const std::string& profile);

// The whole terminal table: the bench's summary lines, the header, every task's rows, the verdict.
std::string render_bench_text(const BenchReport& report);
// The parts, for a table whose rows are printed as tasks complete.
std::string render_bench_header(const BenchLayout& layout);
std::string render_bench_task_text(const BenchTask& task, const BenchLayout& layout);
std::string render_bench_summary(const BenchReport& report);  // device, ceilings and the verdict line
// `command` is the command line that produced the report, quoted in the document so that a reader
// can rerun it.
std::string render_bench_markdown(const BenchReport& report, const std::string& command);

}  // namespace kevo
