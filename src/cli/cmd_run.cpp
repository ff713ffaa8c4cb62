// `kevo run TASK`: a search (CLI.md "kevo run"), or `--resume RUN_ID` to continue one.
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <regex>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/registry.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "cli/from_check.hpp"
#include "cli/inapplicable_options.hpp"
#include "core/clock.hpp"
#include "core/files.hpp"
#include "core/interrupt.hpp"
#include "core/rng.hpp"
#include "eval/calibration.hpp"
#include "eval/fraction_text.hpp"
#include "report/eval_text.hpp"
#include "search/loop.hpp"
#include "search/proposers/cmd.hpp"
#include "search/proposers/llm.hpp"
#include "search/proposers/replay.hpp"
#include "search/proposers/tune.hpp"
#include "search/strategies/registry.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

namespace kevo::cli {

namespace {

// `check`, or the word "none".
CLI::Validator or_none(CLI::Validator check) {
    const std::string description = check.get_description() + " or none";
    return CLI::Validator(
        [check](std::string& text) {
            if (text == "none") return std::string();
            const std::string error = check(text);
            return error.empty() ? error : error + " (give a number, or none to send none)";
        },
        description);
}

// The run's own defaults live in RunOptions (search/loop.hpp); the CLI takes them from there.
const RunOptions kRunDefaults{};

struct RunCliOptions {
    DeviceOptions device;
    std::string task, profile, proposer = "tune", strategy = kRunDefaults.strategy, model, base_url, command, replay_dir,
                resume, run_id, study, db = "kevo.db", roofline = "static", output_dir = "kevo-runs", from, ceilings_file;
    int iterations = kRunDefaults.iterations, warmup = kRunDefaults.warmup, repeat = kRunDefaults.repeat,
        max_repeat = kRunDefaults.max_repeat,
        stagnation = kRunDefaults.stagnation_window, gate_rounds = kRunDefaults.gate_rounds, gate_top = kRunDefaults.gate_top,
        islands = kRunDefaults.islands, migration_every = kRunDefaults.migration_every, retries = 4,
        max_proposer_failures = kRunDefaults.max_proposer_failures;
    int64_t max_tokens_total = 0;
    double max_cost = 0, max_wall = 0, timeout = kRunDefaults.timeout_s, noise_cv = kRunDefaults.noise_cv, request_timeout = 300, command_timeout = 600,
           price_in = 0, price_out = 0, retry_backoff = 1.0, stream_timeout = LlmOptions{}.stream_timeout_s;
    std::optional<int> max_prompt_tokens;  // unset: what the server reports, else the default (llm.hpp)
    // As given (a number or "none"), and as sent: unset values are left out of the request.
    std::string temperature_text = "0.7", max_tokens_text = "8192";
    std::optional<double> temperature = 0.7;
    std::optional<int> max_tokens = 8192, max_completion_tokens;
    bool stream = false, cost_from_server = false;
    uint64_t seed = 0;
    bool seed_given = false, json = false;
    std::vector<std::string> given;  // the options named on the command line (what --resume may not change)
};

// What a resume may change: the budgets, and how the proposer is reached (these do not change what
// the stored iterations mean; a change of the connection is recorded as a segment of the settings).
// Everything else would.
const std::set<std::string> kResumeMayChange = {"--resume", "--db", "--json", "--iterations", "--max-wall", "--max-cost",
                                                "--max-tokens-total", "--max-proposer-failures"};
const std::set<std::string> kResumeMayReconnect = {"--base-url", "--model", "--temperature", "--max-tokens",
                                                   "--max-completion-tokens", "--stream", "--request-timeout",
                                                   "--stream-timeout", "--max-prompt-tokens", "--retries",
                                                   "--retry-backoff", "--command", "--command-timeout"};

// --out must take files before any work is done (not only after the search).
Expected<void> check_writable_folder(const std::string& folder) {
    const std::filesystem::path probe = std::filesystem::path(folder) / fmt::format(".kevo-write-test-{}", ::getpid());
    if (auto w = write_file_atomic(probe, "kevo\n"); !w)
        return make_error(fmt::format("--out {}: cannot write there ({})", folder, w.error().message));
    std::error_code ec;
    std::filesystem::remove(probe, ec);
    return {};
}

// The proposer's settings, stored with a run and restored by --resume: one list for both.
template <class Visit>
void for_each_proposer_setting(RunCliOptions& o, Visit visit) {
    visit("model", o.model);
    visit("base_url", o.base_url);
    visit("command", o.command);
    visit("replay", o.replay_dir);
    visit("temperature", o.temperature);
    visit("max_tokens", o.max_tokens);
    visit("max_completion_tokens", o.max_completion_tokens);
    visit("stream", o.stream);
    visit("cost_from_server", o.cost_from_server);
    visit("request_timeout", o.request_timeout);
    visit("stream_timeout", o.stream_timeout);
    visit("max_prompt_tokens", o.max_prompt_tokens);
    visit("retries", o.retries);
    visit("retry_backoff", o.retry_backoff);
    visit("command_timeout", o.command_timeout);
    visit("price_in", o.price_in);
    visit("price_out", o.price_out);
}

// The settings a resume's command line names, as text, beside the stored run's: a flag is refused
// only where it would change what the run was started with.
std::map<std::string, std::pair<std::string, std::string>> resume_changes(RunCliOptions& o, const RunOptions& stored) {
    const auto backend = resolve_backend_name(o.device.backend);
    std::map<std::string, std::pair<std::string, std::string>> values = {
        {"--backend", {backend ? *backend : o.device.backend, stored.backend}},
        {"--device", {std::to_string(o.device.device), std::to_string(stored.device)}},
        {"--profile", {o.profile, stored.profile}},
        {"--proposer", {o.proposer, stored.proposer}},
        {"--strategy", {o.strategy, stored.strategy}},
        {"--stagnation", {std::to_string(o.stagnation), std::to_string(stored.stagnation_window)}},
        {"--gate-rounds", {std::to_string(o.gate_rounds), std::to_string(stored.gate_rounds)}},
        {"--gate-top", {std::to_string(o.gate_top), std::to_string(stored.gate_top)}},
        {"--islands", {std::to_string(o.islands), std::to_string(stored.islands)}},
        {"--migration-every", {std::to_string(o.migration_every), std::to_string(stored.migration_every)}},
        {"--warmup", {std::to_string(o.warmup), std::to_string(stored.warmup)}},
        {"--repeat", {std::to_string(o.repeat), std::to_string(stored.repeat)}},
        {"--max-repeat", {std::to_string(o.max_repeat), std::to_string(stored.max_repeat)}},
        {"--noise-cv", {fmt::format("{}", o.noise_cv), fmt::format("{}", stored.noise_cv)}},
        {"--timeout", {fmt::format("{}", o.timeout), fmt::format("{}", stored.timeout_s)}},
        {"--roofline", {o.roofline, roofline_mode_name(stored.roofline)}},
        {"--seed", {std::to_string(o.seed), std::to_string(stored.seed)}},
        {"--out", {o.output_dir, stored.output_dir}},
        {"--from", {o.from, stored.from_file}},
    };
    for_each_proposer_setting(o, [&](const char* key, const auto& value) {
        std::string flag = std::string("--") + key;
        std::replace(flag.begin(), flag.end(), '_', '-');
        values[flag] = {nlohmann::json(value).dump(), stored.settings.value(key, nlohmann::json(nullptr)).dump()};
    });
    return values;
}

bool given(const RunCliOptions& o, const char* flag) { return std::count(o.given.begin(), o.given.end(), flag) > 0; }

// The proposer's settings a resume continues with: the stored ones, except where the command line
// names a new connection (kResumeMayReconnect). A change is recorded as a new segment of the settings,
// {"from_iteration", "at", "changed": {key: {"from", "to"}}}, which kevo report shows; `o` ends up
// with the settings in force.
nlohmann::json reconnected_settings(RunCliOptions& o, const nlohmann::json& stored, int from_iteration) {
    nlohmann::json settings = stored, changed = nlohmann::json::object();
    // --max-completion-tokens takes the place of the stored --max-tokens (read_request_limits), and
    // a --max-tokens N that of a stored --max-completion-tokens.
    const bool completion = given(o, "--max-completion-tokens");
    const bool tokens = given(o, "--max-tokens") && o.max_tokens;
    for_each_proposer_setting(o, [&](const char* key, auto& value) {
        std::string flag = std::string("--") + key;
        std::replace(flag.begin(), flag.end(), '_', '-');
        const nlohmann::json before = stored.value(key, nlohmann::json(value));
        const bool reset = (completion && flag == "--max-tokens") || (tokens && flag == "--max-completion-tokens");
        if (!(given(o, flag.c_str()) && kResumeMayReconnect.count(flag)) && !reset) {
            value = stored.value(key, value);
            return;
        }
        if constexpr (requires { value.reset(); }) {
            if (reset) value.reset();
        }
        const nlohmann::json after = value;
        settings[key] = after;
        if (after != before) changed[key] = {{"from", before}, {"to", after}};
    });
    if (!changed.empty()) {
        nlohmann::json segment = {{"from_iteration", from_iteration}, {"at", utc_now_iso8601()}, {"changed", changed}};
        if (!settings.contains("segments") || !settings["segments"].is_array()) settings["segments"] = nlohmann::json::array();
        settings["segments"].push_back(std::move(segment));
    }
    return settings;
}

std::string api_key() {
    for (const char* name : {"KEVO_API_KEY", "OPENAI_API_KEY"})
        if (const char* v = std::getenv(name); v && *v) return v;
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

// --temperature and --max-tokens as given: a number, or "none" to leave it out of the request;
// --max-completion-tokens takes the place of --max-tokens.
Expected<void> read_request_limits(RunCliOptions& o) {
    if (o.temperature_text == "none") o.temperature.reset();
    else o.temperature = std::stod(o.temperature_text);  // the option's check accepted it as a number
    if (o.max_tokens_text == "none") o.max_tokens.reset();
    else o.max_tokens = std::stoi(o.max_tokens_text);
    if (o.max_completion_tokens) {
        if (given(o, "--max-tokens") && o.max_tokens)
            return make_error("--max-tokens and --max-completion-tokens both limit the answer; give one of them "
                              "(reasoning models take --max-completion-tokens)");
        o.max_tokens.reset();
    }
    return {};
}

bool starts_with_ci(const std::string& text, std::string_view prefix) {
    return text.size() >= prefix.size() &&
           std::equal(prefix.begin(), prefix.end(), text.begin(),
                      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

// How the llm proposer prices what it spends, checked against the budget asked for: a cost cap
// needs prices, or the server's own figure on every reply (--cost-from-server).
Expected<void> check_llm_settings(const RunCliOptions& o, double max_cost) {
    if (!starts_with_ci(o.base_url, "http://") && !starts_with_ci(o.base_url, "https://"))
        return make_error(fmt::format("--base-url {}: only http:// and https:// URLs are accepted (an OpenAI-compatible "
                                      "endpoint, e.g. https://host/v1)", o.base_url));
    const bool priced = o.price_in > 0 || o.price_out > 0;
    if (o.cost_from_server && priced)
        return make_error("--cost-from-server and --price-in/--price-out are two ways to price a run; give one of them");
    if (o.cost_from_server && o.stream)
        return make_error(fmt::format("--cost-from-server cannot be kept with --stream: the {} header is sent before "
                                      "a streamed answer is written", kServerCostHeader));
    if (max_cost > 0 && !priced && !o.cost_from_server)
        return make_error(fmt::format("--max-cost {:g} needs a price: give --price-in and --price-out (USD per million "
                                      "tokens), or --cost-from-server when the server reports each reply's cost in "
                                      "the {} header (LiteLLM's proxy does)", max_cost, kServerCostHeader));
    return {};
}

Expected<std::unique_ptr<Proposer>> make_proposer(const RunCliOptions& o, double max_cost) {
    if (max_cost > 0 && o.proposer != "llm")
        return make_error(fmt::format("--max-cost {:g}: the {} proposer spends nothing that kevo can count; a cost cap "
                                      "applies to --proposer llm", max_cost, o.proposer));
    if (o.proposer == "tune") return make_tune_proposer();
    if (o.proposer == "llm") {
        if (o.base_url.empty()) return make_error("--proposer llm needs --base-url (an OpenAI-compatible endpoint, e.g. https://host/v1)");
        if (o.model.empty()) return make_error("--proposer llm needs --model");
        if (auto ok = check_llm_settings(o, max_cost); !ok) return ok.error();
        LlmOptions l;
        l.base_url = o.base_url;
        l.model = o.model;
        l.api_key = api_key();
        l.temperature = o.temperature;
        l.max_tokens = o.max_tokens;
        l.max_completion_tokens = o.max_completion_tokens;
        l.stream = o.stream;
        l.cost_from_server = o.cost_from_server;
        l.request_timeout_s = o.request_timeout;
        l.stream_timeout_s = o.stream_timeout;
        l.max_prompt_tokens = o.max_prompt_tokens;
        l.max_retries = o.retries;
        l.backoff_initial_s = o.retry_backoff;
        l.price_prompt_per_mtok = o.price_in;
        l.price_completion_per_mtok = o.price_out;
        return make_llm_proposer(l);
    }
    if (o.proposer == "cmd") {
        if (o.command.empty()) return make_error("--proposer cmd needs --command \"PROGRAM ARGS\" (prompt on stdin, answer on stdout)");
        return make_cmd_proposer(CmdOptions{o.command, o.command_timeout});
    }
    if (o.proposer == "replay") {
        if (o.replay_dir.empty()) return make_error("--proposer replay needs --replay DIR");
        return make_replay_proposer(o.replay_dir);
    }
    return make_error(fmt::format("unknown proposer '{}'; expected tune, llm, cmd or replay", o.proposer));
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

std::string num(const std::optional<double>& v, const char* format) {
    return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::string with_spread(const std::optional<double>& speedup, const std::optional<double>& spread) {
    if (!speedup) return "-";
    return spread ? fmt::format("{:.3f}x (spread {:.1f}%)", *speedup, 100 * *spread) : fmt::format("{:.3f}x", *speedup);
}

std::string iteration_name(int iteration) {
    return iteration == 0 ? std::string("the seed") : fmt::format("iteration {}", iteration);
}

std::string outcome_text(const RunSummary& s) {
    switch (s.outcome) {
        case RunOutcome::improved: return fmt::format("improved: {} passed the gate", iteration_name(s.recommended));
        case RunOutcome::no_gain:
            return s.within_noise ? fmt::format("no_gain: {} was within the noise of the seed; the seed is handed out",
                                                iteration_name(s.within_noise->iteration))
                                  : std::string("no_gain: nothing beat the seed");
        case RunOutcome::best_failed_gate:
            return fmt::format("best_failed_gate: the search's best ({}) failed the gate; handed out {}",
                               s.rejected ? iteration_name(s.rejected->iteration) : "-", iteration_name(s.recommended));
        case RunOutcome::interrupted:
            return fmt::format("interrupted: {} after iteration {}, before the gate", s.stop_reason, s.iterations);
    }
    return {};
}

std::string proposals_text(const ProposalCounts& c) {
    return fmt::format("{} evaluated, {} without code, {} failed edits, {} duplicates, {} proposer failures", c.evaluated,
                       c.no_code, c.edit_failed, c.duplicate, c.failed);
}

std::string interrupted_text(const RunSummary& s, const std::string& db) {
    std::string out = fmt::format("\nrun {} ({}) {} after iteration {}; it is marked interrupted.\n", s.run_id, s.task,
                                  s.stop_reason, s.iterations);
    if (!s.best_path.empty())
        out += fmt::format("  best so far   {} (score {}, the seed's {}), not yet through the held-out gate\n",
                           iteration_name(s.recommended), num(s.best_score, "{:.4f}"), num(s.seed_score, "{:.4f}"));
    if (!s.best_path.empty()) out += fmt::format("  best kernel   {}\n", s.best_path);
    out += fmt::format("  proposals     {}\n", proposals_text(s.proposals));
    return out + fmt::format("  resume with   {}", s.resume ? *s.resume : resume_command(s.run_id, db, {}));
}

std::string summary_text(const RunSummary& s, const std::string& db) {
    std::string out = fmt::format(
        "\nrun {} ({}; stopped: {})\n"
        "  outcome               {}\n"
        "  seed score            {}\n"
        "  best score            {}   ({})\n"
        "  speed-up (in-dist.)   {}   (seed time / best time, side by side)\n"
        "  held-out fraction     {}   (seed: {}; best verdict there: {})\n"
        "  held-out speed-up     {}\n"
        "  proposals             {}\n"
        "  best kernel           {}\n",
        s.run_id, s.task, s.stop_reason, outcome_text(s), num(s.seed_score, "{:.4f}"), num(s.best_score, "{:.4f}"),
        iteration_name(s.recommended), with_spread(s.speedup, s.speedup_spread), fraction_text(s.heldout_fraction),
        fraction_text(s.heldout_seed_fraction), s.heldout_best_verdict,
        with_spread(s.heldout_speedup, s.heldout_speedup_spread), proposals_text(s.proposals), s.best_path);
    if (s.rejected) out += fmt::format("  rejected kernel       {}   ({})\n", s.rejected->path, s.rejected->reason);
    if (s.within_noise)
        out += fmt::format("  within the noise      {}   ({})\n", s.within_noise->path, s.within_noise->detail);
    if (!s.ceilings.source.empty()) out += fmt::format("  {}\n", ceilings_text(s.ceilings));
    return out + fmt::format("  report                kevo report {} --db {}", s.run_id, db);
}

std::string failed_gate_warning(const RunSummary& s) {
    const std::string what = s.rejected ? fmt::format("{} ({}): {}", iteration_name(s.rejected->iteration),
                                                      s.rejected->reason, s.rejected->detail)
                                        : std::string("-");
    return fmt::format("\nWARNING: the search's best kernel FAILED the gate: {}\n"
                       "WARNING: {} is {}'s kernel, which passed; the failing one is kept as {}",
                       what, s.best_path, iteration_name(s.recommended), s.rejected ? s.rejected->path : "-");
}

int run(RunCliOptions& o) {
    if (!o.resume.empty() && !o.task.empty())
        return fail(fmt::format("--resume {} continues a stored run; give no TASK with it", o.resume));
    if (!o.run_id.empty() && !o.resume.empty())
        return fail("--run-id names a new run; --resume continues a stored one: give one of them");
    static const std::regex kRunId("[A-Za-z0-9._-]{1,100}");
    if (!o.run_id.empty() && !std::regex_match(o.run_id, kRunId))
        return fail(fmt::format("--run-id {}: give letters, digits, '.', '_' and '-' only (it names files)", o.run_id));
    if (auto ok = read_request_limits(o); !ok) return fail(ok.error().message);
    install_interrupt_handlers();
    auto store = Store::open(o.db);
    if (!store) return fail(store.error().message);
    RunOptions options;
    RunExtension extension;
    if (!o.resume.empty()) {
        auto record = (*store)->load_run(o.resume);
        if (!record) return fail(record.error().message);
        auto stored = run_options_from_json(record->settings);
        if (!stored) return fail(fmt::format("run {}: {}", o.resume, stored.error().message));
        options = std::move(*stored);
        const auto changes = resume_changes(o, options);
        for (const auto& name : o.given) {
            if (kResumeMayChange.count(name) || kResumeMayReconnect.count(name)) continue;
            auto it = changes.find(name);
            if (it == changes.end() || it->second.first != it->second.second)
                return fail(fmt::format("--resume {} continues the run with its stored settings, so {} cannot change "
                                        "there{}: drop it to resume, or start a new run. A resume may change "
                                        "--iterations (to search further), --max-wall, --max-cost, --max-tokens-total, "
                                        "--max-proposer-failures, and how the proposer is reached: {}",
                                        o.resume, name,
                                        it == changes.end() ? "" : fmt::format(" (stored: {}, given: {})",
                                                                               it->second.second, it->second.first),
                                        fmt::join(kResumeMayReconnect, ", ")));
        }
        o.proposer = options.proposer;
        extension.settings = reconnected_settings(o, options.settings, record->iterations_done + 1);
        if (given(o, "--max-proposer-failures")) extension.max_proposer_failures = o.max_proposer_failures;
        if (given(o, "--iterations")) extension.iterations = o.iterations;
        if (given(o, "--max-wall")) extension.max_wall_s = o.max_wall;
        if (given(o, "--max-cost")) extension.max_cost_usd = o.max_cost;
        if (given(o, "--max-tokens-total")) extension.max_tokens_total = o.max_tokens_total;
    } else {
        if (o.task.empty()) return fail("kevo run needs a TASK (or --resume RUN_ID)");
        if (auto task = make_task(o.task); !task) return fail(task.error().message);
        auto backend = resolve_backend_name(o.device.backend);
        if (!backend) return fail(backend.error().message);
        options.task = o.task;
        options.backend = *backend;
        options.device = o.device.device;
        options.proposer = o.proposer;
        options.strategy = o.strategy;
        options.iterations = o.iterations;
        options.max_wall_s = o.max_wall;
        options.max_cost_usd = o.max_cost;
        options.max_tokens_total = o.max_tokens_total;
        options.stagnation_window = o.stagnation;
        options.max_proposer_failures = o.max_proposer_failures;
        options.gate_rounds = o.gate_rounds;
        options.gate_top = o.gate_top;
        options.islands = o.islands;
        options.migration_every = o.migration_every;
        options.warmup = o.warmup;
        options.repeat = o.repeat;
        options.max_repeat = o.max_repeat;
        options.noise_cv = o.noise_cv;
        options.timeout_s = o.timeout;
        options.roofline = o.roofline == "workload" ? RooflineMode::workload : RooflineMode::static_peak;
        options.seed = o.seed_given ? o.seed : rng::fresh_seed() & 0xFFFFFFFFull;
        options.output_dir = o.output_dir;
        if (!o.from.empty()) {
            auto from_backend = backend_for_file(options.backend, o.from);
            if (!from_backend) return fail("--from: " + from_backend.error().message);
            if (*from_backend != options.backend)
                return fail(fmt::format("--from {}: the file is for the {} backend, the run is on {} (give --backend {})",
                                        o.from, *from_backend, options.backend, *from_backend));
            auto source = read_text_file(o.from);
            if (!source) return fail("--from: " + source.error().message);
            options.from_file = o.from;
            options.from_source = std::move(*source);
        }
        if (!o.ceilings_file.empty()) {
            auto text = read_text_file(o.ceilings_file);
            if (!text) return fail("--ceilings: " + text.error().message);
            auto doc = nlohmann::json::parse(*text, nullptr, false);
            if (doc.is_discarded())
                return fail(fmt::format("--ceilings {}: not JSON (expected a calibration as kevo's cache holds it)",
                                        o.ceilings_file));
            if (auto calibration = calibration_from_json(doc); !calibration)
                return fail(fmt::format("--ceilings {}: {}", o.ceilings_file, calibration.error().message));
            options.ceilings = std::move(doc);
        }
        options.settings = nlohmann::json::object();
        for_each_proposer_setting(o, [&](const char* key, const auto& value) { options.settings[key] = value; });
        if (!o.study.empty()) {
            auto tag = study_tag(o.study);
            if (!tag) return fail(tag.error().message);
            options.settings["study"] = std::move(*tag);
        }
    }
    if (auto strategy = make_strategy(options.strategy, strategy_settings(options)); !strategy)
        return fail("--strategy: " + strategy.error().message);
    for (const auto& w : inapplicable_options(o.given, options.strategy, options.proposer)) say(o.json, "warning: " + w);
    auto proposer = make_proposer(o, extension.max_cost_usd.value_or(options.max_cost_usd));
    if (!proposer) return fail(proposer.error().message);
    if (auto w = check_writable_folder(options.output_dir.empty() ? "kevo-runs" : options.output_dir); !w)
        return fail(w.error().message);

    EvaluatorOptions eo;
    eo.backend = options.backend;
    eo.device = options.device;
    Evaluator evaluator(eo);
    auto info = evaluator.device();
    if (!info) return fail(info.error().message);
    if (o.resume.empty()) options.profile = resolve_profile(o.profile, *info);
    if (o.resume.empty() && !options.from_file.empty()) {
        auto problem = from_kernel_problem(evaluator, options);
        if (!problem) return fail(problem.error().message);
        if (*problem) return fail(**problem, kExitRejected);
    }

    SearchLoop loop(evaluator, **store, **proposer, [&](const std::string& line) { say(o.json, line); });
    auto summary = o.resume.empty() ? loop.start(options, o.run_id) : loop.resume(o.resume, extension);
    if (!summary) return fail(summary.error().message);
    if (o.json) print_json(*summary);
    if (summary->outcome == RunOutcome::interrupted) {
        say(o.json, interrupted_text(*summary, o.db));
        // An environment error (exit 2) says so on stderr, whatever the mode.
        if (summary->interruption == Interruption::proposer_unavailable)
            say(true, fmt::format("kevo: run {} interrupted: {}; mend it and resume with {}", summary->run_id,
                                  summary->stop_reason, summary->resume.value_or("")));
    } else if (!o.json) {
        say(false, summary_text(*summary, o.db));
    }
    if (summary->outcome == RunOutcome::best_failed_gate) say(o.json, failed_gate_warning(*summary));
    return exit_status(*summary);
}

}  // namespace

void setup_run(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("run", "search for a faster kernel; ends with the held-out gate (exit 1: the best failed it)");
    auto o = std::make_shared<RunCliOptions>();
    cmd->add_option("TASK", o->task, "task name (see `kevo tasks`)");
    add_device_options(*cmd, o->device);
    add_profile_option(*cmd, o->profile);
    add_json_option(*cmd, o->json);
    cmd->add_option("--proposer", o->proposer, "tune (built-in), llm, cmd or replay")
        ->capture_default_str()
        ->check(CLI::IsMember({"tune", "llm", "cmd", "replay"}));
    cmd->add_option("--iterations", o->iterations, "proposals after the seed (with --resume: search further, to N)")
        ->capture_default_str()
        ->check(whole_range(0, 100000));
    cmd->add_option("--strategy", o->strategy, strategy_help())->capture_default_str();
    cmd->add_option("--islands", o->islands, "populations of the islands strategy")
        ->capture_default_str()
        ->check(whole_range(1, 64));
    cmd->add_option("--migration-every", o->migration_every,
                    "islands: proposals between migrations of each island's best to the next along the ring (0: never)")
        ->capture_default_str()
        ->check(whole_range(0, 100000));
    cmd->add_option("--from", o->from,
                    "start from your own kernel FILE instead of the shipped seed (iteration 1; the seed stays the "
                    "gate's baseline)");
    cmd->add_option("--ceilings", o->ceilings_file,
                    "divide every figure of the run by the ceilings in FILE (a calibration JSON as kevo's cache holds "
                    "it; kevo sweep pins one per study) instead of the device's calibration when the run starts");
    cmd->add_option("--model", o->model, "LLM model name (llm)");
    cmd->add_option("--base-url", o->base_url, "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (llm); key from KEVO_API_KEY or OPENAI_API_KEY");
    cmd->add_option("--temperature", o->temperature_text, "sampling temperature, or none to send none (llm)")
        ->capture_default_str()
        ->check(or_none(finite_range(0, 2)));
    cmd->add_option("--max-tokens", o->max_tokens_text, "answer token limit (max_tokens), or none to send none (llm)")
        ->capture_default_str()
        ->check(or_none(whole_range(1, 10000000)));
    cmd->add_option("--max-completion-tokens", o->max_completion_tokens,
                    "answer token limit as max_completion_tokens, in place of --max-tokens (reasoning models; llm)")
        ->check(whole_range(1, 10000000));
    // --no-stream exists so that a resume can switch a stored --stream off (both count as "--stream").
    cmd->add_flag("--stream,!--no-stream", o->stream,
                  "ask for the answer as a stream of server-sent events; --no-stream: one whole answer (llm)");
    cmd->add_flag("--cost-from-server", o->cost_from_server,
                  "take each reply's cost from the server's x-litellm-response-cost header, and stop if one lacks it "
                  "(llm; lets --max-cost work without --price-in/--price-out)");
    cmd->add_option("--request-timeout", o->request_timeout,
                    "seconds per HTTP request; with --stream, the longest silence between bytes (llm)")
        ->capture_default_str()
        ->check(finite_range(1, 86400));
    cmd->add_option("--stream-timeout", o->stream_timeout, "with --stream: seconds the whole streamed request may take (0: no bound but --max-wall; llm)")
        ->capture_default_str()
        ->check(finite_range(0, 86400));
    cmd->add_option("--max-prompt-tokens", o->max_prompt_tokens,
                    "bound of the prompt in estimated tokens (default: the context size the server reports, else 32768; llm)")
        ->check(whole_range(256, 100000000));
    cmd->add_option("--max-proposer-failures", o->max_proposer_failures,
                    "iterations in a row the proposer may fail (server gone, key refused, ...) before the run is "
                    "interrupted, exit 2, resumable")
        ->capture_default_str()
        ->check(whole_range(1, 100000));
    cmd->add_option("--retries", o->retries, "retries after HTTP 429/5xx or a timeout (llm)")
        ->capture_default_str()
        ->check(whole_range(0, 100));
    cmd->add_option("--retry-backoff", o->retry_backoff, "first retry delay in seconds, doubling (llm)")
        ->capture_default_str()
        ->check(finite_range(0, 3600));
    cmd->add_option("--price-in", o->price_in, "USD per million prompt tokens, for cost accounting (llm)")->check(finite_range(0, 1e6));
    cmd->add_option("--price-out", o->price_out, "USD per million completion tokens (llm)")->check(finite_range(0, 1e6));
    cmd->add_option("--command", o->command, "program that reads the prompt on stdin and answers on stdout (cmd)");
    cmd->add_option("--command-timeout", o->command_timeout, "seconds the command may take per proposal (cmd)")
        ->capture_default_str()
        ->check(finite_range(1, 86400));
    cmd->add_option("--replay", o->replay_dir, "folder of candidate files, used in name order (replay)");
    cmd->add_option("--resume", o->resume, "continue the interrupted run RUN_ID");
    cmd->add_option("--max-cost", o->max_cost,
                    "stop once this many USD are spent (llm; needs --price-in/--price-out or --cost-from-server)")
        ->check(finite_range(0, 1e9));
    cmd->add_option("--max-wall", o->max_wall, "stop after this many seconds")->check(finite_range(0, 1e9));
    cmd->add_option("--max-tokens-total", o->max_tokens_total,
                    "stop once the proposer has used this many tokens, prompts and answers together (0: no limit)")
        ->check(whole_range(0, 1LL << 50));
    cmd->add_option("--run-id", o->run_id, "the new run's id (kevo sweep names its runs; default: a fresh one)");
    cmd->add_option("--study", o->study, "the study cell this run fills, as kevo sweep tags it (JSON)")->group("");
    cmd->add_option("--stagnation", o->stagnation, "iterations without improvement before optimisation dropout (0: never)")
        ->capture_default_str()
        ->check(whole_range(0, 100000));
    cmd->add_option("--gate-rounds", o->gate_rounds, "interleaved rounds per kernel the gate examines")
        ->capture_default_str()
        ->check(whole_range(1, 99));
    cmd->add_option("--gate-top", o->gate_top,
                    "kernels of the population the gate examines, best first, before it falls back to the seed")
        ->capture_default_str()
        ->check(whole_range(1, 99));
    cmd->add_option("--warmup", o->warmup, "untimed runs per size")->capture_default_str()->check(whole_range(0, 1000));
    cmd->add_option("--repeat", o->repeat, "timed runs per size")->capture_default_str()->check(whole_range(1, 10000));
    add_noise_options(*cmd, o->max_repeat, o->noise_cv);
    cmd->add_option("--timeout", o->timeout, "whole-candidate deadline in seconds")
        ->capture_default_str()
        ->check(finite_range(0.1, 86400.0));
    cmd->add_option("--roofline", o->roofline, "static or workload")->capture_default_str()->check(CLI::IsMember({"static", "workload"}));
    cmd->add_option("--db", o->db, "SQLite store")->capture_default_str();
    cmd->add_option("--out", o->output_dir, "folder for best kernels (a folder per run inside)")->capture_default_str();
    auto* seed = cmd->add_option("--seed", o->seed, "seed of the proposer's randomness and the correctness inputs");
    cmd->callback([&exit_code, o, seed, cmd] {
        o->seed_given = seed->count() > 0;
        for (const CLI::Option* option : cmd->get_options())
            if (option->count() > 0 && !option->get_lnames().empty()) o->given.push_back("--" + option->get_lnames().front());
        exit_code = run(*o);
    });
}

}  // namespace kevo::cli
