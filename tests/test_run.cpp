// `kevo run` end to end through the real binary, worker, PoCL and SQLite: the tuner on heat2d and
// `kevo report`. The cmd proposer with a small script, and a run killed with SIGKILL that resumes and
// finishes, on scripted evaluations (kevo_scripted: the store's and the loop's part, whatever the
// kernels; each evaluation made to last 50 ms so that the kill lands mid-run).
#include <gtest/gtest.h>

#include <csignal>
#include <filesystem>
#include <thread>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

using kevo::test::has_device;
using kevo::test::run_exit_status;
using kevo::test::run_kevo;
using kevo::test::spawn_kevo;

namespace {

std::string temp_path(const std::string& name) {
    const auto dir = std::filesystem::path(::testing::TempDir()) / ("kevo_run_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

const char* kSmallTiming[] = {"--warmup", "1", "--repeat", "3"};

std::vector<std::string> run_args(std::vector<std::string> args) {
    args.insert(args.end(), std::begin(kSmallTiming), std::end(kSmallTiming));
    return args;
}

TEST(Run, TunerOnHeat2dImprovesOrSaysWhy) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string db = temp_path("tune.db"), out = temp_path("tune-out");
    const auto r = run_kevo(run_args({"run", "heat2d", "--backend", "opencl", "--proposer", "tune", "--iterations", "4",
                                      "--seed", "3", "--db", db, "--out", out, "--json"}));
    const auto s = r.json();
    ASSERT_TRUE(s.is_object()) << r.out << r.err;
    ASSERT_EQ(r.exit_code, run_exit_status(s)) << r.err;
    for (const char* key : {"run_id", "task", "proposer", "iterations", "seed_score", "best_score", "speedup",
                            "heldout_fraction", "heldout_speedup", "best_path", "outcome", "recommended", "gate"})
        EXPECT_TRUE(s.contains(key)) << key;
    EXPECT_EQ(s["task"], "heat2d");
    EXPECT_EQ(s["proposer"], "tune");
    EXPECT_EQ(s["iterations"], 4);
    ASSERT_TRUE(s["seed_score"].is_number() && s["best_score"].is_number());
    EXPECT_GE(s["best_score"].get<double>(), s["seed_score"].get<double>());
    EXPECT_TRUE(s["heldout_fraction"].is_number()) << "the held-out gate must score the best kernel";
    EXPECT_TRUE(s["speedup"].is_number());
    // The progress shows every iteration; if nothing won, the notes say why (not better / spread).
    for (int i = 1; i <= 4; ++i) EXPECT_NE(r.err.find("[  " + std::to_string(i) + "/4]"), std::string::npos) << r.err;
    if (s["best_score"] == s["seed_score"])
        EXPECT_TRUE(r.err.find("not better") != std::string::npos || r.err.find("spread") != std::string::npos) << r.err;
    // The best kernel was written with its tuned knob values as defaults, and evaluates ok as is.
    const std::string best = s["best_path"];
    ASSERT_TRUE(std::filesystem::exists(best)) << best;
    const auto e = run_kevo({"eval", "heat2d", best, "--backend", "opencl", "--check-only", "--json"});
    EXPECT_EQ(e.json()["verdict"], "ok") << e.out;
    // The report holds every iteration.
    const auto rep = run_kevo({"report", s["run_id"], "--db", db, "--json"});
    ASSERT_EQ(rep.exit_code, 0) << rep.err;
    const auto doc = rep.json();
    EXPECT_EQ(doc["status"], "finished");
    ASSERT_EQ(doc["iterations"].size(), 5u);
    for (int i = 0; i <= 4; ++i) {
        EXPECT_EQ(doc["iterations"][i]["iteration"], i);
        for (const char* key : {"iteration", "verdict", "score", "diagnostics"}) EXPECT_TRUE(doc["iterations"][i].contains(key));
    }
    // The gate's rows: the seed's side, the kernel handed out, and any kernel it rejected.
    EXPECT_EQ(doc["heldout"].size(), 1 + s["gate"].size());
}

// (On scripted evaluations: the prompt and the answer's path are the proposer's, whatever the kernels.)
TEST(Run, CmdProposerGetsThePromptAndItsAnswerIsEvaluated) {
    const std::string kernel = temp_path("answer.cl"), prompt_copy = temp_path("prompt.txt"), script = temp_path("agent.sh");
    std::string seed(kevo::task_file("heat2d", "seed.cl"));
    seed.replace(seed.find("// kevo: launch heat_step block=BX,BY"), 37, "// kevo: launch heat_step block=32,4");
    std::ofstream(kernel) << seed;
    std::ofstream(script) << "#!/bin/sh\ncat > '" << prompt_copy << "'\necho 'Here is a faster kernel:'\necho '```opencl'\ncat '"
                          << kernel << "'\necho '```'\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const std::string db = temp_path("cmd.db");
    std::filesystem::remove(db);
    const auto r = kevo::test::run_scripted_kevo(run_args({"run", "heat2d", "--backend", "opencl", "--profile", "small", "--proposer",
                                                           "cmd", "--command", script, "--iterations", "2", "--db", db, "--out",
                                                           temp_path("cmd-out"), "--json"}));
    ASSERT_EQ(r.exit_code, run_exit_status(r.json())) << r.err;
    const auto rep = run_kevo({"report", r.json()["run_id"], "--db", db, "--json"}).json();
    ASSERT_EQ(rep["iterations"].size(), 3u);
    EXPECT_EQ(rep["iterations"][1]["status"], "evaluated");
    EXPECT_EQ(rep["iterations"][1]["verdict"], "ok") << rep["iterations"][1].dump(2);
    EXPECT_EQ(rep["iterations"][2]["status"], "duplicate") << "the same answer twice is not re-evaluated";
    const std::string prompt = kevo::test::slurp(prompt_copy);
    EXPECT_NE(prompt.find("heat_step"), std::string::npos);
    EXPECT_EQ(prompt.find("100x75x15"), std::string::npos) << "the held-out size leaked into the prompt";
}

TEST(Run, KilledRunResumesAndFinishes) {
    const std::string db = temp_path("resume.db"), log = temp_path("resume.log");
    const pid_t pid = kevo::test::spawn_scripted_kevo(
        run_args({"run", "heat2d", "--backend", "opencl", "--profile", "small", "--proposer", "tune", "--iterations", "8",
                  "--seed", "11", "--db", db, "--out", temp_path("resume-out")}),
        log, 50);
    ASSERT_GT(pid, 0);
    // Wait until a few iterations are stored, then kill kevo without warning.
    std::string run_id;
    for (int i = 0; i < 600 && run_id.empty() && ::waitpid(pid, nullptr, WNOHANG) == 0; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto store = kevo::Store::open(db);
        if (!store) continue;
        auto runs = (*store)->list_runs();
        if (runs && !runs->empty() && runs->front().iterations_done >= 2) run_id = runs->front().run_id;
    }
    ASSERT_FALSE(run_id.empty()) << kevo::test::slurp(log);
    ::kill(-pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const auto all = run_kevo({"report", "--all", "--db", db, "--json"}).json();
    ASSERT_EQ(all["runs"].size(), 1u);
    EXPECT_EQ(all["runs"][0]["status"], "interrupted");
    EXPECT_LT(all["runs"][0]["iterations_done"].get<int>(), 8) << "killed mid-run";

    const auto resumed = kevo::test::run_scripted_kevo(run_args({"run", "--resume", run_id, "--db", db, "--json"}));
    ASSERT_EQ(resumed.exit_code, run_exit_status(resumed.json())) << resumed.err;
    EXPECT_NE(resumed.err.find("resuming run " + run_id), std::string::npos) << resumed.err;
    EXPECT_EQ(resumed.json()["run_id"], run_id);
    const auto rep = run_kevo({"report", run_id, "--db", db, "--json"}).json();
    EXPECT_EQ(rep["status"], "finished");
    ASSERT_EQ(rep["iterations"].size(), 9u);
    for (int i = 0; i <= 8; ++i) EXPECT_EQ(rep["iterations"][i]["iteration"], i);
    // Finished runs are not resumed again.
    EXPECT_EQ(kevo::test::run_scripted_kevo({"run", "--resume", run_id, "--db", db}).exit_code, 2);
}

TEST(Run, BadInputExitsTwoWithAReason) {
    const std::string db = temp_path("bad.db");
    const auto no_task = run_kevo({"run", "--db", db});
    EXPECT_EQ(no_task.exit_code, 2);
    const auto unknown = run_kevo({"run", "nosuchtask", "--db", db});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("nosuchtask"), std::string::npos);
    const auto llm = run_kevo({"run", "heat2d", "--proposer", "llm", "--db", db});
    EXPECT_EQ(llm.exit_code, 2);
    EXPECT_NE(llm.err.find("--base-url"), std::string::npos) << llm.err;
    const auto missing = run_kevo({"run", "--resume", "r-none", "--db", db});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("r-none"), std::string::npos) << missing.err;
    const auto report = run_kevo({"report", "--all", "--db", temp_path("absent.db")});
    EXPECT_EQ(report.exit_code, 2);
}

// kevo run checks every number as kevo eval does, before any work: nothing is stored.
TEST(Run, EveryNumberIsRangeCheckedBeforeAnyWork) {
    const std::string db = temp_path("range.db");
    const std::vector<std::pair<std::string, std::string>> bad = {
        {"--repeat", "-1"},     {"--repeat", "0"},        {"--warmup", "-1"},      {"--timeout", "nan"},
        {"--timeout", "-3"},    {"--iterations", "-2"},   {"--max-wall", "inf"},   {"--gate-rounds", "0"},
        {"--temperature", "3"}, {"--max-cost", "-1"},     {"--stagnation", "-1"}};
    for (const auto& [flag, value] : bad) {
        const auto r = run_kevo({"run", "heat2d", flag, value, "--db", db});
        EXPECT_EQ(r.exit_code, 2) << flag << " " << value << ": " << r.err;
        EXPECT_NE(r.err.find(flag), std::string::npos) << flag << " " << value << ": " << r.err;
    }
    EXPECT_FALSE(std::filesystem::exists(db)) << "a refused run must not create the store";
}

}  // namespace
