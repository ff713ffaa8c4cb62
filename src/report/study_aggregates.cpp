// See study_aggregates.hpp.
#include "report/study_aggregates.hpp"

#include <map>
#include <set>

#include <fmt/format.h>

#include "report/report_stats.hpp"
#include "report/run_figures.hpp"

namespace kevo {

const char* const kGateAggregateMeaning =
    "from the gate: S_i is a task's median over the group's gated runs of what the gate measured side by side with "
    "the seed for the search's best (speed-up = seed time / its time; Phi at the held-out size, 0 when it failed "
    "there); S is the geometric mean of S_i over the pack; S_agg = sum w_i S_i under each of the pack's weight vectors "
    "(docs/packs.md), renormalised over the tasks scored. Cells that did not get through the gate are left out, named.";
const char* const kSearchAggregateMeaning =
    "the search's own scores, not side by side: S_i is a task's median over the same runs of the search's best "
    "in-distribution score and of the seed's, each from one evaluation in its own window; they may disagree with the "
    "gate's figures above.";

namespace {

using ByTask = std::map<std::string, std::vector<double>>;

struct Group {
    int gated = 0, untimed = 0;
    std::vector<LeftOutCell> left_out;
    ByTask speedup, heldout_speedup, heldout_fraction, seed_heldout_fraction, search_best, search_seed;
};

void add(ByTask& by_task, const std::string& task, const std::optional<double>& value) {
    if (value) by_task[task].push_back(*value);
}

void add_run(Group& g, const RunData& d) {
    if (const std::string why = left_out_reason(d); !why.empty()) {
        g.left_out.push_back({d.cell.empty() ? d.run.run_id : d.cell, d.run.run_id, why});
        return;
    }
    const RunFigures f = run_figures(d);
    const std::string& task = d.run.task;
    ++g.gated;
    // A figure the gate did not measure (the search's own, for a best it could not time) stays out.
    if (f.speedup && !f.speedup_from_search) add(g.speedup, task, f.speedup);
    else ++g.untimed;
    add(g.heldout_speedup, task, f.heldout_speedup);
    add(g.heldout_fraction, task, f.heldout_fraction);
    add(g.seed_heldout_fraction, task, f.seed_heldout_fraction);
    add(g.search_best, task, d.run.best_score);
    add(g.search_seed, task, d.run.seed_score);
}

// The study's cells that name no run in the store, or none at all.
void add_unstarted_cells(std::map<std::pair<std::string, std::string>, Group>& groups, const ReportData& data) {
    std::set<std::string> present;
    for (const auto& d : data.runs) present.insert(d.run.run_id);
    for (const auto& c : data.cells) {
        if (c.run_id && present.count(*c.run_id)) continue;
        groups[{c.model, c.strategy}].left_out.push_back(
            {c.cell, c.run_id.value_or(""), c.run_id ? "run missing from the store" : "not started"});
    }
}

std::vector<PackAggregate> aggregate(const ByTask& by_task, const PackWeightsSet& weights) {
    std::map<std::string, double> medians;
    for (const auto& [task, values] : by_task) medians[task] = *median(values);
    return aggregate_packs(medians, weights);
}

std::string speedup_line(const PackAggregate& a) {
    const size_t total = a.scored.size() + a.missing.size();
    return fmt::format("pack {} ({} of {} tasks): {} (geometric mean)", a.pack, a.scored.size(), total,
                       a.geomean ? fmt::format("{:.4f}x", *a.geomean) : std::string("-"));
}

std::string lines(const std::vector<PackAggregate>& list, const std::string& label, bool speedup) {
    std::string out;
    for (const auto& a : list) out += fmt::format("    {}, {}\n", label, speedup ? speedup_line(a) : aggregate_text(a));
    return out;
}

}  // namespace

std::vector<StudyAggregateRow> study_aggregates(const ReportData& data) {
    std::map<std::pair<std::string, std::string>, Group> groups;
    for (const auto& d : data.runs) add_run(groups[{d.model, d.run.strategy}], d);
    add_unstarted_cells(groups, data);
    const PackWeightsSet no_weights;  // a weighted sum of speed-ups is not a figure kevo defines
    std::vector<StudyAggregateRow> rows;
    for (const auto& [key, g] : groups) {
        StudyAggregateRow r;
        r.model = key.first;
        r.strategy = key.second;
        r.gated = g.gated;
        r.untimed = g.untimed;
        r.left_out = g.left_out;
        r.speedup = aggregate(g.speedup, no_weights);
        r.heldout_speedup = aggregate(g.heldout_speedup, no_weights);
        r.heldout_fraction = aggregate(g.heldout_fraction, data.weights);
        r.seed_heldout_fraction = aggregate(g.seed_heldout_fraction, data.weights);
        r.search_best = aggregate(g.search_best, data.weights);
        r.search_seed = aggregate(g.search_seed, data.weights);
        rows.push_back(std::move(r));
    }
    return rows;
}

std::string left_out_text(const std::vector<LeftOutCell>& cells) {
    if (cells.empty()) return {};
    std::string out = fmt::format("left out of the aggregates: {} cell{} (", cells.size(), cells.size() == 1 ? "" : "s");
    for (size_t i = 0; i < cells.size(); ++i) out += fmt::format("{}{} {}", i ? "; " : "", cells[i].cell, cells[i].why);
    return out + ")";
}

std::string render_study_aggregates_text(const std::vector<StudyAggregateRow>& rows) {
    if (rows.empty()) return {};
    std::string out = fmt::format("aggregates {}\n", kGateAggregateMeaning);
    for (const auto& r : rows) {
        out += fmt::format("  {} / {}: {} run{} through the gate", r.model, r.strategy, r.gated, r.gated == 1 ? "" : "s");
        if (r.untimed) out += fmt::format(", {} of them with no speed-up (the best failed a check the gate stops at)", r.untimed);
        if (!r.left_out.empty()) out += "; " + left_out_text(r.left_out);
        out += "\n";
        out += lines(r.speedup, "speed-up in distribution (gate)", true);
        out += lines(r.heldout_speedup, "speed-up held out (gate)", true);
        out += lines(r.heldout_fraction, "best, held-out Phi (gate)", false);
        out += lines(r.seed_heldout_fraction, "seed, held-out Phi (gate)", false);
    }
    out += fmt::format("aggregates of {}\n", kSearchAggregateMeaning);
    for (const auto& r : rows) {
        out += render_aggregates_text(r.search_best, fmt::format("  {} / {}, best (search)", r.model, r.strategy));
        out += render_aggregates_text(r.search_seed, fmt::format("  {} / {}, seed (search)", r.model, r.strategy));
    }
    return out;
}

nlohmann::json study_aggregates_json(const std::vector<StudyAggregateRow>& rows) {
    nlohmann::json out = nlohmann::json::array();
    for (const auto& r : rows) {
        nlohmann::json left = nlohmann::json::array();
        for (const auto& c : r.left_out) left.push_back({{"cell", c.cell}, {"run_id", c.run_id}, {"why", c.why}});
        out.push_back({{"model", r.model},
                       {"strategy", r.strategy},
                       {"gated", r.gated},
                       {"untimed", r.untimed},
                       {"left_out", std::move(left)},
                       {"gate",
                        {{"speedup", r.speedup},
                         {"heldout_speedup", r.heldout_speedup},
                         {"heldout_fraction", r.heldout_fraction},
                         {"seed_heldout_fraction", r.seed_heldout_fraction}}},
                       {"search", {{"best", r.search_best}, {"seed", r.search_seed}}}});
    }
    return out;
}

}  // namespace kevo
