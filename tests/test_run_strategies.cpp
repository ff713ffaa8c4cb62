// Every strategy end to end through the real binary, worker, PoCL and SQLite, with the tune and the
// replay proposers on saxpy (whose seed declares knobs): the run is killed with SIGKILL mid-run and
// resumed with `kevo run --resume`. Timing decides what is accepted, so two runs need not agree;
// what must hold is the one rule: every stored row's strategy decision (island, parent, migrations,
// archive cell drawn, dropout) is what a strategy rebuilt from the rows before it decides, before the
// kill (the live process) and after it (the resumed one). The summary names the strategy and shows
// the population; islands ask the gate for the top kernels of the population.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "run_support.hpp"
#include "kevo_process.hpp"
#include "search/loop.hpp"
#include "search/strategies/registry.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

using kevo::test::candidate;
using kevo::test::opencl_cpu_device;
using kevo::test::run_kevo;
using kevo::test::slurp;
using kevo::test::spawn_kevo;

namespace {

namespace fs = std::filesystem;

constexpr int kIterations = 8, kKilledAfter = 4;

std::string temp_path(const std::string& name) { return kevo::test::temp_path("kevo_strategies", name); }

// Replay files: the shipped best, the seed with other knob defaults, and a kernel that does not compile.
std::string replay_dir() {
    const std::string dir = temp_path("replay");
    if (fs::exists(dir)) return dir;
    fs::create_directories(dir);
    const std::string seed = std::string(kevo::task_file("saxpy", "seed.cl"));
    const std::string broken = slurp(candidate("saxpy_compile_error.cl"));
    for (int i = 1; i <= kIterations; ++i) {
        std::ofstream file(fmt::format("{}/{:02}.cl", dir, i));
        if (i % 3 == 0) file << "// variant " << i << "\n" << broken;
        else if (i % 3 == 1) file << std::string(kevo::task_file("saxpy", "best.cl")) << "// variant " << i << "\n";
        else file << "// variant " << i << "\n" << seed;
    }
    return dir;
}

// Rebuilds the strategy row by row and checks that each proposal's stored decision is the one the
// rows before it give.
void expect_rows_follow_the_rule(kevo::Store& store, const std::string& run_id, const std::string& name) {
    auto run = store.load_run(run_id);
    ASSERT_TRUE(run.has_value());
    auto options = kevo::run_options_from_json(run->settings);
    ASSERT_TRUE(options.has_value());
    auto strategy = kevo::make_strategy(name, kevo::strategy_settings(*options));
    ASSERT_TRUE(strategy.has_value());
    auto rows = store.load_iterations(run_id);
    ASSERT_TRUE(rows.has_value());
    ASSERT_EQ(static_cast<int>(rows->size()), kIterations + 1);
    for (const auto& rec : *rows) {
        if (rec.iteration > 0) {
            const kevo::Plan plan = (*strategy)->plan(rec.iteration);
            nlohmann::json decided = rec.strategy;
            decided.erase("cell");  // the evaluation's part, not the plan's
            decided.erase("descriptors");
            EXPECT_EQ(decided, plan.record) << name << " iteration " << rec.iteration;
            EXPECT_EQ(rec.dropout, plan.dropout) << name << " iteration " << rec.iteration;
        }
        std::optional<kevo::StoredAttempt> evaluated;
        if ((rec.status == kevo::IterationStatus::evaluated || rec.status == kevo::IterationStatus::from) && rec.candidate_id) {
            auto c = store.load_candidate(*rec.candidate_id);
            auto r = kevo::eval_result_from_json(rec.result);
            ASSERT_TRUE(c.has_value() && r.has_value());
            evaluated = kevo::StoredAttempt{c->id, c->hash, kevo::Attempt{rec.iteration, c->source, c->defines, *r}};
        }
        (*strategy)->apply(rec, evaluated);
    }
}

void kill_and_resume(const std::string& strategy, const std::string& proposer) {
    const auto device = opencl_cpu_device();
    if (!device) GTEST_SKIP() << "no OpenCL CPU device";
    const std::string tag = strategy + "-" + proposer, db = temp_path(tag + ".db"), log = temp_path(tag + ".log"),
                      out = temp_path(tag + "-out");
    fs::remove(db);
    std::vector<std::string> args = {"run", "saxpy", "--backend", "opencl", "--device", std::to_string(*device),
                                     "--profile", "small", "--strategy", strategy, "--islands", "2",
                                     "--migration-every", "2", "--stagnation", "2", "--proposer", proposer,
                                     "--iterations", std::to_string(kIterations), "--warmup", "1", "--repeat", "3",
                                     "--gate-rounds", "1", "--gate-top", "2", "--seed", "3", "--db", db, "--out", out};
    if (proposer == "replay") args.insert(args.end(), {"--replay", replay_dir()});
    const pid_t pid = spawn_kevo(args, log);
    ASSERT_GT(pid, 0);
    const std::string run_id = kevo::test::wait_for_iterations(db, kKilledAfter, 300);  // a first run may calibrate the device
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_FALSE(run_id.empty()) << slurp(log);

    const auto resumed = run_kevo({"run", "--resume", run_id, "--db", db, "--json"});
    ASSERT_EQ(resumed.exit_code, kevo::test::run_exit_status(resumed.json())) << resumed.err;
    const auto s = resumed.json();
    ASSERT_TRUE(s.is_object()) << resumed.out << resumed.err;
    EXPECT_EQ(s["strategy"], strategy);
    EXPECT_EQ(s["iterations"], kIterations);
    EXPECT_NE(resumed.err.find(fmt::format("resuming run {}", run_id)), std::string::npos) << resumed.err;
    if (strategy == "islands") {
        ASSERT_EQ(s["population"]["islands"].size(), 2u) << s.dump(2);
        EXPECT_LE(s["gate"].size(), 3u) << "at most --gate-top 2 kernels and the seed";
    } else if (strategy == "map-elites") {
        EXPECT_GE(s["population"]["filled"].get<int>(), 1) << s.dump(2);
        EXPECT_EQ(s["population"]["cells"].size(), s["population"]["filled"].get<size_t>());
    } else {
        EXPECT_TRUE(s["population"].is_null());
    }
    auto store = kevo::Store::open(db);
    ASSERT_TRUE(store.has_value());
    expect_rows_follow_the_rule(**store, run_id, strategy);
    // The report carries the population with the summary.
    const auto rep = run_kevo({"report", run_id, "--db", db, "--json"}).json();
    EXPECT_EQ(rep["summary"]["population"], s["population"]);
}

TEST(RunStrategies, OnePlusOneWithTuneKilledAndResumed) { kill_and_resume("one-plus-one", "tune"); }
TEST(RunStrategies, IslandsWithTuneKilledAndResumed) { kill_and_resume("islands", "tune"); }
TEST(RunStrategies, IslandsWithReplayKilledAndResumed) { kill_and_resume("islands", "replay"); }
TEST(RunStrategies, MapElitesWithTuneKilledAndResumed) { kill_and_resume("map-elites", "tune"); }
TEST(RunStrategies, MapElitesWithReplayKilledAndResumed) { kill_and_resume("map-elites", "replay"); }

TEST(RunStrategies, AnUnknownStrategyIsRefusedByName) {
    const auto r = run_kevo({"run", "saxpy", "--strategy", "annealing", "--db", temp_path("bad.db")});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("--strategy: unknown strategy 'annealing'; expected one of: one-plus-one, islands, map-elites"),
              std::string::npos) << r.err;
}

// Islands of two, no migration: iteration 1 (island 0) takes nbody_pow2_mask (fast, wrong at the
// held-out size), iteration 2 (island 1) nbody_lanes8 (fast and right). Whichever ranks first, the
// gate hands out iteration 2; when the wrong one ranks first it is examined, rejected, and the next
// of the population passes.
TEST(RunStrategies, TheGateRecommendsTheBestOfThePopulationThatPasses) {
    const auto device = opencl_cpu_device();
    if (!device) GTEST_SKIP() << "no OpenCL CPU device";
    const std::string dir = temp_path("gate-replay");
    fs::remove_all(dir);
    fs::create_directories(dir);
    fs::copy_file(candidate("nbody_pow2_mask.cl"), fs::path(dir) / "1.cl");
    fs::copy_file(candidate("nbody_lanes8.cl"), fs::path(dir) / "2.cl");
    const auto r = run_kevo({"run", "nbody", "--backend", "opencl", "--device", std::to_string(*device), "--profile",
                             "small", "--strategy", "islands", "--islands", "2", "--migration-every", "0", "--proposer",
                             "replay", "--replay", dir, "--iterations", "2", "--seed", "7", "--warmup", "1", "--repeat",
                             "10", "--db", temp_path("gate.db"), "--out", temp_path("gate-out"), "--json"});
    const auto s = r.json();
    ASSERT_TRUE(s.is_object()) << r.out << r.err;
    EXPECT_EQ(s["recommended"], 2) << s.dump(2);
    ASSERT_GE(s["gate"].size(), 1u);
    if (s["gate"][0]["iteration"] == 1) {
        EXPECT_EQ(s["outcome"], "best_failed_gate");
        EXPECT_EQ(s["gate"][0]["reason"], "heldout-incorrect");
        ASSERT_EQ(s["gate"].size(), 2u);
        EXPECT_TRUE(s["gate"][1]["passed"].get<bool>());
    } else {
        EXPECT_EQ(s["outcome"], "improved");
    }
}

}  // namespace
