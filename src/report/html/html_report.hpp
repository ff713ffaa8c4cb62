// `kevo report --html`: the study report as one self-contained HTML page (inline CSS and SVG, no
// network): how to rerun it, the paper-style results table, the figures, the study's cells and the
// runs. A small inline script only checks, on load, that the figures were drawn, and writes what
// it found into the body's data- attributes (read by the headless-browser test). The same store
// gives the same bytes.
#pragma once

#include <string>

#include "report/report_data.hpp"

namespace kevo {

std::string render_html_report(const ReportData& data);

}  // namespace kevo
