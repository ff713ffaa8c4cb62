// `kevo report RUN|--all`: a stored run (settings, iterations, held-out gate) or the list of runs;
// `kevo report RUN|--study ID|--all --html FILE`: the study report, one self-contained page;
// `kevo report --study ID`: the study's aggregates per model, strategy and pack (docs/packs.md).
#include <algorithm>
#include <limits>
#include <optional>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/report_scope.hpp"
#include "core/files.hpp"
#include "pack/pack.hpp"
#include "report/html/html_report.hpp"
#include "report/run_pack.hpp"
#include "report/run_report.hpp"
#include "report/study_aggregates.hpp"
#include "store/store.hpp"

namespace kevo::cli {

namespace {

struct ReportOptions {
    ScopeOptions scope;
    std::string db = "kevo.db", html, weights;
    std::optional<int> iteration;
    bool json = false;
};

// --weights FILE replaces its own pack's weights only: say so when none of the tasks reported is
// in that pack, instead of accepting the file and leaving every figure as it was.
void warn_unused_weights(const ReportOptions& o, const PackWeightsSet& weights, const std::vector<std::string>& tasks) {
    if (o.weights.empty() || weights.given_pack.empty()) return;
    const auto in_pack = pack_tasks(weights.given_pack);
    for (const auto& t : tasks)
        if (std::find(in_pack.begin(), in_pack.end(), t) != in_pack.end()) return;
    say(o.json, fmt::format("warning: --weights {} holds weights of pack {}, which no task reported here ({}) is in; it "
                            "changes nothing", o.weights, weights.given_pack, fmt::join(tasks, ", ")));
}

Expected<ReportData> report_data(const ReportOptions& o, Store& store, const std::string& command) {
    auto scope = scope_from(o.scope, command);
    if (!scope) return scope.error();
    auto data = collect_report_data(store, *scope);
    if (!data) return data.error();
    auto weights = load_pack_weights(o.weights);
    if (!weights) return weights.error();
    std::vector<std::string> tasks;
    for (const auto& d : data->runs)
        if (std::find(tasks.begin(), tasks.end(), d.run.task) == tasks.end()) tasks.push_back(d.run.task);
    warn_unused_weights(o, *weights, tasks);
    data->weights = std::move(*weights);
    return data;
}

int html_report(const ReportOptions& o, Store& store) {
    auto data = report_data(o, store, "kevo report --html");
    if (!data) return fail(data.error().message);
    if (auto ok = write_file_atomic(o.html, render_html_report(*data)); !ok)
        return fail(fmt::format("--html {}: {}", o.html, ok.error().message));
    // --json prints one document (the path written), as every --json command does.
    if (o.json) print_json({{"html", o.html}});
    else say(false, o.html + "\n");
    return kExitOk;
}

// `kevo report --study ID` as text: the study's aggregates per model, strategy and pack.
int study_text_report(const ReportOptions& o, Store& store) {
    auto data = report_data(o, store, "kevo report --study");
    if (!data) return fail(data.error().message);
    const auto rows = study_aggregates(*data);
    if (o.json) {
        print_json({{"study_id", data->scope.id}, {"aggregates", study_aggregates_json(rows)}});
    } else {
        say(false, fmt::format("study {}: {} runs\n{}(the whole report: --html FILE)", data->scope.id, data->runs.size(),
                               render_study_aggregates_text(rows)));
    }
    return kExitOk;
}

int run(const ReportOptions& o) {
    if (o.iteration && (o.scope.all || !o.scope.study_id.empty() || !o.html.empty()))
        return fail("--iteration N shows one iteration of one RUN (not with --all, --study or --html)");
    if (o.html.empty() && o.scope.study_id.empty() && o.scope.run_id.empty() == !o.scope.all)
        return fail("kevo report needs a RUN id, --study ID or --all (one of them)");
    // Reading only: a read-only store, or an empty file, stays exactly as it is.
    auto store = Store::open(o.db, Store::Access::read_only);
    if (!store) return fail(store.error().message);
    if (!o.html.empty()) return html_report(o, **store);
    if (!o.scope.study_id.empty()) return study_text_report(o, **store);
    const bool all = o.scope.all;
    auto doc = all           ? all_runs_json(**store)
               : o.iteration ? iteration_report_json(**store, o.scope.run_id, *o.iteration)
                             : run_report_json(**store, o.scope.run_id);
    if (!doc) return fail(doc.error().message);
    if (!all && !o.iteration) {
        auto weights = load_pack_weights(o.weights);
        if (!weights) return fail(weights.error().message);
        warn_unused_weights(o, *weights, {(*doc)["task"].get<std::string>()});
        const auto& best = (*doc)["best_score"];
        (*doc)["pack"] = run_pack_json((*doc)["task"].get<std::string>(),
                                       best.is_number() ? std::optional<double>(best.get<double>()) : std::nullopt, *weights);
    }
    if (o.json) print_json(*doc);
    else say(false, all ? render_runs_text(*doc) : o.iteration ? render_iteration_text(*doc) : render_run_text(*doc));
    return kExitOk;
}

}  // namespace

void setup_report(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("report", "render a stored run, or all runs; --html: a study report page");
    auto o = std::make_shared<ReportOptions>();
    add_scope_options(*cmd, o->scope);
    cmd->add_option("--iteration", o->iteration, "one iteration in full: the stored prompt, answer and candidate")
        ->check(whole_range(0, std::numeric_limits<int>::max()));
    cmd->add_option("--html", o->html, "write the report as one self-contained HTML page (figures as inline SVG)");
    cmd->add_option("--db", o->db, "SQLite store (default kevo.db)");
    cmd->add_option("--weights", o->weights,
                    "a weights file (docs/packs.md) used for its pack's S_agg in place of the pack's shipped one")
        ->check(CLI::ExistingFile);
    add_json_option(*cmd, o->json);
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
