// The report's "reproduce" section (see html_sections.hpp): version, store, devices and ceilings,
// the study file and the commands behind the runs.
#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/shell_word.hpp"
#include "core/version.hpp"
#include "eval/eval_types.hpp"
#include "report/eval_text.hpp"
#include "report/html/html_sections.hpp"
#include "report/html/markup.hpp"
#include "search/loop.hpp"
#include "study/option_keys.hpp"

namespace kevo::html {

namespace {

// The ceilings the run's figures were divided by: the gate's, else the seed evaluation's; "none"
// when neither is stored or readable.
CeilingsUsed run_ceilings(const RunData& d) {
    const nlohmann::json none = {{"source", "none"}};
    const nlohmann::json& summary = d.run.summary;
    const nlohmann::json& seed = d.iterations.empty() ? none : d.iterations.front().result;
    const nlohmann::json& doc = summary.is_object() && summary.contains("ceilings") ? summary["ceilings"]
                                : seed.is_object() && seed.contains("ceilings")      ? seed["ceilings"]
                                                                                     : none;
    CeilingsUsed c;
    try {
        from_json(doc, c);
    } catch (const nlohmann::json::exception&) {
        c = CeilingsUsed{};  // a stored document of another shape: say nothing rather than something wrong
        c.source = "none";
    }
    return c;
}

// A stored number as kevo run reads it back ("3", "0.05", "1e+06").
std::string number_word(const nlohmann::json& v) {
    return v.is_number_integer() || v.is_number_unsigned() ? v.dump() : fmt::format("{}", v.get<double>());
}

// The proposer's own settings (model_keys: the study file's [[models]] keys, each with its flag and
// the proposers it applies to), as the run stored them.
void add_proposer_words(std::vector<std::string>& words, const std::string& proposer, const nlohmann::json& stored) {
    using Kind = OptionKey::Kind;
    for (const auto& key : model_keys()) {
        if (key.flag.empty() || !stored.contains(key.key)) continue;
        if (std::find(key.proposers.begin(), key.proposers.end(), proposer) == key.proposers.end()) continue;
        const auto& v = stored[std::string(key.key)];
        const std::string flag(key.flag);
        if (key.kind == Kind::flag) {
            if (v.is_boolean() && v.get<bool>()) words.push_back(flag);
        } else if (v.is_null()) {
            // Left out of the request ("none"); the other keys stored null were never given.
            if (key.kind == Kind::number_or_none || key.kind == Kind::integer_or_none) words.insert(words.end(), {flag, "none"});
        } else if (v.is_string()) {
            if (!v.get<std::string>().empty()) words.insert(words.end(), {flag, v.get<std::string>()});
        } else if (v.is_number()) {
            words.insert(words.end(), {flag, number_word(v)});
        }
    }
}

// The `kevo run` command line that starts the run again as it was started: every option its stored
// settings (RunOptions) hold, defaults included, so that a changed default cannot change the rerun.
// A study's run divides by the study's pinned ceilings (the sweep's ceilings.json beside its logs);
// a run of its own by the device's calibration when it starts (the devices table gives the one used).
std::string run_command(const RunData& d, const std::string& db) {
    const auto& s = d.run.settings;
    if (!s.is_object()) return fmt::format("kevo run {} (its settings are not stored)", d.run.task);
    std::vector<std::string> words = {"kevo", "run", d.run.task, "--backend", d.run.backend, "--device",
                                      number_word(s.value("device", nlohmann::json(0))), "--profile", d.run.profile,
                                      "--proposer", d.run.proposer, "--strategy", d.run.strategy};
    auto add = [&](const char* flag, const char* key) {
        if (s.contains(key) && s[key].is_number()) words.insert(words.end(), {flag, number_word(s[key])});
    };
    add("--iterations", "iterations");
    add("--seed", "seed");
    const RunOptions defaults;
    if (d.run.strategy == "islands" || s.value("islands", defaults.islands) != defaults.islands) add("--islands", "islands");
    if (d.run.strategy == "islands" || s.value("migration_every", defaults.migration_every) != defaults.migration_every)
        add("--migration-every", "migration_every");
    for (const auto& [flag, key] : {std::pair{"--warmup", "warmup"}, {"--repeat", "repeat"}, {"--max-repeat", "max_repeat"},
                                    {"--noise-cv", "noise_cv"}, {"--timeout", "timeout_s"}, {"--stagnation", "stagnation_window"},
                                    {"--gate-rounds", "gate_rounds"}, {"--gate-top", "gate_top"}})
        add(flag, key);
    words.insert(words.end(), {"--roofline", s.value("roofline", std::string("static"))});
    for (const auto& [flag, key] : {std::pair{"--max-wall", "max_wall_s"}, {"--max-cost", "max_cost_usd"},
                                    {"--max-tokens-total", "max_tokens_total"}})
        if (s.value(key, 0.0) > 0) add(flag, key);
    if (const std::string from = s.value("from_file", std::string()); !from.empty()) words.insert(words.end(), {"--from", from});
    add_proposer_words(words, d.run.proposer, s.value("settings", nlohmann::json::object()));
    const auto study = s.value("settings", nlohmann::json::object()).value("study", nlohmann::json::object());
    const std::string out = s.value("output_dir", std::string());
    if (study.contains("study_id") && !out.empty())
        words.insert(words.end(), {"--ceilings", out + "/sweep-" + study["study_id"].get<std::string>() + "/ceilings.json"});
    if (!out.empty()) words.insert(words.end(), {"--out", out});
    words.insert(words.end(), {"--db", db});
    return shell_command(words);
}

std::string scope_command(const ReportData& data) {
    switch (data.scope.kind) {
        case ReportScope::Kind::run: return data.scope.id;
        case ReportScope::Kind::study: return "--study " + data.scope.id;
        case ReportScope::Kind::all: break;
    }
    return "--all";
}

}  // namespace

std::string reproduce_section(const ReportData& data) {
    std::string out = "<section id=\"reproduce\"><h2>What was run, where</h2>\n<table class=\"facts\">\n";
    out += fmt::format("<tr><th>kevo</th><td class=\"version\">{}</td></tr>\n", escape_html(kVersion));
    out += fmt::format("<tr><th>store</th><td>{}</td></tr>\n", escape_html(data.db_path));
    out += fmt::format("<tr><th>this page</th><td><code>kevo report {} --db {} --html FILE</code></td></tr>\n",
                       escape_html(scope_command(data)), escape_html(data.db_path));
    out += "</table>\n<h3>Devices and ceilings</h3>\n<table class=\"devices\"><tr><th>backend</th><th>device</th><th>ceilings</th><th>runs</th></tr>\n";
    std::map<std::tuple<std::string, std::string, std::string>, int> devices;
    for (const auto& d : data.runs) ++devices[{d.run.backend, d.run.device, ceilings_text(run_ceilings(d))}];
    for (const auto& [key, n] : devices)
        out += fmt::format("<tr class=\"device\"><td>{}</td><td>{}</td><td>{}</td><td>{}</td></tr>\n",
                           escape_html(std::get<0>(key)), escape_html(std::get<1>(key)), escape_html(std::get<2>(key)), n);
    out += "</table>\n";
    if (data.study) {
        const auto& s = *data.study;
        // The study's runs wrote into one folder (their --out); a rerun keeps store and folder.
        std::vector<std::string> rerun = {"kevo", "sweep", s.file_path, "--db", data.db_path};
        for (const auto& d : data.runs)
            if (const std::string out = d.run.settings.is_object() ? d.run.settings.value("output_dir", std::string()) : "";
                !out.empty()) {
                rerun.insert(rerun.end(), {"--out", out});
                break;
            }
        out += fmt::format("<h3>Study {} ({})</h3>\n<p>file {}, created {}; rerun with <code>{}</code></p>\n"
                           "<pre class=\"study-file\">{}</pre>\n",
                           escape_html(s.study_id), escape_html(s.name), escape_html(s.file_path), escape_html(s.created_at),
                           escape_html(shell_command(rerun)), escape_html(s.file_text));
    }
    out += "<h3>Runs as started</h3>\n<p class=\"note\">Each line starts its run again with every setting it was "
           "started with, into the same store under a new id. A study's runs divide by the study's pinned ceilings; a run of "
           "its own by the device's calibration when it starts (the ceilings used are in the table above).</p>\n"
           "<pre class=\"commands\">";
    std::set<std::string> seen;
    for (const auto& d : data.runs)
        if (const std::string cmd = run_command(d, data.db_path); seen.insert(cmd).second) out += escape_html(cmd) + "\n";
    return out + "</pre>\n</section>\n";
}

}  // namespace kevo::html
