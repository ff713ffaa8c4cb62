// The text `kevo run` prints when a run ends: its summary, the lines of an interrupted run, and the
// warning of a best kernel that failed the gate.
#pragma once

#include <string>

#include "search/loop.hpp"

namespace kevo::cli {

std::string summary_text(const RunSummary& s, const std::string& db);
std::string interrupted_text(const RunSummary& s, const std::string& db);
std::string failed_gate_warning(const RunSummary& s);

}  // namespace kevo::cli
