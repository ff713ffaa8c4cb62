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
#include "search/run_settings.hpp"

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

// The `kevo run` command line that starts the run again as it was started: every option its stored
// settings hold, defaults included (search/run_settings.hpp), so that a changed default cannot
// change the rerun. A study's run divides by the study's pinned ceilings (the file of its device
// model beside the sweep's logs, named in its study tag); a run of its own by the device's
// calibration when it starts (the devices table gives the one used).
std::string run_command(const RunData& d, const std::string& db) {
    const auto& s = d.run.settings;
    Expected<RunOptions> stored = make_error("not stored");
    if (s.is_object()) stored = run_options_from_json(s);
    if (!stored) return fmt::format("kevo run {} (its settings are not stored)", d.run.task);
    std::vector<std::string> words = {"kevo", "run", d.run.task};
    const auto options = rerun_words(*stored);
    words.insert(words.end(), options.begin(), options.end());
    const auto study = stored->settings.is_object() ? stored->settings.value("study", nlohmann::json::object())
                                                    : nlohmann::json::object();
    if (study.contains("ceilings_file") && study["ceilings_file"].is_string())
        words.insert(words.end(), {"--ceilings", study["ceilings_file"].get<std::string>()});
    else if (study.contains("study_id") && !stored->output_dir.empty())  // a run tagged before the file was named
        words.insert(words.end(), {"--ceilings", stored->output_dir + "/sweep-" + study["study_id"].get<std::string>() +
                                                     "/ceilings.json"});
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
