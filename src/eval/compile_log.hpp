// Turns compiler logs (NVRTC's `candidate.cu(12): error: ...`, clang/PoCL's and NVIDIA OpenCL's
// `<source>:12:5: error: ...`, PoCL 3's `error: /tmp/x.cl:12:5: ...`) into line/column/message records for feedback.
#pragma once

#include <string_view>
#include <vector>

#include "eval/eval_types.hpp"

namespace kevo {

std::vector<CompileMessage> parse_compile_log(std::string_view log);

// The log with the compiler's name for the main source (PoCL's temporary file, `<source>`,
// NVRTC's `candidate.cu`) replaced by `source_name`, the candidate's own path, so that messages
// point at the file the user has. Empty `source_name`: "candidate.<cl|cu>". Headers keep their names.
std::string name_source_in_log(std::string_view log, const std::string& source_name);

// The first `max_lines` lines of a log, for diagnostics that stay readable.
std::string log_head(std::string_view log, size_t max_lines = 30);

}  // namespace kevo
