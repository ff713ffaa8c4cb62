// JSON forms of EvalRequest and EvalResult (the worker protocol, the store and `kevo eval --json`).
#include "eval/eval_types.hpp"

#include <cmath>

#include <fmt/format.h>

namespace kevo {

namespace {
constexpr const char* kVerdicts[] = {"ok", "compile_error", "rejected", "incorrect", "runtime_error", "timeout", "crash"};

// JSON has no NaN or infinity; a non-finite measurement is written as null.
nlohmann::json number(double v) { return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr); }
double get_number(const nlohmann::json& j, const char* key) {
    auto it = j.find(key);
    return it == j.end() || !it->is_number() ? 0.0 : it->get<double>();
}
}  // namespace

const char* verdict_name(Verdict v) { return kVerdicts[static_cast<int>(v)]; }

Expected<Verdict> parse_verdict(const std::string& name) {
    for (int i = 0; i < 7; ++i)
        if (name == kVerdicts[i]) return static_cast<Verdict>(i);
    return make_error(fmt::format("unknown verdict '{}'", name));
}

Expected<SizeSelection> parse_size_selection(const std::string& name) {
    if (name == "in") return SizeSelection::in;
    if (name == "heldout") return SizeSelection::heldout;
    if (name == "all") return SizeSelection::all;
    return make_error(fmt::format("--sizes: '{}' is not one of in, heldout, all", name));
}

Expected<RooflineMode> parse_roofline_mode(const std::string& name) {
    if (name == "static") return RooflineMode::static_peak;
    if (name == "workload") return RooflineMode::workload;
    return make_error(fmt::format("--roofline: '{}' is not one of static, workload", name));
}

nlohmann::json to_json(const EvalRequest& r) {
    const char* sizes = r.sizes == SizeSelection::in ? "in" : r.sizes == SizeSelection::heldout ? "heldout" : "all";
    return {{"task", r.task}, {"profile", r.profile}, {"source", r.source}, {"defines", r.defines},
            {"sizes", sizes}, {"warmup", r.warmup}, {"repeat", r.repeat}, {"timeout_s", r.timeout_s},
            {"compile_timeout_s", r.compile_timeout_s},
            {"roofline", r.roofline == RooflineMode::static_peak ? "static" : "workload"},
            {"seed", r.seed}, {"check_only", r.check_only}, {"device_reference", r.device_reference}};
}

Expected<EvalRequest> eval_request_from_json(const nlohmann::json& j) {
    try {
        EvalRequest r;
        r.task = j.at("task").get<std::string>();
        r.profile = j.at("profile").get<std::string>();
        r.source = j.at("source").get<std::string>();
        r.defines = j.at("defines").get<std::map<std::string, std::string>>();
        auto sizes = parse_size_selection(j.at("sizes").get<std::string>());
        if (!sizes) return sizes.error();
        r.sizes = *sizes;
        r.warmup = j.at("warmup").get<int>();
        r.repeat = j.at("repeat").get<int>();
        r.timeout_s = j.at("timeout_s").get<double>();
        r.compile_timeout_s = j.at("compile_timeout_s").get<double>();
        auto roofline = parse_roofline_mode(j.at("roofline").get<std::string>());
        if (!roofline) return roofline.error();
        r.roofline = *roofline;
        r.seed = j.at("seed").get<uint64_t>();
        r.check_only = j.at("check_only").get<bool>();
        r.device_reference = j.value("device_reference", false);
        return r;
    } catch (const nlohmann::json::exception& e) {
        return make_error(fmt::format("malformed evaluation request: {}", e.what()));
    }
}

nlohmann::json to_json(const EvalResult& r) {
    nlohmann::json sizes = nlohmann::json::array();
    for (const auto& s : r.sizes) {
        nlohmann::json js = {{"label", s.label}, {"heldout", s.heldout}, {"correct", s.correct}};
        if (!s.error_kind.empty()) {
            js["error_kind"] = s.error_kind;
            js["error"] = number(s.error);
            js["tolerance"] = number(s.tolerance);
            js["worst_index"] = s.worst_index;
        }
        if (!s.diagnostics.empty()) js["diagnostics"] = s.diagnostics;
        if (s.timed) {
            js["seconds"] = number(s.seconds);
            js["seconds_min"] = number(s.seconds_min);
            js["seconds_max"] = number(s.seconds_max);
            js["cv"] = number(s.cv);
            js["samples"] = s.samples;
            js["achieved"] = number(s.achieved);
            js["unit"] = s.unit;
            js["ceiling"] = number(s.ceiling);
            js["ceiling_static"] = number(s.ceiling_static);
            js["ceiling_workload"] = number(s.ceiling_workload);
            js["fraction"] = number(s.fraction);
            js["work"] = number(s.work);
            js["implausible"] = s.implausible;
        }
        sizes.push_back(std::move(js));
    }
    nlohmann::json resources = nlohmann::json::array();
    for (const auto& k : r.resources)
        resources.push_back({{"kernel", k.kernel}, {"registers", k.registers}, {"shared_bytes", k.shared_bytes},
                             {"local_bytes", k.local_bytes}, {"max_threads", k.max_threads},
                             {"block", k.block}, {"per_thread", k.per_thread}});
    nlohmann::json messages = nlohmann::json::array();
    for (const auto& m : r.compile_messages)
        messages.push_back({{"line", m.line}, {"column", m.column}, {"severity", m.severity}, {"message", m.message}});
    return {{"task", r.task}, {"backend", r.backend}, {"device", r.device}, {"profile", r.profile},
            {"verdict", verdict_name(r.verdict)}, {"diagnostics", r.diagnostics},
            {"score", r.score ? number(*r.score) : nlohmann::json(nullptr)},
            {"heldout_fraction", r.heldout_fraction ? number(*r.heldout_fraction) : nlohmann::json(nullptr)},
            {"sizes", sizes}, {"resources", resources}, {"compile_messages", messages},
            {"warnings", r.warnings}, {"defines", r.defines}, {"ceiling_source", r.ceiling_source},
            {"stage_seconds", {{"scan", r.stage_seconds.scan}, {"compile", r.stage_seconds.compile},
                               {"correctness", r.stage_seconds.correctness}, {"timing", r.stage_seconds.timing},
                               {"total", r.stage_seconds.total}}},
            {"seed", r.seed}};
}

Expected<EvalResult> eval_result_from_json(const nlohmann::json& j) {
    try {
        EvalResult r;
        r.task = j.at("task").get<std::string>();
        r.backend = j.at("backend").get<std::string>();
        r.device = j.at("device").get<std::string>();
        r.profile = j.at("profile").get<std::string>();
        auto verdict = parse_verdict(j.at("verdict").get<std::string>());
        if (!verdict) return verdict.error();
        r.verdict = *verdict;
        r.diagnostics = j.at("diagnostics").get<std::string>();
        if (j.at("score").is_number()) r.score = j["score"].get<double>();
        if (j.contains("heldout_fraction") && j["heldout_fraction"].is_number())
            r.heldout_fraction = j["heldout_fraction"].get<double>();
        for (const auto& js : j.at("sizes")) {
            SizeResult s;
            s.label = js.at("label").get<std::string>();
            s.heldout = js.at("heldout").get<bool>();
            s.correct = js.at("correct").get<bool>();
            s.error_kind = js.value("error_kind", "");
            s.error = get_number(js, "error");
            s.tolerance = get_number(js, "tolerance");
            s.worst_index = js.value("worst_index", int64_t{-1});
            s.diagnostics = js.value("diagnostics", "");
            s.timed = js.contains("seconds");
            s.seconds = get_number(js, "seconds");
            s.seconds_min = get_number(js, "seconds_min");
            s.seconds_max = get_number(js, "seconds_max");
            s.cv = get_number(js, "cv");
            s.samples = js.value("samples", 0);
            s.achieved = get_number(js, "achieved");
            s.unit = js.value("unit", "");
            s.ceiling = get_number(js, "ceiling");
            s.ceiling_static = get_number(js, "ceiling_static");
            s.ceiling_workload = get_number(js, "ceiling_workload");
            s.fraction = get_number(js, "fraction");
            s.work = get_number(js, "work");
            s.implausible = js.value("implausible", false);
            r.sizes.push_back(std::move(s));
        }
        for (const auto& jk : j.at("resources")) {
            KernelResources k;
            k.kernel = jk.at("kernel").get<std::string>();
            k.registers = jk.at("registers").get<int>();
            k.shared_bytes = jk.at("shared_bytes").get<int64_t>();
            k.local_bytes = jk.at("local_bytes").get<int64_t>();
            k.max_threads = jk.at("max_threads").get<unsigned>();
            k.block = jk.at("block").get<std::vector<uint64_t>>();
            k.per_thread = jk.at("per_thread").get<std::vector<uint64_t>>();
            r.resources.push_back(std::move(k));
        }
        for (const auto& jm : j.at("compile_messages"))
            r.compile_messages.push_back({jm.at("line").get<int>(), jm.at("column").get<int>(),
                                          jm.at("severity").get<std::string>(), jm.at("message").get<std::string>()});
        r.warnings = j.at("warnings").get<std::vector<std::string>>();
        r.defines = j.at("defines").get<std::map<std::string, std::string>>();
        r.ceiling_source = j.at("ceiling_source").get<std::string>();
        const auto& st = j.at("stage_seconds");
        r.stage_seconds = {st.at("scan").get<double>(), st.at("compile").get<double>(),
                           st.at("correctness").get<double>(), st.at("timing").get<double>(),
                           st.at("total").get<double>()};
        r.seed = j.at("seed").get<uint64_t>();
        return r;
    } catch (const nlohmann::json::exception& e) {
        return make_error(fmt::format("malformed evaluation result: {}", e.what()));
    }
}

}  // namespace kevo
