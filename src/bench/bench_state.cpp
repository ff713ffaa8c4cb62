// Saving and restoring a bench's progress (see bench_state.hpp).
#include "bench/bench_state.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "core/hash.hpp"
#include "core/version.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

constexpr int kStateFormat = 2;  // 1: one key for the whole file (no kernel hashes)

nlohmann::json device_key(const DeviceInfo& device) {
    return {{"device", device.name}, {"backend", device.backend}, {"driver", device.driver}};
}

// The task's sizes and check rule at one profile: a kevo whose task changed re-measures.
std::string task_digest(const std::string& task, const std::string& profile) {
    auto made = make_task(task);
    if (!made) return "unknown task";
    const TaskSpec& spec = (*made)->spec();
    std::string text = spec.tolerance;
    for (const auto& s : spec.profiles.at(profile)) {
        text += fmt::format("\n{} {}", s.label, s.heldout);
        for (const auto& [name, value] : s.params) text += fmt::format(" {}={}", name, value);
    }
    return hex64(hash64(text));
}

// Every setting that changes a correctness check's outcome.
nlohmann::json check_key(const BenchTask& t, const std::string& profile, const BenchOptions& o) {
    return {{"best", t.best_hash},   {"task", task_digest(t.task, profile)}, {"profile", profile},
            {"seed", o.seed},        {"timeout", o.timeout_s},                {"kevo", kVersion}};
}

// Every setting that changes a task's timed results.
nlohmann::json timed_key(const BenchTask& t, const BenchOptions& o) {
    return {{"seed_kernel", t.seed_hash}, {"best", t.best_hash}, {"task", task_digest(t.task, o.profile)},
            {"profile", o.profile},       {"seed", o.seed},      {"warmup", o.warmup},
            {"repeat", o.repeat},         {"timeout", o.timeout_s}, {"peers", o.peers},
            {"kevo", kVersion}};
}

// How each key field reads in a "what changed" line.
std::string field_words(const std::string& field) {
    if (field == "best") return "best kernel source";
    if (field == "seed_kernel") return "seed kernel source";
    if (field == "task") return "the task's sizes or check";
    if (field == "kevo") return "kevo version";
    return field;
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

// A task's saved timed results (its key already compared equal).
Expected<void> restore_timed(const nlohmann::json& jt, const BenchOptions& options, BenchTask& t) {
    auto seed = eval_result_from_json(jt["seed"]);
    if (!seed) return seed.error();
    t.seed = std::move(*seed);
    if (jt.contains("best")) {
        auto best = eval_result_from_json(jt["best"]);
        if (!best) return best.error();
        t.best = std::move(*best);
    }
    std::map<std::string, std::vector<PeerTiming>> peers;
    const auto saved_peers = jt.value("peers", nlohmann::json::object());  // items() must not outlive it
    for (const auto& [label, list] : saved_peers.items())
        for (const auto& p : list) peers[label].push_back(peer_from_json(p));
    auto task = make_task(t.task);
    if (!task) return task.error();
    fill_bench_sizes(t, (*task)->spec().profiles.at(options.profile), peers);
    return {};
}

// Restores one task's entries that match the present keys; returns what changed in the others.
Expected<std::vector<std::string>> restore_task(const nlohmann::json& jt, const BenchOptions& options, BenchTask& t) {
    std::vector<std::string> changes;
    auto note = [&](const nlohmann::json& saved, const nlohmann::json& now) {
        const auto what = saved.is_object() ? key_changes(saved, now) : "saved without a key (an older kevo)";
        if (std::find(changes.begin(), changes.end(), what) == changes.end()) changes.push_back(what);
    };
    for (const auto& jc : jt.value("checks", nlohmann::json::array())) {
        const std::string profile = jc.value("profile", "");
        if (std::find(options.check_profiles.begin(), options.check_profiles.end(), profile) == options.check_profiles.end())
            continue;  // not asked for this time
        const auto now = check_key(t, profile, options);
        if (jc.value("key", nlohmann::json()) != now) {
            note(jc.value("key", nlohmann::json()), now);
            continue;
        }
        auto verdict = parse_verdict(jc.value("verdict", ""));
        if (!verdict) return verdict.error();
        t.checks.push_back({profile, *verdict, jc.value("diagnostics", ""), jc.value("seconds", 0.0)});
    }
    if (jt.contains("seed")) {
        const auto now = timed_key(t, options);
        if (jt.value("key", nlohmann::json()) != now) {
            note(jt.value("key", nlohmann::json()), now);
        } else if (auto restored = restore_timed(jt, options, t); !restored) {
            return restored.error();
        }
    }
    return changes;
}

}  // namespace

std::string key_changes(const nlohmann::json& saved, const nlohmann::json& now) {
    std::vector<std::string> changed;
    for (const auto& [field, value] : now.items()) {
        const auto old = saved.value(field, nlohmann::json());
        if (old == value) continue;
        auto text = [](const nlohmann::json& v) { return v.is_null() ? std::string("none") : v.is_string() ? v.get<std::string>() : v.dump(); };
        changed.push_back(fmt::format("{} {} -> {}", field_words(field), text(old), text(value)));
    }
    return fmt::format("{}", fmt::join(changed, ", "));
}

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
                                    {"diagnostics", c.diagnostics}, {"seconds", c.seconds},
                                    {"key", check_key(t, c.profile, options)}});
        if (t.seed) {
            jt["key"] = timed_key(t, options);
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
    return {{"kevo_bench_state", kStateFormat}, {"device", device_key(report.device)}, {"started", report.started},
            {"invocations", invocations_json(report)}, {"tasks", tasks}};
}

Expected<std::vector<std::string>> restore_bench_state(const nlohmann::json& state, const BenchOptions& options,
                                                       BenchReport& report) {
    if (!state.is_object() || !state.contains("kevo_bench_state")) return make_error("not a kevo bench state file");
    std::vector<std::string> remeasured;
    if (state.value("kevo_bench_state", 0) != kStateFormat) {
        remeasured.push_back(fmt::format("re-measuring every task: the state file is in format {} (an older kevo), not {}",
                                         state.value("kevo_bench_state", 0), kStateFormat));
        return remeasured;
    }
    const auto want = device_key(report.device);
    if (state.value("device", nlohmann::json()) != want)
        return make_error(fmt::format("it belongs to another device ({}), not this one ({})",
                                      state.value("device", nlohmann::json()).dump(), want.dump()));
    bool restored_any = false;
    for (const auto& jt : state.value("tasks", nlohmann::json::array())) {
        auto it = std::find_if(report.tasks.begin(), report.tasks.end(), [&](const BenchTask& t) { return t.task == jt.value("task", ""); });
        if (it == report.tasks.end()) continue;
        auto changes = restore_task(jt, options, *it);
        if (!changes) return changes.error();
        if (!changes->empty()) remeasured.push_back(fmt::format("re-measuring {}: {}", it->task, fmt::join(*changes, "; ")));
        restored_any = restored_any || it->seed || !it->checks.empty();
    }
    // Earlier invocations contributed only when some of their checks or rows were kept.
    if (restored_any) {
        report.started = state.value("started", report.started);
        for (const auto& i : state.value("invocations", nlohmann::json::array()))
            report.invocations.push_back({i.value("started", ""), i.value("bandwidth_gbs", 0.0), i.value("fp32_gflops", 0.0)});
    }
    return remeasured;
}

}  // namespace kevo
