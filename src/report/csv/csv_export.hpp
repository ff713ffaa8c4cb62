// `kevo export --csv DIR`: the scope's runs as flat tables for pandas and the like:
// runs.csv (one row per run, with the gate's figures), iterations.csv (one per iteration),
// sizes.csv (one per iteration and size of its stored evaluation) and gate.csv (the gate's rows).
#pragma once

#include <string>
#include <vector>

#include "core/expected.hpp"
#include "report/report_data.hpp"

namespace kevo {

// Writes the four files into `dir` (created when missing); returns their paths.
Expected<std::vector<std::string>> export_csv(const ReportData& data, const std::string& dir);

}  // namespace kevo
