// `kevo run TASK`: a search (docs/cli.md "kevo run"), or `--resume RUN_ID` to continue one. The
// run's options are the option table's (search/options.hpp, declared by cli/run_flags.hpp) and
// the proposer comes from its registry (search/proposers/registry.hpp), so nothing here names an
// option of a part or a proposer.
#include <unistd.h>

#include <cassert>
#include <filesystem>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/registry.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/from_check.hpp"
#include "cli/inapplicable_options.hpp"
#include "cli/run_flags.hpp"
#include "cli/run_text.hpp"
#include "core/files.hpp"
#include "core/interrupt.hpp"
#include "core/rng.hpp"
#include "eval/calibration.hpp"
#include "eval/evaluator_factory.hpp"
#include "knowledge/library.hpp"
#include "search/loop.hpp"
#include "search/options.hpp"
#include "search/proposers/registry.hpp"
#include "search/run_settings.hpp"
#include "search/strategies/registry.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

namespace kevo::cli {
namespace {

// What `kevo run` is given besides the run's options: which run, where it is kept, how to print.
struct RunInvocation {
    std::string task, resume, run_id, study, db = "kevo.db", ceilings_file;
    bool json = false;
    RunFlags flags;
    std::vector<std::string> given;  // every long flag named on the command line
};

// The flags a resume may give that are no run option.
const std::set<std::string> kResumeInvocationFlags = {"--resume", "--db", "--json"};

Expected<void> check_invocation(const RunInvocation& o) {
    if (!o.resume.empty() && !o.task.empty())
        return make_error(fmt::format("--resume {} continues a stored run; give no TASK with it", o.resume));
    if (!o.run_id.empty() && !o.resume.empty())
        return make_error("--run-id names a new run; --resume continues a stored one: give one of them");
    static const std::regex kRunId("[A-Za-z0-9._-]{1,100}");
    if (!o.run_id.empty() && !std::regex_match(o.run_id, kRunId))
        return make_error(fmt::format("--run-id {}: give letters, digits, '.', '_' and '-' only (it names files)", o.run_id));
    return {};
}

// --out must take files before any work is done (not only after the search).
Expected<void> check_writable_folder(const std::string& folder) {
    const std::filesystem::path probe = std::filesystem::path(folder) / fmt::format(".kevo-write-test-{}", ::getpid());
    if (auto w = write_file_atomic(probe, "kevo\n"); !w)
        return make_error(fmt::format("--out {}: cannot write there ({})", folder, w.error().message));
    std::error_code ec;
    std::filesystem::remove(probe, ec);
    return {};
}

// --study: the sweep's tag of the run, {"study_id", "cell", "model"}, stored in its settings.
Expected<nlohmann::json> study_tag(const std::string& text) {
    auto tag = nlohmann::json::parse(text, nullptr, false);
    if (tag.is_discarded() || !tag.is_object())
        return make_error(fmt::format("--study {}: expected a JSON object {{\"study_id\": ..., \"cell\": ..., \"model\": ...}}", text));
    for (const char* key : {"study_id", "cell", "model"})
        if (!tag.contains(key) || !tag[key].is_string())
            return make_error(fmt::format("--study {}: \"{}\" (a string) is missing", text, key));
    return tag;
}

// --from: the user's kernel, of the run's backend and language, read once when the run starts. A
// run not given --language takes the file's.
Expected<void> read_from_kernel(RunOptions& options, bool language_given) {
    auto from_backend = backend_for_file(options.backend, options.from_file);
    if (!from_backend) return make_error("--from: " + from_backend.error().message);
    if (*from_backend != options.backend)
        return make_error(fmt::format("--from {}: the file is for the {} backend, the run is on {} (give --backend {})",
                                      options.from_file, *from_backend, options.backend, *from_backend));
    const std::string file_language = language_of_file(options.from_file);
    if (!file_language.empty() && !language_given) options.language = file_language;
    if (auto run = run_language(options); run && !file_language.empty() && file_language != (*run)->name)
        return make_error(fmt::format("--from {}: the file is {} (.{}), the run's --language is {}; give a .{} file or "
                                      "--language {}",
                                      options.from_file, language_name(language_named(file_language)),
                                      language_suffix(language_named(file_language)), (*run)->name,
                                      language_suffix(*run), file_language));
    auto source = read_text_file(options.from_file);
    if (!source) return make_error("--from: " + source.error().message);
    options.from_source = std::move(*source);
    return {};
}

// The run's language is one its backend compiles, and the task has a seed in it.
Expected<void> check_run_language(const RunOptions& options) {
    auto language = run_language(options);
    if (!language) return make_error("--language: " + language.error().message);
    const std::string seed = "seed." + std::string(language_suffix(*language));
    if (!task_file(options.task, seed).empty()) return {};
    return make_error(fmt::format("task {} has no {} seed (tasks/{}/{}); the tasks with one: {}", options.task,
                                  language_name(*language), options.task, seed, fmt::join(tasks_shipping(seed), ", ")));
}

// --ceilings: a calibration as kevo's cache holds it.
Expected<nlohmann::json> read_ceilings(const std::string& file) {
    auto text = read_text_file(file);
    if (!text) return make_error("--ceilings: " + text.error().message);
    auto doc = nlohmann::json::parse(*text, nullptr, false);
    if (doc.is_discarded())
        return make_error(fmt::format("--ceilings {}: not JSON (expected a calibration as kevo's cache holds it)", file));
    if (auto calibration = calibration_from_json(doc); !calibration)
        return make_error(fmt::format("--ceilings {}: {}", file, calibration.error().message));
    return doc;
}

// A new run: the options as given, placed where the run stores them, and the files they name read.
Expected<RunOptions> new_run_options(const RunInvocation& o, nlohmann::json values, const std::set<std::string>& given) {
    if (o.task.empty()) return make_error("kevo run needs a TASK (or --resume RUN_ID)");
    if (auto task = make_task(o.task); !task) return task.error();
    auto backend = resolve_backend_name(values["backend"].get<std::string>());
    if (!backend) return backend.error();
    values["backend"] = *backend;
    if (const ProposerEntry* p = find_proposer(values["proposer"].get<std::string>()); p && p->settle)
        if (auto ok = p->settle(values, given); !ok) return ok.error();
    auto options = apply_option_values(RunOptions{}, values);
    if (!options) return options.error();
    options->task = o.task;
    if (!given.count("seed")) options->seed = rng::fresh_seed() & 0xFFFFFFFFull;
    if (!options->from_file.empty())
        if (auto ok = read_from_kernel(*options, given.count("language") > 0); !ok) return ok.error();
    if (auto ok = check_run_language(*options); !ok) return ok.error();
    if (!o.ceilings_file.empty()) {
        auto ceilings = read_ceilings(o.ceilings_file);
        if (!ceilings) return ceilings.error();
        options->ceilings = std::move(*ceilings);
    }
    if (!o.study.empty()) {
        auto tag = study_tag(o.study);
        if (!tag) return tag.error();
        options->settings["study"] = std::move(*tag);
    }
    return options;
}

// A resume: the stored options, which the command line may extend (the budgets) or reconnect (how
// the proposer is reached) but not change.
Expected<RunExtension> resume_extension(Store& store, const RunInvocation& o, const nlohmann::json& values,
                                        const std::set<std::string>& given, RunOptions& options) {
    auto record = store.load_run(o.resume);
    if (!record) return record.error();
    auto stored = run_options_from_json(record->settings);
    if (!stored) return make_error(fmt::format("run {}: {}", o.resume, stored.error().message));
    options = std::move(*stored);
    for (const auto& flag : o.given)
        if (!kResumeInvocationFlags.count(flag) && !find_run_option_by_flag(flag))
            return make_error(resume_refusal(o.resume, flag));
    if (auto ok = check_resume_options(o.resume, given, values, options); !ok) return ok.error();
    auto settings = reconnected_settings(options, given, values, record->iterations_done + 1);
    if (!settings) return settings.error();
    RunExtension extension = extended_budgets(given, values);
    extension.settings = std::move(*settings);
    return extension;
}

// improved and no_gain succeed; a best that failed the gate is 1, so that scripts notice; a run
// stopped by a signal ends as the signal would (128 + its number), one whose proposer could not be
// reached as an environment error (2); both resumable.
int exit_status(const RunSummary& s) {
    switch (s.outcome) {
        case RunOutcome::improved:
        case RunOutcome::no_gain: return kExitOk;
        case RunOutcome::best_failed_gate: return kExitRejected;
        case RunOutcome::interrupted:
            return s.interruption == Interruption::proposer_unavailable ? kExitUsage : 128 + interrupt_signal();
    }
    return kExitUsage;
}

int report_summary(const RunSummary& summary, const RunInvocation& o) {
    if (o.json) print_json(summary);
    if (summary.outcome == RunOutcome::interrupted) {
        say(o.json, interrupted_text(summary, o.db));
        // An environment error (exit 2) says so on stderr, whatever the mode.
        if (summary.interruption == Interruption::proposer_unavailable)
            say(true, fmt::format("kevo: run {} interrupted: {}; mend it and resume with {}", summary.run_id,
                                  summary.stop_reason, summary.resume.value_or("")));
    } else if (!o.json) {
        say(false, summary_text(summary, o.db));
    }
    if (summary.outcome == RunOutcome::best_failed_gate) say(o.json, failed_gate_warning(summary));
    return exit_status(summary);
}

// A notes folder is stored as an absolute path (a resume from another folder finds it), and read
// once now, so that a missing folder or a note that does not parse stops the run before it starts.
Expected<void> check_knowledge(RunOptions& options, bool new_run) {
    const RunOption* option = find_run_option("knowledge");
    assert(option);
    if (new_run && !is_path_word(*option, options.knowledge))
        options.knowledge = std::filesystem::absolute(options.knowledge).lexically_normal().string();
    const ProposerEntry* proposer = find_proposer(options.proposer);
    if (!proposer || !proposer->reads_prompt) return {};
    auto library = load_knowledge(options.knowledge);
    if (!library) return library.error();
    return {};
}

int run(RunInvocation& o) {
    if (auto ok = check_invocation(o); !ok) return fail(ok.error().message);
    const nlohmann::json values = option_values(o.flags);
    const std::set<std::string> given = given_options(o.flags);
    install_interrupt_handlers();
    auto store = Store::open(o.db);
    if (!store) return fail(store.error().message);
    RunOptions options;
    RunExtension extension;
    if (!o.resume.empty()) {
        auto resumed = resume_extension(**store, o, values, given, options);
        if (!resumed) return fail(resumed.error().message);
        extension = std::move(*resumed);
    } else {
        auto fresh = new_run_options(o, values, given);
        if (!fresh) return fail(fresh.error().message);
        options = std::move(*fresh);
    }
    if (auto strategy = make_strategy(options.strategy, strategy_settings(options)); !strategy)
        return fail("--strategy: " + strategy.error().message);
    for (const auto& w : inapplicable_options(o.given, options.strategy, options.proposer)) say(o.json, "warning: " + w);
    const nlohmann::json& settings = extension.settings ? *extension.settings : options.settings;
    auto language = run_language(options);
    if (!language) return fail("--language: " + language.error().message);
    if (auto knowledge = check_knowledge(options, o.resume.empty()); !knowledge) return fail(knowledge.error().message);
    auto proposer =
        make_proposer(options.proposer, {settings, extension.max_cost_usd.value_or(options.max_cost_usd), *language});
    if (!proposer) return fail(proposer.error().message);
    if (auto w = check_writable_folder(options.output_dir.empty() ? "kevo-runs" : options.output_dir); !w)
        return fail(w.error().message);

    auto evaluator = make_evaluator(EvaluatorOptions{.backend = options.backend, .device = options.device});
    auto info = evaluator->device();
    if (!info) return fail(info.error().message);
    if (o.resume.empty()) options.profile = resolve_profile(options.profile, *info);
    if (o.resume.empty() && !options.from_file.empty()) {
        auto problem = from_kernel_problem(*evaluator, options);
        if (!problem) return fail(problem.error().message);
        if (*problem) return fail(**problem, kExitRejected);
    }
    SearchLoop loop(*evaluator, **store, **proposer, [&](const std::string& line) { say(o.json, line); });
    auto summary = o.resume.empty() ? loop.start(options, o.run_id) : loop.resume(o.resume, extension);
    if (!summary) return fail(summary.error().message);
    return report_summary(*summary, o);
}

}  // namespace

void setup_run(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("run", "search for a faster kernel; ends with the held-out gate (exit 1: the best failed it)");
    auto o = std::make_shared<RunInvocation>();
    cmd->add_option("TASK", o->task, "task name (see `kevo tasks`)");
    add_json_option(*cmd, o->json);
    add_run_flags(*cmd, o->flags);
    cmd->add_option("--ceilings", o->ceilings_file,
                    "divide every figure of the run by the ceilings in FILE (a calibration JSON as kevo's cache holds "
                    "it; kevo sweep pins one per study) instead of the device's calibration when the run starts");
    cmd->add_option("--resume", o->resume, "continue the interrupted run RUN_ID");
    cmd->add_option("--run-id", o->run_id, "the new run's id (kevo sweep names its runs; default: a fresh one)");
    cmd->add_option("--study", o->study, "the study cell this run fills, as kevo sweep tags it (JSON)")->group("");
    cmd->add_option("--db", o->db, "SQLite store")->capture_default_str();
    cmd->callback([&exit_code, o, cmd] {
        for (const CLI::Option* option : cmd->get_options())
            if (option->count() > 0 && !option->get_lnames().empty()) o->given.push_back("--" + option->get_lnames().front());
        exit_code = run(*o);
    });
}

}  // namespace kevo::cli
