// The study report's aggregates section (study_aggregates.hpp): per model, strategy and pack, the
// gate's figures (speed-ups and held-out Phi, S_agg beside the latter) with the cells left out named
// and counted, then the search's own scores in a table of their own, labelled as such.
#include <algorithm>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/html/html_sections.hpp"
#include "report/html/markup.hpp"
#include "report/study_aggregates.hpp"

namespace kevo::html {
namespace {

// A count that stays short in the table, with the names it counts one click away (and in its tooltip).
std::string collapsed(const std::string& summary, const std::vector<std::string>& names) {
    const std::string list = escape_html(fmt::format("{}", fmt::join(names, ", ")));
    return fmt::format("<details class=\"names\" title=\"{}\"><summary>{}</summary>{}</details>", list, escape_html(summary), list);
}

// "2 of 12", the missing tasks collapsed.
std::string scored_cell(const PackAggregate& a) {
    const std::string scored = fmt::format("{} of {}", a.scored.size(), a.scored.size() + a.missing.size());
    return a.missing.empty() ? scored : scored + collapsed(fmt::format("missing {}", a.missing.size()), a.missing);
}

// "2 cells: interrupted 1, not started 1", the cells collapsed.
std::string left_out_cell(const std::vector<LeftOutCell>& cells) {
    if (cells.empty()) return "-";
    std::map<std::string, int> by_why;
    std::vector<std::string> names;
    for (const auto& c : cells) ++by_why[c.why], names.push_back(c.cell + " " + c.why);
    std::vector<std::string> counts;
    for (const auto& [why, n] : by_why) counts.push_back(fmt::format("{} {}", why, n));
    return collapsed(fmt::format("{} cell{}: {}", cells.size(), cells.size() == 1 ? "" : "s", fmt::join(counts, ", ")), names);
}

std::string weighted_cell(const PackAggregate& a) {
    if (!a.weights_note.empty()) return "no S_agg: " + escape_html(a.weights_note);
    if (a.weighted.empty()) return "- (the pack carries no weights)";
    std::string out;
    for (const auto& w : a.weighted) {
        out += fmt::format("{}<span data-vector=\"{}\">{} {}</span>", out.empty() ? "" : "<br>", escape_html(w.vector),
                           escape_html(w.vector), aggregate_value_text(w.value));
        if (!w.missing.empty())
            out += fmt::format(" (renormalised over {:.1f}% of its weight){}", 100 * w.weight_scored,
                               collapsed(fmt::format("missing {} task{} of weight > 0", w.missing.size(),
                                                     w.missing.size() == 1 ? "" : "s"),
                                         w.missing));
    }
    return out;
}

const PackAggregate* of_pack(const std::vector<PackAggregate>& list, const std::string& pack) {
    for (const auto& a : list)
        if (a.pack == pack) return &a;
    return nullptr;
}

std::string geomean_cell(const char* column, const PackAggregate* a) {
    return fmt::format("<td data-col=\"{}\">{}</td>", column, a ? aggregate_value_text(a->geomean) : "-");
}

// One row per pack the gate's figures reach.
std::string gate_rows(const StudyAggregateRow& r) {
    std::string out;
    std::vector<std::string> packs;
    for (const auto* list : {&r.speedup, &r.heldout_fraction})
        for (const auto& a : *list)
            if (std::find(packs.begin(), packs.end(), a.pack) == packs.end()) packs.push_back(a.pack);
    if (packs.empty()) packs.push_back("-");
    for (const auto& pack : packs) {
        const PackAggregate* best = of_pack(r.heldout_fraction, pack);
        const PackAggregate* counted = best ? best : of_pack(r.speedup, pack);
        out += fmt::format("<tr class=\"aggregate\" data-model=\"{}\" data-strategy=\"{}\" data-pack=\"{}\"><td>{}</td><td>{}</td>"
                           "<td>{}</td><td data-col=\"gated\">{}{}</td><td data-col=\"scored\">{}</td>{}{}{}<td data-col=\"s_agg\">{}</td>{}"
                           "<td data-col=\"left_out\">{}</td></tr>\n",
                           escape_html(r.model), escape_html(r.strategy), escape_html(pack), escape_html(r.model),
                           escape_html(r.strategy), escape_html(pack), r.gated,
                           r.untimed ? fmt::format(" ({} with no speed-up)", r.untimed) : "",
                           counted ? scored_cell(*counted) : "-", geomean_cell("speedup", of_pack(r.speedup, pack)),
                           geomean_cell("heldout_speedup", of_pack(r.heldout_speedup, pack)),
                           geomean_cell("heldout_fraction", best), best ? weighted_cell(*best) : "-",
                           geomean_cell("seed_heldout_fraction", of_pack(r.seed_heldout_fraction, pack)),
                           left_out_cell(r.left_out));
    }
    return out;
}

std::string search_rows(const StudyAggregateRow& r) {
    std::string out;
    for (const auto* list : {&r.search_best, &r.search_seed})
        for (const auto& a : *list) {
            const char* kernels = list == &r.search_best ? "best" : "seed";
            out += fmt::format("<tr class=\"search-aggregate\" data-model=\"{}\" data-strategy=\"{}\" data-kernels=\"{}\" "
                               "data-pack=\"{}\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td data-col=\"scored\">{}</td>"
                               "<td data-col=\"geomean\">{}</td><td data-col=\"s_agg\">{}</td></tr>\n",
                               escape_html(r.model), escape_html(r.strategy), kernels, escape_html(a.pack),
                               escape_html(r.model), escape_html(r.strategy), kernels, escape_html(a.pack),
                               scored_cell(a), aggregate_value_text(a.geomean), weighted_cell(a));
        }
    return out;
}

}  // namespace

std::string aggregates_section(const ReportData& data) {
    const auto rows = study_aggregates(data);
    if (rows.empty()) return {};
    std::string out = fmt::format(
        "<section id=\"aggregates\"><h2>Aggregates per pack</h2>\n<p>Aggregates {}</p>\n<table class=\"aggregates\">\n"
        "<tr><th>model</th><th>strategy</th><th>pack</th><th>runs through the gate</th><th>tasks scored</th>"
        "<th>speed-up in distribution (gate, geometric mean)</th><th>speed-up held out (gate, geometric mean)</th>"
        "<th>best: held-out Phi S (gate)</th><th>best: held-out Phi S_agg (gate)</th><th>seed: held-out Phi S (gate)</th>"
        "<th>cells left out</th></tr>\n",
        escape_html(kGateAggregateMeaning));
    for (const auto& r : rows) out += gate_rows(r);
    out += fmt::format("</table>\n<p>Aggregates of {}</p>\n<table class=\"search-aggregates\">\n<tr><th>model</th>"
                       "<th>strategy</th><th>kernels</th><th>pack</th><th>tasks scored</th><th>S (search's own, geometric "
                       "mean)</th><th>S_agg (search's own)</th></tr>\n",
                       escape_html(kSearchAggregateMeaning));
    for (const auto& r : rows) out += search_rows(r);
    return out + "</table>\n</section>\n";
}

}  // namespace kevo::html
