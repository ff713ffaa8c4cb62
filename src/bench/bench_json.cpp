// The JSON form of a bench report (CLI.md, `kevo bench --json`).
#include <nlohmann/json.hpp>

#include "bench/bench.hpp"
#include "eval/roofline.hpp"

namespace kevo {
namespace {

nlohmann::json size_json(const SizeResult& s) {
    nlohmann::json j = {{"correct", s.correct}, {"timed", s.timed}};
    if (!s.correct) j["error"] = s.diagnostics;
    if (s.timed) {
        j["seconds"] = s.seconds;
        j["seconds_min"] = s.seconds_min;
        j["seconds_max"] = s.seconds_max;
        j["cv"] = s.cv;
        j["achieved"] = s.achieved;
        j["unit"] = s.unit;
        // Measured basis: over the ceilings in force (static and workload), each named.
        j["ceiling_static"] = s.ceiling_static;
        j["ceiling_workload"] = s.ceiling_workload;
        j["fraction_static"] = s.ceiling_static > 0 ? s.achieved / s.ceiling_static : 0.0;
        j["fraction_workload"] = s.ceiling_workload > 0 ? s.achieved / s.ceiling_workload : 0.0;
        // Datasheet basis: over the vendor's figures (null without a datasheet entry).
        j["ceiling_datasheet"] = s.ceiling_datasheet > 0 ? nlohmann::json(s.ceiling_datasheet) : nlohmann::json(nullptr);
        j["fraction_datasheet"] = s.fraction_datasheet > 0 ? nlohmann::json(s.fraction_datasheet) : nlohmann::json(nullptr);
        // The marks `kevo eval` prints: ! implausible, ~ noisy.
        j["implausible"] = s.implausible;
        j["noisy"] = s.noisy;
    }
    return j;
}

nlohmann::json kernel_json(const EvalResult& r) {
    nlohmann::json j = {{"verdict", verdict_name(r.verdict)}, {"defines", r.defines}};
    if (r.score) j["score"] = *r.score;
    if (r.heldout_fraction) j["heldout_fraction"] = *r.heldout_fraction;
    if (const auto ds = datasheet_score(r)) j["score_datasheet"] = *ds;
    if (r.verdict != Verdict::ok) j["diagnostics"] = r.diagnostics;
    j["warnings"] = r.warnings;
    return j;
}

}  // namespace

nlohmann::json invocations_json(const BenchReport& report) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& i : report.invocations)
        list.push_back({{"started", i.started}, {"bandwidth_gbs", i.bandwidth_gbs}, {"fp32_gflops", i.fp32_gflops}});
    return list;
}

nlohmann::json to_json(const BenchReport& report) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& t : report.tasks) {
        nlohmann::json jt = {{"task", t.task}, {"bound", t.bound}, {"ok", t.ok()}};
        if (t.seed) jt["seed"] = kernel_json(*t.seed);
        if (t.best) jt["best"] = kernel_json(*t.best);
        if (!t.best_missing.empty()) jt["best_missing"] = t.best_missing;
        else jt["best_origin"] = t.best_origin;
        jt["checks"] = nlohmann::json::array();
        for (const auto& c : t.checks) {
            nlohmann::json jc = {{"profile", c.profile}, {"verdict", verdict_name(c.verdict)}, {"seconds", c.seconds}};
            if (!c.diagnostics.empty()) jc["diagnostics"] = c.diagnostics;
            jt["checks"].push_back(jc);
        }
        jt["sizes"] = nlohmann::json::array();
        for (const auto& s : t.sizes) {
            nlohmann::json js = {{"label", s.label}, {"heldout", s.heldout}};
            if (s.seed) js["seed"] = size_json(*s.seed);
            if (s.best) js["best"] = size_json(*s.best);
            if (auto sp = s.speedup()) js["speedup"] = *sp;
            js["peers"] = nlohmann::json::array();
            for (const auto& p : s.peers) {
                nlohmann::json jp = {{"name", p.name}, {"library", p.library}};
                if (p.ran()) {
                    jp["seconds"] = p.seconds;
                    jp["seconds_min"] = p.seconds_min;
                    jp["seconds_max"] = p.seconds_max;
                    jp["check"] = p.check;
                    if (const auto sp = s.speedup_over(p)) jp["best_speedup"] = *sp;
                } else {
                    jp["error"] = p.error;
                }
                js["peers"].push_back(jp);
            }
            jt["sizes"].push_back(js);
        }
        tasks.push_back(jt);
    }
    nlohmann::json ceilings = nullptr, datasheet = nullptr;
    if (report.ceilings) {
        const CeilingsUsed used = ceilings_used(*report.ceilings);
        ceilings = {{"basis", "measured"},
                    {"source", report.ceilings->source},
                    {"bandwidth_gbs", report.ceilings->bandwidth_gbs},
                    {"fp32_gflops", report.ceilings->fp32_gflops},
                    {"measured_at", report.ceilings->measured_at},
                    {"tensor", used.tensor}};
        if (report.ceilings->datasheet)
            datasheet = {{"basis", "datasheet"},
                         {"name", report.ceilings->datasheet->name},
                         {"bandwidth_gbs", used.datasheet_bandwidth_gbs},
                         {"fp32_gflops", used.datasheet_fp32_gflops},
                         {"tensor", used.datasheet_tensor}};
    }
    return {{"device", report.device.name},
            {"ceilings", ceilings},
            {"datasheet", datasheet},
            {"backend", report.device.backend},
            {"language", report.language},
            {"driver", report.device.driver},
            {"profile", report.profile},
            {"check_profiles", report.check_profiles},
            {"started", report.started},
            {"invocations", invocations_json(report)},
            {"ok", report.ok()},
            {"status", report.interrupted.empty() ? "complete" : "interrupted"},
            {"interrupted", report.interrupted.empty() ? nlohmann::json(nullptr) : nlohmann::json(report.interrupted)},
            {"tasks", tasks}};
}

}  // namespace kevo
