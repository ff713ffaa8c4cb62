// The study report's aggregates section: per model, strategy and pack, the geometric mean of the
// tasks' S_i and S_agg under each weight vector, with the tasks missing named (study_aggregates.hpp).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/html/html_sections.hpp"
#include "report/html/markup.hpp"
#include "report/study_aggregates.hpp"

namespace kevo::html {
namespace {

std::string weighted_cell(const PackAggregate& a) {
    if (!a.weights_note.empty()) return "no S_agg: " + escape_html(a.weights_note);
    if (a.weighted.empty()) return "- (the pack carries no weights)";
    std::string out;
    for (const auto& w : a.weighted) {
        out += fmt::format("{}<span data-vector=\"{}\">{} {}</span>", out.empty() ? "" : "<br>", escape_html(w.vector),
                           escape_html(w.vector), aggregate_value_text(w.value));
        if (!w.missing.empty())
            out += fmt::format(" (renormalised over {:.1f}% of its weight; missing: {})", 100 * w.weight_scored,
                               escape_html(fmt::format("{}", fmt::join(w.missing, ", "))));
    }
    return out;
}

}  // namespace

std::string aggregates_section(const ReportData& data) {
    const auto rows = study_aggregates(data);
    if (rows.empty()) return {};
    std::string out = fmt::format("<section id=\"aggregates\"><h2>Aggregates per pack</h2>\n<p>{}</p>\n<table class=\"aggregates\">\n"
                                  "<tr><th>model</th><th>strategy</th><th>kernels</th><th>pack</th><th>tasks scored</th>"
                                  "<th>S (geometric mean)</th><th>S_agg</th></tr>\n",
                                  escape_html(kStudyAggregateMeaning));
    for (const auto& r : rows)
        for (const auto* list : {&r.best, &r.seed})
            for (const auto& a : *list) {
                const char* kernels = list == &r.best ? "best" : "seed";
                const std::string scored = fmt::format("{} of {}{}", a.scored.size(), a.scored.size() + a.missing.size(),
                                                       a.missing.empty() ? "" : fmt::format("; missing: {}", fmt::join(a.missing, ", ")));
                out += fmt::format("<tr class=\"aggregate\" data-model=\"{}\" data-strategy=\"{}\" data-kernels=\"{}\" "
                                   "data-pack=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td>"
                                   "<td data-col=\"geomean\">{}</td><td data-col=\"s_agg\">{}</td></tr>\n",
                                   escape_html(r.model), escape_html(r.strategy), kernels, escape_html(a.pack),
                                   escape_html(r.model), escape_html(r.strategy), kernels, escape_html(a.pack),
                                   escape_html(scored), aggregate_value_text(a.geomean), weighted_cell(a));
            }
    return out + "</table>\n</section>\n";
}

}  // namespace kevo::html
