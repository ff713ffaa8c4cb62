// The study report's table, figures, study cells and runs (see html_sections.hpp).
#include "report/html/html_sections.hpp"

#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "report/html/markup.hpp"
#include "report/html/svg_chart.hpp"
#include "report/run_figures.hpp"

namespace kevo::html {

namespace {

// Beside an in-distribution speed-up that includes the search's own figure for a best the gate could not time.
constexpr const char* kFromSearchMark = "*";

std::string counts_text(const std::map<std::string, int>& counts) {
    std::string out;
    for (const auto& [name, n] : counts) out += fmt::format("{}{} {}", out.empty() ? "" : ", ", name, n);
    return out.empty() ? "-" : out;
}

std::string cell(const char* column, const std::string& text) {
    return fmt::format("<td data-col=\"{}\">{}</td>", column, escape_html(text));
}

// "3", or "3 (1 through the gate; interrupted 1, failed 1)": runs the gate never judged are counted
// among the group's runs but add nothing to its speed-ups, so the cell says which they are.
std::string runs_text(const GroupRow& r) {
    const std::string n = std::to_string(r.run_ids.size());
    return r.not_gated.empty() ? n : fmt::format("{} ({} through the gate; {})", n, r.gated, counts_text(r.not_gated));
}

std::string best_so_far_figures(const std::vector<GroupRow>& rows, bool with_strategy) {
    std::map<std::string, LineChart> by_task;
    for (const auto& r : rows) {
        LineChart& chart = by_task[r.key.task];
        chart.title = "Best so far: " + r.key.task;
        chart.x.label = "iteration";
        chart.y.label = "best score so far (fraction of roofline)";
        LineSeries s;
        s.name = fmt::format("{} (n={})", series_name(r.key, with_strategy), r.run_ids.size());
        for (size_t i = 0; i < r.best_so_far.size(); ++i)
            if (r.best_so_far[i]) s.points.emplace_back(static_cast<double>(i), *r.best_so_far[i]);
        chart.series.push_back(std::move(s));
    }
    std::string out;
    for (const auto& [task, chart] : by_task)
        out += figure("best-so-far-" + task, render_line_chart(chart),
                      "The search's own scores (each from one evaluation, not the gate's side-by-side timing): the best "
                      "accepted score after each iteration (iteration 0: the seed; one-plus-one: its incumbent); the median "
                      "over a group's runs.");
    return out;
}

std::string generalisation_figure(const std::vector<GroupRow>& rows, bool with_strategy) {
    ScatterChart chart;
    chart.title = "In distribution against held out";
    chart.x = {"in-distribution speed-up of the search's best (gate, x seed)", true};
    chart.y = {"held-out speed-up (gate, x seed)", true};
    chart.apart_label = "held-out not correct";
    std::map<std::string, size_t> series;
    int undrawn = 0;
    for (const auto& r : rows) {
        if (!r.speedup) {
            ++undrawn;
            continue;
        }
        const std::string name = series_name(r.key, with_strategy);
        const auto [at, added] = series.emplace(name, chart.series.size());
        if (added) chart.series.push_back(name);
        ScatterPoint p;
        p.series = at->second;
        p.x = *r.speedup;
        // Drawn apart when most of the group's best kernels were not correct at the held-out size.
        p.apart = !r.heldout_speedup || 2 * r.heldout_correct < r.gated;
        p.y = r.heldout_speedup.value_or(0);
        p.tag = r.key.task;
        p.label = fmt::format("{} / {}: {}{} in distribution, {} held out ({} of {} held-out correct)", r.key.task, name,
                              speedup_text(r.speedup), r.speedup_from_search ? kFromSearchMark : "",
                              speedup_text(r.heldout_speedup), r.heldout_correct, r.gated);
        chart.points.push_back(std::move(p));
    }
    std::string caption =
        "One point per task and model (the median over its runs of the gate's figures, as in the Results table), "
        "labelled with its task; its colour and shape give the model (and strategy), its tooltip the figures. Points "
        "below the diagonal did not keep their speed-up at the held-out size; crosses in the strip were not correct "
        "there (their in-distribution figure is the search's own, marked *, when the gate could not time them). Points "
        "that coincide are drawn spread a few pixels around their common place, so that each stays visible.";
    if (undrawn)
        caption += fmt::format(" Not drawn: {} group{} with no in-distribution figure (the best failed the gate's "
                               "re-check in distribution, or no run reached the gate).", undrawn, undrawn == 1 ? "" : "s");
    return figure("generalisation", render_scatter_chart(chart), caption);
}

std::string verdict_mix_figure(const ReportData& data) {
    static const std::map<std::string, std::string> kColors = {
        {"ok", "#2ca02c"},          {"incorrect", "#d62728"}, {"compile_error", "#ff7f0e"}, {"rejected", "#9467bd"},
        {"runtime_error", "#8c564b"}, {"timeout", "#e377c2"}, {"crash", "#000000"},          {"no candidate", "#bbbbbb"},
        {kFromKernelOutcome, "#1f77b4"}};
    const VerdictMix mix = verdict_mix(data);
    StackedBars chart;
    chart.title = "Verdict mix by iteration";
    chart.x.label = "iteration";
    chart.y.label = "iterations (all runs)";
    for (int i : mix.iterations) chart.categories.push_back(std::to_string(i));
    chart.stacks = mix.outcomes;
    chart.values = mix.counts;
    for (const auto& o : mix.outcomes) chart.colors.push_back(kColors.count(o) ? kColors.at(o) : "#17becf");
    return figure("verdict-mix", render_stacked_bars(chart),
                  "What became of each iteration's proposal, counted over the runs: its verdict, or no candidate. In a "
                  "--from run, iteration 1 holds the user's own kernel (\"the --from kernel\"), not a proposal.");
}

std::string repair_figure(const ReportData& data) {
    const RepairStats s = repair_stats(data);
    BarChart chart;
    chart.title = "Repairs: speed-up of correct candidates";
    chart.y.label = "median speed-up over the seed";
    double top = 1;
    for (const auto& [label, g] : {std::pair{"first try", s.first_try}, std::pair{"repaired", s.repaired}}) {
        chart.bars.push_back({label, fmt::format("{} (n={})", speedup_text(g.median_speedup), g.count),
                              g.median_speedup.value_or(0)});
        top = std::max(top, g.median_speedup.value_or(0));
    }
    chart.y_max = top;
    return figure("repairs", render_bar_chart(chart),
                  "Correct proposals whose previous evaluated attempt (the one the proposer was shown) was correct "
                  "(first try) or was not (repaired); the search's own in-distribution score over the seed's (each "
                  "from one evaluation, not the gate's side-by-side timing).");
}

// "2 tasks (saxpy, heat2d)"
std::string named_count(const std::vector<std::string>& names, const char* one, const char* many) {
    return fmt::format("{} {} ({})", names.size(), names.size() == 1 ? one : many, fmt::join(names, ", "));
}

// What a share that cannot be computed lacks: varied correctness, and two groups of its kind.
std::string variance_needs(const VarianceExplained& v) {
    const std::string mix = v.candidates == 0 ? "no proposal was evaluated"
                            : v.correct == 0   ? fmt::format("all {} evaluated proposals were incorrect", v.candidates)
                            : v.correct == v.candidates ? fmt::format("all {} evaluated proposals were correct", v.candidates)
                                                        : fmt::format("{} of {} evaluated proposals were correct", v.correct, v.candidates);
    return fmt::format("It needs correct and incorrect proposals among those evaluated, over at least two tasks (for the "
                       "task's share) or two models (for the model's share); in this report {}, on {} by {}.",
                       mix, named_count(v.tasks, "task", "tasks"), named_count(v.models, "model", "models"));
}

// The bars that can be computed; in place of a chart that would hold none, a sentence saying why.
std::string variance_figure(const ReportData& data) {
    const VarianceExplained v = correctness_variance(data);
    if (!v.by_task && !v.by_model)
        return fmt::format("<p class=\"not-drawn\" id=\"fig-variance\"><b>Correctness variance explained</b>: not drawn. {}</p>\n",
                           escape_html(variance_needs(v)));
    BarChart chart;
    chart.title = "Correctness variance explained";
    chart.y.label = "eta squared";
    chart.y_max = 1;
    std::string left_out;
    for (const auto& [label, value] : {std::pair{"by task", v.by_task}, std::pair{"by model", v.by_model}}) {
        if (value) chart.bars.push_back({label, fmt::format("{:.3f}", *value), *value});
        else left_out = label;
    }
    std::string caption = fmt::format("Share of the variance of correctness (1 correct, 0 not) over {} evaluated proposals "
                                      "explained by the task and by the model (between-group over total sum of squares).",
                                      v.candidates);
    if (!left_out.empty()) caption += fmt::format(" Not drawn: {}. {}", left_out, variance_needs(v));
    return figure("variance", render_bar_chart(chart), caption);
}

// Why the gate did not hand the search's best out (within the noise, failed held out, lost), as the
// summary's JSON, the CSV's gate_reason and the handed-out file's header say.
std::string gate_reason_text(const RunFigures& f) {
    return f.gate_reason.empty() ? "" : ", the search's best: " + escape_html(f.gate_reason);
}

}  // namespace

std::string figure(const std::string& id, const std::string& svg, const std::string& caption) {
    return fmt::format("<figure id=\"fig-{}\">\n{}<figcaption>{}</figcaption>\n</figure>\n", escape_html(id), svg,
                       escape_html(caption));
}

std::string results_table(const std::vector<GroupRow>& rows) {
    std::string out =
        "<section id=\"results\"><h2>Results</h2>\n<p>Per task and model (and strategy): the median over its runs of "
        "the search's best side by side with the seed in the gate, in distribution and at the held-out size; counts, "
        "tokens and cost summed over the runs. * The median includes a best that failed its held-out check, which the "
        "gate stops at before timing: its in-distribution figure is the search's own (its score over the seed's).</p>\n"
        "<table class=\"results\">\n<tr><th>task</th><th>model</th>"
        "<th>strategy</th><th>runs</th><th>in-distribution speed-up</th><th>held-out speed-up</th><th>held-out "
        "verdict</th><th>candidates by verdict</th><th>tokens</th><th>cost (USD)</th></tr>\n";
    for (const auto& r : rows)
        out += fmt::format("<tr class=\"group\" data-task=\"{}\" data-model=\"{}\" data-strategy=\"{}\">{}{}{}{}{}{}{}{}{}{}</tr>\n",
                           escape_html(r.key.task), escape_html(r.key.model), escape_html(r.key.strategy),
                           cell("task", r.key.task), cell("model", r.key.model), cell("strategy", r.key.strategy),
                           cell("runs", runs_text(r)),
                           cell("speedup", fixed3(r.speedup) + (r.speedup_from_search ? kFromSearchMark : "")),
                           cell("heldout_speedup", fixed3(r.heldout_speedup)),
                           cell("heldout_verdict", counts_text(r.heldout_verdicts)),
                           cell("candidates", counts_text(r.candidates)), cell("tokens", std::to_string(r.tokens)),
                           cell("cost", cost_text(r.cost_usd)));
    return out + "</table>\n</section>\n";
}

std::string figures_section(const ReportData& data, const std::vector<GroupRow>& rows) {
    const bool with_strategy = several_strategies(rows);
    return "<section id=\"figures\"><h2>Figures</h2>\n" + best_so_far_figures(rows, with_strategy) +
           generalisation_figure(rows, with_strategy) + verdict_mix_figure(data) + repair_figure(data) +
           variance_figure(data) + "</section>\n";
}

std::string study_cells_section(const ReportData& data) {
    if (!data.study) return {};
    std::map<std::string, std::string> status;
    for (const auto& d : data.runs) status[d.run.run_id] = run_status_name(d.run.status);
    std::string out = "<section id=\"cells\"><h2>Study cells</h2>\n<table class=\"cells\"><tr><th>cell</th><th>task</th>"
                      "<th>model</th><th>strategy</th><th>seed</th><th>run</th><th>status</th></tr>\n";
    for (const auto& c : data.cells) {
        const std::string run = c.run_id.value_or("");
        const std::string st = run.empty() ? "not started" : status.count(run) ? status.at(run) : "missing";
        out += fmt::format("<tr class=\"cell\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                           escape_html(c.cell), escape_html(c.task), escape_html(c.model), escape_html(c.strategy), c.seed,
                           escape_html(run.empty() ? "-" : run), escape_html(st));
    }
    return out + "</table>\n</section>\n";
}

std::string runs_section(const ReportData& data) {
    std::string out = "<section id=\"runs\"><h2>Runs</h2>\n";
    for (const auto& d : data.runs) {
        const RunFigures f = run_figures(d);
        out += fmt::format("<details class=\"run\" data-run=\"{}\"><summary>{} {} {} / {} seed {}: {}{}, {} iterations, "
                           "gate speed-up {} (held out {}){}</summary>\n<table class=\"iterations\"><tr><th>iter</th><th>status</th>"
                           "<th>verdict</th><th>score</th><th>accepted</th><th>note / diagnostics</th></tr>\n",
                           escape_html(d.run.run_id), escape_html(d.run.run_id), escape_html(d.run.task),
                           escape_html(d.model), escape_html(d.run.strategy), d.seed, run_status_name(d.run.status),
                           f.outcome.empty() ? "" : ", " + escape_html(f.outcome), d.run.iterations_done,
                           speedup_text(f.speedup) + (f.speedup_from_search ? " (the search's)" : ""),
                           speedup_text(f.heldout_speedup), gate_reason_text(f));
        for (const auto& it : d.iterations) {
            const std::string text = it.verdict.empty() || it.verdict == "ok" ? it.note : it.diagnostics;
            out += fmt::format("<tr><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td>{}</td><td class=\"note\">{}</td></tr>\n",
                               it.iteration, escape_html(iteration_status_name(it.status)), escape_html(it.verdict.empty() ? "-" : it.verdict),
                               fixed3(it.score), it.accepted ? "*" : "", escape_html(text));
        }
        out += "</table>\n</details>\n";
    }
    return out + "</section>\n";
}

}  // namespace kevo::html
