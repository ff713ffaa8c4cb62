// A run divides every iteration by the ceilings it started with, resumed ones included: the real
// kevo binary runs a replay search on PoCL with its own ceiling cache, is killed after iteration 1,
// the device is recalibrated with `kevo calibrate`, and the resumed run's iterations still name
// (and divide by) the first calibration, while it says that a newer one exists and is not mixed in.
// A fresh evaluation after the calibration does use the new one: the test is not vacuous.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

namespace {

namespace fs = std::filesystem;
using kevo::test::run_kevo;
using kevo::test::slurp;

std::string temp_path(const std::string& name) { return kevo::test::temp_path("kevo_run_ceilings", name); }

// The seed with a line of code added: correct, as fast, and not its duplicate.
std::string seed_variant(int n) {
    return fmt::format("#define KEVO_VARIANT_{} 1\n{}", n, kevo::task_file("saxpy", "seed.cl"));
}

// KEVO_CACHE_DIR pointed at a copy of the tests' cache for this test's lifetime: the calibration
// below must not change what other tests divide by.
class OwnCeilingCache {
public:
    OwnCeilingCache() {
        const char* shared = std::getenv("KEVO_CACHE_DIR");
        previous_ = shared ? shared : "";
        dir_ = temp_path("cache");
        fs::remove_all(dir_);
        if (shared && fs::exists(shared)) fs::copy(shared, dir_, fs::copy_options::recursive);
        ::setenv("KEVO_CACHE_DIR", dir_.c_str(), 1);
    }
    ~OwnCeilingCache() {
        if (previous_.empty()) ::unsetenv("KEVO_CACHE_DIR");
        else ::setenv("KEVO_CACHE_DIR", previous_.c_str(), 1);
    }

private:
    std::string dir_, previous_;
};

TEST(RunCeilings, ARunResumedAfterKevoCalibrateKeepsTheCeilingsItStartedWith) {
    const int device = kevo::test::opencl_cpu_device().value_or(-1);
    if (device < 0) GTEST_SKIP() << "no OpenCL CPU device";
    OwnCeilingCache cache;
    const std::string dir = temp_path("replay"), db = temp_path("run.db"), out = temp_path("out");
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::remove(db);
    // Iteration 1 a correct variant; iteration 2 a kernel that never ends, where the run is killed.
    std::ofstream(dir + "/01.cl") << seed_variant(1);
    fs::copy_file(kevo::test::candidate("saxpy_infinite_loop.cl"), dir + "/02.cl");
    const std::string dev = std::to_string(device);
    const pid_t pid = kevo::test::spawn_kevo({"run", "saxpy", "--backend", "opencl", "--device", dev, "--profile", "small",
                                              "--proposer", "replay", "--replay", dir, "--iterations", "3", "--warmup", "1",
                                              "--repeat", "3", "--timeout", "30", "--gate-rounds", "1", "--seed", "5",
                                              "--db", db, "--out", out},
                                             temp_path("killed.log"));
    ASSERT_GT(pid, 0);
    const std::string run_id = kevo::test::wait_for_iterations(db, 1, 180);
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_FALSE(run_id.empty()) << slurp(temp_path("killed.log"));

    // The device recalibrated: the cache now holds a newer calibration.
    const auto calibrated = run_kevo({"calibrate", "--backend", "opencl", "--device", dev, "--quick", "--json"});
    ASSERT_EQ(calibrated.exit_code, 0) << calibrated.err;
    const std::string newer = calibrated.json().value("measured_at", "");
    ASSERT_FALSE(newer.empty()) << calibrated.out;

    std::string pinned;
    double pinned_bandwidth = 0;
    {
        auto store = kevo::Store::open(db, kevo::Store::Access::read_only);
        ASSERT_TRUE(store.has_value());
        auto run = (*store)->load_run(run_id);
        ASSERT_TRUE(run.has_value());
        pinned = run->settings["ceilings"].value("measured_at", "");
        pinned_bandwidth = run->settings["ceilings"].value("bandwidth_gbs", 0.0);
    }
    ASSERT_FALSE(pinned.empty()) << "the run recorded the ceilings it started with";
    ASSERT_NE(pinned, newer) << "the calibration must be a newer one";

    // Resumed from the plain files: iterations 2 and 3 are correct variants.
    fs::remove(dir + "/02.cl");
    std::ofstream(dir + "/02.cl") << seed_variant(2);
    std::ofstream(dir + "/03.cl") << seed_variant(3);
    const auto resumed = run_kevo({"run", "--resume", run_id, "--db", db, "--out", out, "--json"});
    ASSERT_TRUE(resumed.exit_code == 0 || resumed.exit_code == 1) << resumed.err;
    EXPECT_NE(resumed.err.find("keeps the ceilings it started with"), std::string::npos) << resumed.err;
    EXPECT_NE(resumed.err.find(newer), std::string::npos) << "the newer calibration is named: " << resumed.err;
    EXPECT_NE(resumed.err.find("is not mixed in"), std::string::npos) << resumed.err;
    EXPECT_EQ(resumed.json()["ceilings"].value("measured_at", ""), pinned) << resumed.out;

    // Every evaluated iteration, before and after the kill, names the first calibration and divides by it.
    auto store = kevo::Store::open(db, kevo::Store::Access::read_only);
    ASSERT_TRUE(store.has_value());
    auto rows = (*store)->load_iterations(run_id);
    ASSERT_TRUE(rows.has_value());
    int evaluated_after_the_kill = 0;
    for (const auto& row : *rows) {
        if (row.status != kevo::IterationStatus::evaluated || !row.result.is_object()) continue;
        EXPECT_EQ(row.result["ceilings"].value("measured_at", ""), pinned) << "iteration " << row.iteration;
        for (const auto& size : row.result["sizes"])
            EXPECT_DOUBLE_EQ(size.value("ceiling_static", 0.0), pinned_bandwidth) << "iteration " << row.iteration;
        evaluated_after_the_kill += row.iteration >= 2;
    }
    EXPECT_EQ(evaluated_after_the_kill, 2);

    // A new evaluation divides by the newer calibration.
    const std::string seed = temp_path("seed.cl");
    std::ofstream(seed) << kevo::task_file("saxpy", "seed.cl");
    const auto fresh = run_kevo({"eval", "saxpy", seed, "--backend", "opencl", "--device", dev, "--profile", "small",
                                 "--warmup", "1", "--repeat", "3", "--json"});
    ASSERT_EQ(fresh.exit_code, 0) << fresh.err;
    // On a loaded machine the quick calibration can come out below what saxpy then reaches; the evaluation
    // re-measures (and says so) rather than report a fraction above 1. Either way it never uses the pinned one.
    const std::string used = fresh.json()["ceilings"].value("measured_at", "");
    if (used != newer) {
        EXPECT_GT(used, newer) << "a re-measurement is newer still";
        EXPECT_NE(fresh.json()["warnings"].dump().find("the ceilings were re-measured"), std::string::npos) << fresh.out;
    }
    EXPECT_NE(used, pinned);
}

}  // namespace
