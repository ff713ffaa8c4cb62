// Saving and restoring a bench's progress (see bench_state.hpp).
#include "bench/bench_state.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "task/registry.hpp"

namespace kevo {
namespace {

nlohmann::json state_key(const DeviceInfo& device, const BenchOptions& options) {
    return {{"device", device.name},   {"backend", device.backend}, {"driver", device.driver},
            {"profile", options.profile}, {"seed", options.seed},      {"warmup", options.warmup},
            {"repeat", options.repeat},   {"kernels_dir", options.kernels_dir}};
}

nlohmann::json peer_json(const PeerTiming& p) {
    return {{"name", p.name},        {"library", p.library},         {"seconds", p.seconds},
            {"seconds_min", p.seconds_min}, {"seconds_max", p.seconds_max}, {"error", p.error},
            {"check", p.check}};
}

PeerTiming peer_from_json(const nlohmann::json& j) {
    PeerTiming p;
    p.name = j.value("name", "");
    p.library = j.value("library", "");
    p.seconds = j.value("seconds", 0.0);
    p.seconds_min = j.value("seconds_min", 0.0);
    p.seconds_max = j.value("seconds_max", 0.0);
    p.error = j.value("error", "");
    p.check = j.value("check", "");
    return p;
}

std::optional<SizeResult> find_size(const std::optional<EvalResult>& result, const std::string& label) {
    if (!result) return std::nullopt;
    for (const auto& s : result->sizes)
        if (s.label == label) return s;
    return std::nullopt;
}

}  // namespace

void fill_bench_sizes(BenchTask& task, const std::vector<SizeSpec>& sizes,
                      const std::map<std::string, std::vector<PeerTiming>>& peers) {
    task.sizes.clear();
    for (const auto& size : sizes) {
        BenchSize row{size.label, size.heldout, find_size(task.seed, size.label), find_size(task.best, size.label), {}};
        if (auto it = peers.find(size.label); it != peers.end()) row.peers = it->second;
        task.sizes.push_back(std::move(row));
    }
}

nlohmann::json bench_state_json(const BenchReport& report, const BenchOptions& options) {
    nlohmann::json tasks = nlohmann::json::array();
    for (const auto& t : report.tasks) {
        nlohmann::json jt = {{"task", t.task}, {"checks", nlohmann::json::array()}};
        for (const auto& c : t.checks)
            jt["checks"].push_back({{"profile", c.profile}, {"verdict", verdict_name(c.verdict)},
                                    {"diagnostics", c.diagnostics}, {"seconds", c.seconds}});
        if (t.seed) {
            jt["seed"] = to_json(*t.seed);
            if (t.best) jt["best"] = to_json(*t.best);
            jt["peers"] = nlohmann::json::object();
            for (const auto& s : t.sizes) {
                auto& list = jt["peers"][s.label] = nlohmann::json::array();
                for (const auto& p : s.peers) list.push_back(peer_json(p));
            }
        }
        tasks.push_back(jt);
    }
    return {{"kevo_bench_state", 1}, {"key", state_key(report.device, options)}, {"started", report.started},
            {"invocations", invocations_json(report)}, {"tasks", tasks}};
}

Expected<void> restore_bench_state(const nlohmann::json& state, const BenchOptions& options, BenchReport& report) {
    if (!state.is_object() || state.value("kevo_bench_state", 0) != 1)
        return make_error("not a kevo bench state file");
    const auto want = state_key(report.device, options);
    if (state["key"] != want)
        return make_error(fmt::format("it belongs to another bench ({}), not this one ({})", state["key"].dump(), want.dump()));
    report.started = state.value("started", report.started);
    for (const auto& i : state.value("invocations", nlohmann::json::array()))
        report.invocations.push_back({i.value("started", ""), i.value("bandwidth_gbs", 0.0), i.value("fp32_gflops", 0.0)});
    for (const auto& jt : state["tasks"]) {
        auto it = std::find_if(report.tasks.begin(), report.tasks.end(), [&](const BenchTask& t) { return t.task == jt.value("task", ""); });
        if (it == report.tasks.end()) continue;
        for (const auto& jc : jt["checks"]) {
            auto verdict = parse_verdict(jc.value("verdict", ""));
            if (!verdict) return verdict.error();
            it->checks.push_back({jc.value("profile", ""), *verdict, jc.value("diagnostics", ""), jc.value("seconds", 0.0)});
        }
        if (!jt.contains("seed")) continue;
        auto seed = eval_result_from_json(jt["seed"]);
        if (!seed) return seed.error();
        it->seed = std::move(*seed);
        if (jt.contains("best")) {
            auto best = eval_result_from_json(jt["best"]);
            if (!best) return best.error();
            it->best = std::move(*best);
        }
        std::map<std::string, std::vector<PeerTiming>> peers;
        for (const auto& [label, list] : jt["peers"].items())
            for (const auto& p : list) peers[label].push_back(peer_from_json(p));
        auto task = make_task(it->task);
        if (!task) return task.error();
        fill_bench_sizes(*it, (*task)->spec().profiles.at(options.profile), peers);
    }
    return {};
}

}  // namespace kevo
