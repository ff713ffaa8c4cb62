// Test helper: a `kevo run` driven in this process by the real search loop, strategy, proposer and
// SQLite store, on a ScriptedEvaluator (scripted_evaluator.hpp): the options by their names in the
// option table (search/options.hpp), the proposer from its registry, a new run or a resumed one.
#pragma once

#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "scripted_evaluator.hpp"
#include "search/loop.hpp"
#include "search/proposers/registry.hpp"
#include "search/run_settings.hpp"
#include "store/store.hpp"

namespace kevo::test {

// A run of `task` at the small profile on the scripted (OpenCL) device, every other option its
// default unless `values` names it (by option name: "strategy", "iterations", "replay", ...).
inline RunOptions scripted_run_options(const std::string& task, const nlohmann::json& values) {
    nlohmann::json all = default_option_values();
    all["backend"] = "opencl";
    all["profile"] = "small";
    all["warmup"] = 1;
    all["repeat"] = 5;
    all["gate_rounds"] = 1;
    for (const auto& [name, value] : values.items()) all[name] = value;
    RunOptions base;
    base.task = task;
    auto options = apply_option_values(base, all);
    EXPECT_TRUE(options.has_value()) << (options ? "" : options.error().message);
    return options ? *options : base;
}

// A new run (`resume_id` empty) or the resumption of `resume_id` (started with `options`), through the
// real SearchLoop.
inline Expected<RunSummary> scripted_run(ScriptedEvaluator& evaluator, const std::string& db, const RunOptions& options,
                                         const std::string& resume_id = {}, const RunExtension& extension = {}) {
    auto store = Store::open(db);
    if (!store) return store.error();
    auto language = run_language(options);
    if (!language) return language.error();
    auto proposer = make_proposer(options.proposer, {options.settings, options.max_cost_usd, *language});
    if (!proposer) return proposer.error();
    SearchLoop loop(evaluator, **store, **proposer, {});
    return resume_id.empty() ? loop.start(options) : loop.resume(resume_id, extension);
}

}  // namespace kevo::test
