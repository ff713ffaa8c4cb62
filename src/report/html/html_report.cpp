// See html_report.hpp.
#include "report/html/html_report.hpp"

#include <fmt/format.h>

#include "core/version.hpp"
#include "report/html/html_sections.hpp"
#include "report/html/markup.hpp"
#include "report/report_stats.hpp"

namespace kevo {

namespace {

constexpr const char* kStyle = R"(body{font-family:sans-serif;margin:2em;max-width:1100px;color:#222}
table{border-collapse:collapse;margin:.5em 0}th,td{border:1px solid #ccc;padding:3px 6px;font-size:13px;text-align:left;vertical-align:top}
td[data-col=speedup],td[data-col=heldout_speedup],td[data-col=tokens],td[data-col=cost],td[data-col=runs]{text-align:right}
pre{background:#f6f6f6;padding:.6em;overflow-x:auto;font-size:12px;white-space:pre-wrap}
figure{margin:1em 1em 1em 0;display:inline-block;vertical-align:top}figcaption{font-size:13px;color:#444;max-width:700px}
td.note{max-width:600px;word-break:break-word;font-size:12px}summary{cursor:pointer;font-size:14px}
details.names,details.names summary{font-size:12px;color:#555}p.not-drawn{font-size:13px;color:#444;max-width:700px}
)";

// Counts, on load, the figures with a non-empty bounding box and the marks drawn in them: on the
// body (data-figures, data-figures-drawn, data-marks, data-marks-drawn) and on each figure's svg
// (data-marks-drawn); a script error is counted in data-errors.
constexpr const char* kSelfCheck = R"(<script>
(function () {
  var body = document.body;
  body.setAttribute('data-errors', '0');
  window.addEventListener('error', function () {
    body.setAttribute('data-errors', String(Number(body.getAttribute('data-errors')) + 1));
  });
  var figures = document.querySelectorAll('svg.figure'), drawn = 0, marks = 0, marksDrawn = 0;
  figures.forEach(function (svg) {
    var box = svg.getBBox(), own = 0, list = svg.querySelectorAll('.mark');
    if (box.width > 0 && box.height > 0) drawn++;
    list.forEach(function (m) { var b = m.getBBox(); if (b.width > 0 || b.height > 0) own++; });
    svg.setAttribute('data-marks-drawn', String(own));
    marks += list.length;
    marksDrawn += own;
  });
  body.setAttribute('data-figures', String(figures.length));
  body.setAttribute('data-figures-drawn', String(drawn));
  body.setAttribute('data-marks', String(marks));
  body.setAttribute('data-marks-drawn', String(marksDrawn));
})();
</script>
)";

std::string scope_title(const ReportData& data) {
    switch (data.scope.kind) {
        case ReportScope::Kind::run: return "run " + data.scope.id;
        case ReportScope::Kind::study:
            return "study " + data.scope.id + (data.study && !data.study->name.empty() ? " (" + data.study->name + ")" : "");
        case ReportScope::Kind::all: break;
    }
    return "every run in the store";
}

}  // namespace

std::string render_html_report(const ReportData& data) {
    const std::vector<GroupRow> rows = group_rows(data);
    const std::string title = "kevo report: " + scope_title(data);
    std::string page = fmt::format("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<title>{}</title>\n"
                                   "<meta name=\"generator\" content=\"kevo {}\">\n<style>{}</style>\n</head>\n<body>\n<h1>{}</h1>\n"
                                   "<p>{} run{}.</p>\n",
                                   escape_html(title), escape_html(kVersion), kStyle, escape_html(title), data.runs.size(),
                                   data.runs.size() == 1 ? "" : "s");
    page += html::results_table(rows);
    page += html::aggregates_section(data);
    page += html::figures_section(data, rows);
    page += html::reproduce_section(data);
    page += html::study_cells_section(data);
    page += html::runs_section(data);
    return page + kSelfCheck + "</body>\n</html>\n";
}

}  // namespace kevo
