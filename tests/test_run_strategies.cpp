// Every strategy killed mid-run and resumed, by one rule: every stored row's strategy decision
// (island, parent, migrations, archive cell drawn, dropout) is what a strategy rebuilt from the rows
// before it decides, before the stop and after the resume. On scripted evaluations
// (scripted_evaluator.hpp) each strategy with the tune and the replay proposers runs in this process
// through the real loop, proposers and SQLite store; its stop is an evaluation that fails as a dead
// worker would, and the resumed run's rows equal those of the same run never stopped. One run goes
// end to end through the real binary, worker and PoCL, killed with SIGKILL and resumed with
// `kevo run --resume`: there timing decides what is accepted, so only the rule is checked. The
// summary names the strategy and shows the population; islands ask the gate for the top kernels of
// the population.
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "scripted_run.hpp"
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
void expect_rows_follow_the_rule(kevo::Store& store, const std::string& run_id, const std::string& name,
                                 int rows_expected = kIterations + 1) {
    auto run = store.load_run(run_id);
    ASSERT_TRUE(run.has_value());
    auto options = kevo::run_options_from_json(run->settings);
    ASSERT_TRUE(options.has_value());
    auto strategy = kevo::make_strategy(name, kevo::strategy_settings(*options));
    ASSERT_TRUE(strategy.has_value());
    auto rows = store.load_iterations(run_id);
    ASSERT_TRUE(rows.has_value());
    ASSERT_EQ(static_cast<int>(rows->size()), rows_expected);
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

TEST(RunStrategies, IslandsWithReplayKilledAndResumedEndToEnd) { kill_and_resume("islands", "replay"); }

// Scripted replay files: faster and faster copies of the seed, one slower, one wrong at the held-out
// size only, and a kernel that does not compile.
std::string scripted_replay_dir() {
    const std::string dir = temp_path("scripted-replay");
    if (fs::exists(dir)) return dir;
    fs::create_directories(dir);
    const std::string seed(kevo::task_file("saxpy", "seed.cl"));
    for (int i = 1; i <= kIterations; ++i) {
        std::string script = fmt::format("speed={:.2f}", 1.0 + 0.1 * i);
        if (i % 4 == 0) script = "verdict=compile_error";
        if (i == 3) script = "speed=0.8";
        if (i == 6) script = "speed=3 heldout=incorrect";
        std::ofstream(fmt::format("{}/{:02}.cl", dir, i)) << kevo::test::scripted(seed, script);
    }
    return dir;
}

kevo::test::ScriptedEvaluator scripted_evaluator(int fail_after = -1) {
    kevo::test::ScriptedEvaluator e;
    e.fail_after = fail_after;
    return e;
}

kevo::RunOptions scripted_strategy_options(const std::string& strategy, const std::string& proposer, const std::string& out) {
    nlohmann::json values = {{"strategy", strategy}, {"islands", 2}, {"migration_every", 2}, {"stagnation", 2},
                             {"proposer", proposer}, {"iterations", kIterations}, {"repeat", 3}, {"gate_top", 2},
                             {"seed", 3}, {"out", out}};
    if (proposer == "replay") values["replay"] = scripted_replay_dir();
    return kevo::test::scripted_run_options("saxpy", values);
}

// What a row says, without what differs between two runs of the same search (ids, times, the run's id).
nlohmann::json row_content(kevo::Store& store, const kevo::IterationRecord& rec) {
    nlohmann::json j = {{"iteration", rec.iteration}, {"status", rec.status}, {"verdict", rec.verdict},
                        {"score", rec.score}, {"accepted", rec.accepted}, {"note", rec.note},
                        {"dropout", rec.dropout}, {"strategy", rec.strategy}};
    if (rec.candidate_id) {
        auto c = store.load_candidate(*rec.candidate_id);
        if (c) j["candidate"] = {{"hash", c->hash}, {"defines", c->defines}};
    }
    return j;
}

std::vector<nlohmann::json> rows_of(const std::string& db, const std::string& run_id) {
    auto store = kevo::Store::open(db);
    EXPECT_TRUE(store.has_value());
    std::vector<nlohmann::json> rows;
    if (!store) return rows;
    auto recs = (*store)->load_iterations(run_id);
    EXPECT_TRUE(recs.has_value());
    if (recs)
        for (const auto& rec : *recs) rows.push_back(row_content(**store, rec));
    return rows;
}

// Stopped by a failing evaluation after a few iterations, then resumed: the rows follow
// the rule, and they and the summary are those of the same run never stopped.
void scripted_stop_and_resume(const std::string& strategy, const std::string& proposer) {
    const std::string tag = "scripted-" + strategy + "-" + proposer, db = temp_path(tag + ".db"),
                      whole_db = temp_path(tag + "-whole.db");
    for (const auto& f : {db, whole_db}) fs::remove(f);
    const auto options = scripted_strategy_options(strategy, proposer, temp_path(tag + "-out"));

    // The 13th evaluation fails: mid-run for every strategy and proposer here (a promotion's re-timing
    // beside the incumbent takes evaluations too, so for replay it is inside one).
    auto dying = scripted_evaluator(12);
    const auto stopped = kevo::test::scripted_run(dying, db, options);
    ASSERT_FALSE(stopped.has_value()) << "the 13th evaluation fails";
    EXPECT_NE(stopped.error().message.find("scripted worker died"), std::string::npos) << stopped.error().message;
    auto store = kevo::Store::open(db);
    ASSERT_TRUE(store.has_value());
    auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs.has_value() && runs->size() == 1u);
    const auto run = runs->front();
    EXPECT_EQ(run.status, kevo::RunStatus::interrupted);
    EXPECT_GE(run.iterations_done, 1);
    EXPECT_LT(run.iterations_done, kIterations);

    auto fresh = scripted_evaluator();
    const auto resumed = kevo::test::scripted_run(fresh, db, options, run.run_id);
    ASSERT_TRUE(resumed.has_value()) << resumed.error().message;
    EXPECT_EQ(resumed->strategy, strategy);
    EXPECT_EQ(resumed->iterations, kIterations);
    if (strategy == "islands") {
        ASSERT_EQ(resumed->population["islands"].size(), 2u) << resumed->population.dump(2);
        EXPECT_LE(resumed->gate.size(), 3u) << "at most --gate-top 2 kernels and the seed";
    } else if (strategy == "map-elites") {
        EXPECT_GE(resumed->population["filled"].get<int>(), 1);
        EXPECT_EQ(resumed->population["cells"].size(), resumed->population["filled"].get<size_t>());
    } else {
        EXPECT_TRUE(resumed->population.is_null());
    }
    expect_rows_follow_the_rule(**store, run.run_id, strategy);

    auto whole_evaluator = scripted_evaluator();
    const auto whole = kevo::test::scripted_run(whole_evaluator, whole_db, options);
    ASSERT_TRUE(whole.has_value()) << whole.error().message;
    EXPECT_EQ(rows_of(db, run.run_id), rows_of(whole_db, whole->run_id));
    EXPECT_EQ(resumed->outcome, whole->outcome);
    EXPECT_EQ(resumed->recommended, whole->recommended);
    EXPECT_EQ(resumed->speedup, whole->speedup);
    EXPECT_EQ(resumed->population, whole->population);
}

TEST(RunStrategies, OnePlusOneWithTuneStoppedAndResumed) { scripted_stop_and_resume("one-plus-one", "tune"); }
TEST(RunStrategies, OnePlusOneWithReplayStoppedAndResumed) { scripted_stop_and_resume("one-plus-one", "replay"); }
TEST(RunStrategies, IslandsWithTuneStoppedAndResumed) { scripted_stop_and_resume("islands", "tune"); }
TEST(RunStrategies, IslandsWithReplayStoppedAndResumed) { scripted_stop_and_resume("islands", "replay"); }
TEST(RunStrategies, MapElitesWithTuneStoppedAndResumed) { scripted_stop_and_resume("map-elites", "tune"); }
TEST(RunStrategies, MapElitesWithReplayStoppedAndResumed) { scripted_stop_and_resume("map-elites", "replay"); }

TEST(RunStrategies, AnUnknownStrategyIsRefusedByName) {
    const auto r = run_kevo({"run", "saxpy", "--strategy", "annealing", "--db", temp_path("bad.db")});
    EXPECT_NE(r.exit_code, 0);
    EXPECT_NE(r.err.find("--strategy: unknown strategy 'annealing'; expected one of: one-plus-one, islands, map-elites"),
              std::string::npos) << r.err;
}

// Islands of two, no migration: iteration 1 (island 0) is three times the seed's speed but wrong at
// the held-out size, iteration 2 (island 1) twice the seed's speed and right. The faster ranks first:
// the gate examines it, rejects it, and hands out iteration 2, the next of the population.
TEST(RunStrategies, TheGateRecommendsTheBestOfThePopulationThatPasses) {
    const std::string dir = temp_path("gate-replay"), db = temp_path("gate.db");
    fs::remove_all(dir);
    fs::remove(db);
    fs::create_directories(dir);
    const std::string seed(kevo::task_file("nbody", "seed.cl"));
    std::ofstream(fs::path(dir) / "1.cl") << kevo::test::scripted(seed, "speed=3 heldout=incorrect");
    std::ofstream(fs::path(dir) / "2.cl") << kevo::test::scripted(seed, "speed=2");
    kevo::test::ScriptedEvaluator evaluator;
    const auto options = kevo::test::scripted_run_options(
        "nbody", {{"strategy", "islands"}, {"islands", 2}, {"migration_every", 0}, {"proposer", "replay"}, {"replay", dir},
                  {"iterations", 2}, {"seed", 7}, {"repeat", 10}, {"out", temp_path("gate-out")}});
    const auto s = kevo::test::scripted_run(evaluator, db, options);
    ASSERT_TRUE(s.has_value()) << s.error().message;
    EXPECT_EQ(s->recommended, 2);
    EXPECT_EQ(s->outcome, kevo::RunOutcome::best_failed_gate);
    ASSERT_EQ(s->gate.size(), 2u);
    EXPECT_EQ(s->gate[0].iteration, 1);
    EXPECT_EQ(s->gate[0].reason, "heldout-incorrect");
    EXPECT_TRUE(s->gate[1].passed);
    ASSERT_TRUE(s->speedup.has_value());
    EXPECT_NEAR(*s->speedup, 2.0, 1e-9) << "the handed-out kernel's side-by-side speed-up";
}

}  // namespace
