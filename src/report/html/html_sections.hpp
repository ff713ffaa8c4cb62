// The sections of the study report page, each a piece of HTML built from the stored runs
// (html_report.cpp puts them in order). Every stored string is escaped.
#pragma once

#include <string>
#include <vector>

#include "report/report_stats.hpp"
#include "report/report_data.hpp"

namespace kevo::html {

// What was run where: kevo's version, the store, each device with the ceilings its scores were
// divided by (value, source, date), the study file verbatim and the commands that rerun it.
std::string reproduce_section(const ReportData& data);
// The paper-style table: per task and model, speed-ups, held-out verdicts, candidates by verdict, tokens, cost.
std::string results_table(const std::vector<GroupRow>& rows);
// Per model, strategy and pack: the geometric mean of the tasks' scores and S_agg per weight vector
// (html_aggregates.cpp; empty when no run has a score).
std::string aggregates_section(const ReportData& data);
// The figures: best so far per task, in-distribution against held-out, verdict mix, repairs, variance.
std::string figures_section(const ReportData& data, const std::vector<GroupRow>& rows);
// The study's cells with their runs and statuses (empty without a study).
std::string study_cells_section(const ReportData& data);
// One row per run, each with its iterations in a collapsed list (notes and diagnostics escaped).
std::string runs_section(const ReportData& data);

// <figure> around a chart: an id, the svg and its caption.
std::string figure(const std::string& id, const std::string& svg, const std::string& caption);

}  // namespace kevo::html
