// Reads a study file (TOML, docs/study.md) into a Study and checks all of it before anything runs:
// every key known, every value of the right kind and range, the tasks, strategies and replay
// folders there. An error names the file, the line, the key and what would be accepted.
#pragma once

#include <string>

#include "core/expected.hpp"
#include "study/study.hpp"

namespace kevo {

// `text` is the file's content; `path` names it in errors, and replay folders are relative to its folder.
Expected<Study> parse_study(const std::string& text, const std::string& path);
Expected<Study> read_study_file(const std::string& path);

}  // namespace kevo
