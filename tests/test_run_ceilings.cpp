// A run divides every iteration by the ceilings it started with, resumed ones included: kevo's run
// command on scripted evaluations (kevo_scripted) runs a replay search that stops when its second
// proposal's evaluation fails, as after a kill; the device is then recalibrated (the scripted
// device's calibration changes: other bandwidth, later time), and the resumed run's iterations still
// name (and divide by) the first calibration, while it says that a newer one exists and is not mixed
// in. A fresh evaluation after the calibration does use the new one: the test is not vacuous. (That
// `kevo calibrate` replaces the cached calibration which a real evaluation then uses is
// test_calibration's.)
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "scripted_evaluator.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using kevo::test::run_scripted_kevo;

std::string temp_path(const std::string& name) { return kevo::test::temp_path("kevo_run_ceilings", name); }

// The seed with a line of code added: correct, as fast, and not its duplicate.
std::string seed_variant(int n) {
    return fmt::format("#define KEVO_VARIANT_{} 1\n{}", n, kevo::task_file("saxpy", "seed.cl"));
}

TEST(RunCeilings, ARunResumedAfterARecalibrationKeepsTheCeilingsItStartedWith) {
    const std::string dir = temp_path("replay"), db = temp_path("run.db"), out = temp_path("out");
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::remove(db);
    for (int i = 1; i <= 3; ++i) std::ofstream(fmt::format("{}/{:02}.cl", dir, i)) << seed_variant(i);
    {
        // The seed's and iteration 1's evaluations, then the worker "dies" at iteration 2.
        kevo::test::ScopedEnv dies("KEVO_SCRIPTED_FAIL_AFTER", "2");
        const auto stopped = run_scripted_kevo({"run", "saxpy", "--backend", "opencl", "--profile", "small", "--proposer",
                                                "replay", "--replay", dir, "--iterations", "3", "--gate-rounds", "1",
                                                "--seed", "5", "--db", db, "--out", out});
        ASSERT_EQ(stopped.exit_code, 2) << stopped.err;
    }
    const auto first = kevo::test::scripted_calibration();
    const auto newer = kevo::test::scripted_calibration(80, "2026-02-01T00:00:00Z");
    kevo::test::ScopedEnv bandwidth("KEVO_SCRIPTED_BANDWIDTH", "80");
    kevo::test::ScopedEnv measured_at("KEVO_SCRIPTED_MEASURED_AT", newer.measured_at);

    std::string run_id, pinned;
    double pinned_bandwidth = 0;
    {
        auto store = kevo::Store::open(db, kevo::Store::Access::read_only);
        ASSERT_TRUE(store.has_value());
        auto runs = (*store)->list_runs();
        ASSERT_TRUE(runs.has_value() && runs->size() == 1u);
        run_id = runs->front().run_id;
        EXPECT_EQ(runs->front().status, kevo::RunStatus::interrupted);
        EXPECT_EQ(runs->front().iterations_done, 1);
        pinned = runs->front().settings["ceilings"].value("measured_at", "");
        pinned_bandwidth = runs->front().settings["ceilings"].value("bandwidth_gbs", 0.0);
    }
    ASSERT_EQ(pinned, first.measured_at) << "the run recorded the ceilings it started with";
    ASSERT_EQ(pinned_bandwidth, first.bandwidth_gbs);

    const auto resumed = run_scripted_kevo({"run", "--resume", run_id, "--db", db, "--out", out, "--json"});
    ASSERT_EQ(resumed.exit_code, 0) << resumed.err;
    EXPECT_NE(resumed.err.find("keeps the ceilings it started with"), std::string::npos) << resumed.err;
    EXPECT_NE(resumed.err.find(newer.measured_at), std::string::npos) << "the newer calibration is named: " << resumed.err;
    EXPECT_NE(resumed.err.find("is not mixed in"), std::string::npos) << resumed.err;
    EXPECT_EQ(resumed.json()["ceilings"].value("measured_at", ""), pinned) << resumed.out;
    EXPECT_EQ(resumed.json()["ceilings"].value("bandwidth_gbs", 0.0), pinned_bandwidth) << "the gate's fractions too";

    // Every evaluated iteration, before and after the stop, names the first calibration and divides by it.
    auto store = kevo::Store::open(db, kevo::Store::Access::read_only);
    ASSERT_TRUE(store.has_value());
    auto rows = (*store)->load_iterations(run_id);
    ASSERT_TRUE(rows.has_value());
    int evaluated_after_the_stop = 0;
    for (const auto& row : *rows) {
        if (row.status != kevo::IterationStatus::evaluated || !row.result.is_object()) continue;
        EXPECT_EQ(row.result["ceilings"].value("measured_at", ""), pinned) << "iteration " << row.iteration;
        for (const auto& size : row.result["sizes"])
            EXPECT_DOUBLE_EQ(size.value("ceiling_static", 0.0), pinned_bandwidth) << "iteration " << row.iteration;
        ASSERT_TRUE(row.score.has_value());
        EXPECT_DOUBLE_EQ(*row.score, kevo::test::ScriptedEvaluator::kSeedGbs / pinned_bandwidth) << "iteration " << row.iteration;
        evaluated_after_the_stop += row.iteration >= 2;
    }
    EXPECT_EQ(evaluated_after_the_stop, 2);

    // A new evaluation divides by the newer calibration.
    const std::string seed = temp_path("seed.cl");
    std::ofstream(seed) << kevo::task_file("saxpy", "seed.cl");
    const auto fresh = run_scripted_kevo({"eval", "saxpy", seed, "--backend", "opencl", "--profile", "small", "--json"});
    ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
    EXPECT_EQ(fresh.json()["ceilings"].value("measured_at", ""), newer.measured_at) << fresh.out;
    EXPECT_DOUBLE_EQ(fresh.json()["score"].get<double>(), kevo::test::ScriptedEvaluator::kSeedGbs / newer.bandwidth_gbs);
}

}  // namespace
