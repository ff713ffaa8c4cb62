// The gate with the replay proposer. End to end through the real binary, worker, PoCL and SQLite: a
// kernel about 6x faster than the seed that is wrong only at the held-out size is accepted by the
// search and rejected by the gate (exit 1, outcome best_failed_gate, the seed handed out as best.cl,
// the failing kernel kept beside it). On scripted evaluations (kevo_scripted), where the speed-ups
// are exact: a fast correct kernel is handed out (improved); a run where nothing beats the seed
// hands out the seed (no_gain). In each the held-out fraction and speed-up come from the same samples.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "scripted_evaluator.hpp"
#include "task/registry.hpp"

using kevo::test::candidate;
using kevo::test::opencl_cpu_device;
using kevo::test::run_kevo;
using kevo::test::run_scripted_kevo;
using kevo::test::slurp;

namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return kevo::test::temp_path("kevo_gate", name); }

// A replay folder holding the given candidate files, renamed to keep their order.
std::string replay_dir(const std::string& name, const std::vector<std::string>& files) {
    const std::string dir = temp_path(name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    for (size_t i = 0; i < files.size(); ++i)
        fs::copy_file(candidate(files[i]), fs::path(dir) / (std::to_string(10 + i) + "-" + files[i]));
    return dir;
}

// A run on the CPU's OpenCL device at the small profile, where the kernels' margins were measured;
// ten timed runs per size, so that a 6x gain stands out of the noise of a loaded machine.
kevo::test::ProcessResult replay_run(int device, const std::string& task, const std::string& dir, int iterations,
                                     const std::string& db, const std::string& out) {
    return run_kevo({"run", task, "--backend", "opencl", "--device", std::to_string(device), "--profile", "small",
                     "--proposer", "replay", "--replay", dir, "--iterations", std::to_string(iterations), "--seed", "7",
                     "--warmup", "1", "--repeat", "10", "--db", db, "--out", out, "--json"});
}

// A replay folder holding one scripted kernel: `task`'s seed, scripted as `script`.
std::string scripted_replay_dir(const std::string& name, const std::string& task, const std::string& script) {
    const std::string dir = temp_path(name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    std::ofstream(fs::path(dir) / "10.cl") << kevo::test::scripted(std::string(kevo::task_file(task, "seed.cl")), script);
    return dir;
}

// The same run on scripted evaluations.
kevo::test::ProcessResult scripted_replay_run(const std::string& task, const std::string& dir, const std::string& db,
                                              const std::string& out) {
    return run_scripted_kevo({"run", task, "--backend", "opencl", "--profile", "small", "--proposer", "replay", "--replay",
                              dir, "--iterations", "1", "--seed", "7", "--db", db, "--out", out, "--json"});
}

// The held-out fraction of the kernel handed out, over the seed's, is the held-out speed-up.
void expect_heldout_figures_agree(const nlohmann::json& s) {
    ASSERT_TRUE(s["heldout_fraction"].is_number() && s["heldout_seed_fraction"].is_number() &&
                s["heldout_speedup"].is_number()) << s.dump(2);
    const double ratio = s["heldout_fraction"].get<double>() / s["heldout_seed_fraction"].get<double>();
    EXPECT_NEAR(ratio, s["heldout_speedup"].get<double>(), 1e-9 * ratio) << s.dump(2);
}

TEST(RunGate, BestWrongAtTheHeldoutSizeIsRejectedAndAnEarlierIncumbentHandedOut) {
    const auto device = opencl_cpu_device();
    if (!device) GTEST_SKIP() << "no OpenCL CPU device";
    const std::string db = temp_path("failed.db"), out = temp_path("failed-out");
    const auto r = replay_run(*device, "nbody", replay_dir("failed-replay", {"nbody_pow2_mask.cl"}), 1, db, out);
    EXPECT_EQ(r.exit_code, 1) << "a best that failed the gate must be noticed by scripts\n" << r.err;
    const auto s = r.json();
    ASSERT_TRUE(s.is_object()) << r.out << r.err;
    const std::string run_id = s["run_id"];
    const auto rep = run_kevo({"report", run_id, "--db", db, "--json"}).json();
    ASSERT_EQ(rep["iterations"].size(), 2u);
    ASSERT_TRUE(rep["iterations"][1]["accepted"].get<bool>())
        << "the search accepts the fast kernel (it is right in distribution): " << rep["iterations"][1]["note"];

    EXPECT_EQ(s["outcome"], "best_failed_gate") << s.dump(2);
    EXPECT_EQ(s["recommended"], 0) << "the only earlier incumbent is the seed";
    ASSERT_TRUE(s["rejected"].is_object()) << s.dump(2);
    EXPECT_EQ(s["rejected"]["iteration"], 1);
    EXPECT_EQ(s["rejected"]["reason"], "heldout-incorrect");
    EXPECT_NE(s["rejected"]["detail"].get<std::string>().find("held-out size 384"), std::string::npos);
    EXPECT_NE(r.err.find("WARNING: the search's best kernel FAILED the gate"), std::string::npos) << r.err;

    // best.cl is the kernel handed out (the seed); the failing kernel is kept beside it.
    const fs::path dir = fs::path(out) / run_id;
    EXPECT_EQ(s["best_path"], (dir / "best.cl").string());
    const std::string best = slurp(s["best_path"]);
    EXPECT_NE(best.find("nbody seed (naive on purpose)"), std::string::npos) << best.substr(0, 200);
    EXPECT_EQ(s["rejected"]["path"], (dir / "rejected-heldout-incorrect.cl").string());
    EXPECT_NE(slurp(s["rejected"]["path"]).find("THE FAULT"), std::string::npos);
    EXPECT_EQ(run_kevo({"eval", "nbody", s["best_path"], "--backend", "opencl", "--device", std::to_string(*device),
                        "--sizes", "all", "--check-only", "--json"})
                  .json()["verdict"], "ok");

    // The figures describe the kernel handed out: the seed against itself.
    EXPECT_EQ(s["best_score"], s["seed_score"]);
    EXPECT_EQ(s["speedup"], 1.0);
    EXPECT_EQ(s["heldout_best_verdict"], "ok");
    expect_heldout_figures_agree(s);
    ASSERT_EQ(s["gate"].size(), 2u);
    EXPECT_FALSE(s["gate"][0]["passed"].get<bool>());
    EXPECT_EQ(s["gate"][0]["verdict"], "incorrect");
    EXPECT_EQ(s["gate"][0]["heldout_fraction"], 0.0);
    EXPECT_TRUE(s["gate"][1]["passed"].get<bool>());

    // The store holds the gate: the seed's side, the kernel handed out and the rejected one.
    ASSERT_EQ(rep["heldout"].size(), 3u) << rep["heldout"].dump(2);
    EXPECT_EQ(rep["heldout"][0]["role"], "seed");
    EXPECT_EQ(rep["heldout"][1]["role"], "best");
    EXPECT_EQ(rep["heldout"][1]["iteration"], 0);
    EXPECT_EQ(rep["heldout"][2]["role"], "rejected-1");
    EXPECT_FALSE(rep["heldout"][2]["passed"].get<bool>());
    EXPECT_EQ(rep["heldout"][2]["reason"], "heldout-incorrect");
    EXPECT_EQ(rep["summary"]["outcome"], "best_failed_gate");
    const auto text = run_kevo({"report", run_id, "--db", db});
    EXPECT_NE(text.out.find("outcome best_failed_gate (handed out: iteration 0)"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("rejected-1"), std::string::npos) << text.out;
}

TEST(RunGate, FastCorrectKernelPassesAndIsHandedOut) {
    const std::string db = temp_path("improved.db"), out = temp_path("improved-out");
    fs::remove(db);
    const auto r = scripted_replay_run("nbody", scripted_replay_dir("improved-replay", "nbody", "speed=6"), db, out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto s = r.json();
    EXPECT_EQ(s["outcome"], "improved") << s.dump(2);
    EXPECT_EQ(s["recommended"], 1);
    EXPECT_TRUE(s["rejected"].is_null());
    EXPECT_NE(slurp(s["best_path"]).find("KEVO_SCRIPT speed=6"), std::string::npos);
    EXPECT_FALSE(fs::exists(fs::path(s["best_path"].get<std::string>()).parent_path() / "rejected-heldout-incorrect.cl"));
    ASSERT_TRUE(s["speedup"].is_number() && s["speedup_spread"].is_number());
    EXPECT_NEAR(s["speedup"].get<double>(), 6.0, 1e-9) << s.dump(2);
    EXPECT_NEAR(s["heldout_speedup"].get<double>(), 6.0, 1e-9) << s.dump(2);
    EXPECT_NEAR(s["best_score"].get<double>(), 6 * s["seed_score"].get<double>(), 1e-9);
    expect_heldout_figures_agree(s);
    ASSERT_EQ(s["gate"].size(), 1u);
    EXPECT_TRUE(s["gate"][0]["passed"].get<bool>());
    EXPECT_EQ(s["gate"][0]["rounds"].size(), 3u);
    EXPECT_EQ(r.err.find("WARNING"), std::string::npos) << r.err;
}

TEST(RunGate, NothingBetterHandsOutTheSeed) {
    const std::string db = temp_path("nogain.db"), out = temp_path("nogain-out");
    fs::remove(db);
    const auto r = scripted_replay_run("saxpy", scripted_replay_dir("nogain-replay", "saxpy", "verdict=compile_error"), db, out);
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto s = r.json();
    EXPECT_EQ(s["outcome"], "no_gain") << s.dump(2);
    EXPECT_EQ(s["recommended"], 0);
    EXPECT_TRUE(s["rejected"].is_null());
    EXPECT_EQ(s["speedup"], 1.0);
    EXPECT_EQ(s["heldout_speedup"], 1.0);
    EXPECT_EQ(s["heldout_fraction"], s["heldout_seed_fraction"]);
    expect_heldout_figures_agree(s);
    EXPECT_NE(slurp(s["best_path"]).find("__kernel void saxpy"), std::string::npos);
    EXPECT_EQ(slurp(s["best_path"]).find("KEVO_SCRIPT"), std::string::npos) << "the seed, not the replayed kernel";
    ASSERT_EQ(s["gate"].size(), 1u);
    EXPECT_EQ(s["gate"][0]["iteration"], 0);
}

}  // namespace
