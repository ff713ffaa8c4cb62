// The report's "reproduce" section (see html_sections.hpp): version, store, devices and ceilings,
// the study file and the commands behind the runs.
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "core/version.hpp"
#include "eval/eval_types.hpp"
#include "report/eval_text.hpp"
#include "report/html/html_sections.hpp"
#include "report/html/markup.hpp"

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

std::string setting(const nlohmann::json& s, const char* key) {
    if (!s.is_object() || !s.contains(key) || s[key].is_null()) return {};
    return s[key].is_string() ? s[key].get<std::string>() : s[key].dump();
}

// The `kevo run` command line the run's stored options stand for (the proposer's own settings included).
std::string run_command(const RunData& d) {
    const auto& s = d.run.settings;
    std::string cmd = fmt::format("kevo run {} --backend {} --device {} --profile {} --proposer {} --strategy {} --iterations {} --seed {}",
                                  d.run.task, d.run.backend, setting(s, "device"), d.run.profile, d.run.proposer,
                                  d.run.strategy, setting(s, "iterations"), d.seed);
    const auto cli = s.is_object() ? s.value("settings", nlohmann::json::object()) : nlohmann::json::object();
    for (const char* key : {"model", "base_url", "command", "replay"})
        if (const std::string v = setting(cli, key); !v.empty()) cmd += fmt::format(" --{} '{}'", key == std::string("base_url") ? "base-url" : key, v);
    return cmd;
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
        out += fmt::format("<h3>Study {} ({})</h3>\n<p>file {}, created {}; rerun with <code>kevo sweep {}</code></p>\n"
                           "<pre class=\"study-file\">{}</pre>\n",
                           escape_html(s.study_id), escape_html(s.name), escape_html(s.file_path), escape_html(s.created_at),
                           escape_html(s.file_path), escape_html(s.file_text));
    }
    out += "<h3>Runs as started</h3>\n<pre class=\"commands\">";
    std::set<std::string> seen;
    for (const auto& d : data.runs)
        if (const std::string cmd = run_command(d); seen.insert(cmd).second) out += escape_html(cmd) + "\n";
    return out + "</pre>\n</section>\n";
}

}  // namespace kevo::html
