// A run's life (issue 10, items 1-4, 7, 13) with the real SQLite store: one process per run (a
// second --resume is refused while the first holds the run; a killed holder leaves no stale lock),
// Ctrl-C and SIGTERM as a clean stop, --out checked before any work, --resume that extends but does
// not change, failed runs, --from, a seed echo as a duplicate, kevo report read-only and per
// iteration, kevo delete. Where the kernels' results decide (the noise rule's extra rounds, a seed
// that times out) through the real binary, worker and PoCL; the rest
// on scripted evaluations (kevo_scripted), each lasting 50 ms where a signal must land mid-run.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "scripted_evaluator.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

using kevo::test::has_device;
using kevo::test::run_kevo;
using kevo::test::run_scripted_kevo;
using kevo::test::slurp;
using kevo::test::spawn_kevo;

namespace {

std::string path(const std::string& name) { return kevo::test::temp_path("kevo_lifecycle", name); }

// A quick search on PoCL: the small profile, little timing.
std::vector<std::string> quick_run(const std::string& task, const std::string& db, const std::string& out,
                                   std::vector<std::string> more = {}) {
    std::vector<std::string> args = {"run", task, "--backend", "opencl", "--proposer", "tune", "--db", db, "--out", out,
                                      "--warmup", "1", "--repeat", "3", "--gate-rounds", "1", "--seed", "5"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// Waits until the store's newest run has recorded `iterations`; returns its id (empty on timeout).
std::string wait_for_iterations(const std::string& db, int iterations, double seconds = 120) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
    while (std::chrono::steady_clock::now() < until) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto store = kevo::Store::open(db, kevo::Store::Access::read_only);
        if (!store) continue;
        auto runs = (*store)->list_runs();
        if (runs && !runs->empty() && runs->front().iterations_done >= iterations) return runs->front().run_id;
    }
    return {};
}

int wait_exit(pid_t pid) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

nlohmann::json report(const std::string& db, const std::string& run_id) {
    return run_kevo({"report", run_id, "--db", db, "--json"}).json();
}

TEST(RunLifecycle, ASecondProcessCannotDriveARunningRunAndAKilledOneLeavesNoLock) {
    const std::string db = path("lock.db"), out = path("lock-out"), log = path("lock.log");
    const pid_t pid = kevo::test::spawn_scripted_kevo(quick_run("heat2d", db, out, {"--iterations", "40"}), log, 50);
    ASSERT_GT(pid, 0);
    const std::string run_id = wait_for_iterations(db, 1);
    ASSERT_FALSE(run_id.empty()) << slurp(log);

    const auto second = run_scripted_kevo({"run", "--resume", run_id, "--db", db});
    EXPECT_EQ(second.exit_code, 2) << second.err;
    EXPECT_NE(second.err.find("is being run by another process (pid " + std::to_string(pid)), std::string::npos)
        << second.err;
    EXPECT_EQ(report(db, run_id)["status"], "running");

    ::kill(-pid, SIGKILL);
    wait_exit(pid);
    EXPECT_EQ(report(db, run_id)["status"], "interrupted");
    // The kernel dropped the dead holder's lock: the run resumes (and, out of wall time, goes to its gate).
    const auto resumed = run_scripted_kevo({"run", "--resume", run_id, "--db", db, "--max-wall", "0.001", "--json"});
    EXPECT_TRUE(resumed.exit_code == 0 || resumed.exit_code == 1) << resumed.err;
    EXPECT_EQ(report(db, run_id)["status"], "finished");
}

class RunSignal : public ::testing::TestWithParam<int> {};

TEST_P(RunSignal, StopsCleanlyWithTheBestSoFarOnDiskAndSaysHowToResume) {
    const int signal = GetParam();
    const std::string tag = signal == SIGINT ? "int" : "term";
    const std::string db = path("signal-" + tag + ".db"), out = path("signal-" + tag + "-out"),
                      log = path("signal-" + tag + ".log");
    const pid_t pid = kevo::test::spawn_scripted_kevo(quick_run("heat2d", db, out, {"--iterations", "40"}), log, 50);
    ASSERT_GT(pid, 0);
    const std::string run_id = wait_for_iterations(db, 2);
    ASSERT_FALSE(run_id.empty()) << slurp(log);
    ::kill(pid, signal);  // to kevo alone, as a terminal's Ctrl-C reaches the foreground process
    EXPECT_EQ(wait_exit(pid), 128 + signal) << slurp(log);
    const std::string text = slurp(log);
    EXPECT_NE(text.find(signal == SIGINT ? "interrupted by SIGINT" : "interrupted by SIGTERM"), std::string::npos) << text;
    EXPECT_NE(text.find("resume with   kevo run --resume " + run_id + " --db " + db), std::string::npos) << text;
    EXPECT_EQ(text.find("outcome  "), std::string::npos) << "an interrupted run prints no gate summary: " << text;
    const auto doc = report(db, run_id);
    EXPECT_EQ(doc["status"], "interrupted");
    const auto best = std::filesystem::path(out) / run_id / "best.cl";
    ASSERT_TRUE(std::filesystem::exists(best)) << text;
    const std::string kernel = slurp(best.string());
    EXPECT_EQ(kernel.rfind("// kevo run " + run_id + ": heat2d", 0), 0u) << kernel.substr(0, 300);
    EXPECT_NE(kernel.find("not yet through the held-out gate"), std::string::npos);
    // The file stands alone: it evaluates as it is.
    EXPECT_EQ(run_kevo({"eval", "heat2d", best.string(), "--backend", "opencl", "--check-only"}).exit_code, 0);
}

INSTANTIATE_TEST_SUITE_P(Signals, RunSignal, ::testing::Values(SIGINT, SIGTERM),
                         [](const auto& info) { return std::string(info.param == SIGINT ? "SIGINT" : "SIGTERM"); });

TEST(RunLifecycle, AnUnwritableOutIsRefusedBeforeAnyWork) {
    const std::string db = path("out.db");
    const auto r = run_kevo({"run", "saxpy", "--backend", "opencl", "--db", db, "--out", "/proc/nope"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("--out /proc/nope: cannot write there"), std::string::npos) << r.err;
    EXPECT_LT(r.seconds, 10.0) << "found only after work was done";
    const auto all = run_kevo({"report", "--all", "--db", db, "--json"}).json();
    EXPECT_TRUE(all["runs"].empty()) << all.dump();
}

TEST(RunLifecycle, ResumeExtendsTheBudgetAndRefusesOtherChangesByName) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string db = path("extend.db"), out = path("extend-out");
    // The noise rule's bound (--max-repeat) holds for every evaluation of the run and is stored with it.
    const auto first = run_kevo(quick_run("saxpy", db, out, {"--iterations", "1", "--max-repeat", "5", "--noise-cv", "0", "--json"}));
    ASSERT_TRUE(first.exit_code == 0 || first.exit_code == 1) << first.err;
    const std::string run_id = first.json()["run_id"];
    const auto stored = report(db, run_id);
    EXPECT_EQ(stored["settings"]["max_repeat"], 5);
    for (const auto& iteration : stored["iterations"])
        for (const auto& size : iteration["result"]["sizes"])
            if (size["timed"].get<bool>()) {
                // --noise-cv 0: every size is "noisy", so rounds of 3 are added while they fit under 5.
                EXPECT_EQ(size["samples"], 5) << size.dump();
            }
    const auto noisier = run_kevo({"run", "--resume", run_id, "--db", db, "--iterations", "2", "--max-repeat", "9"});
    EXPECT_EQ(noisier.exit_code, 2);
    EXPECT_NE(noisier.err.find("--max-repeat cannot change there (stored: 5, given: 9)"), std::string::npos) << noisier.err;

    const auto same = run_kevo({"run", "--resume", run_id, "--db", db});
    EXPECT_EQ(same.exit_code, 2);
    EXPECT_NE(same.err.find("has already finished (1 iterations)"), std::string::npos) << same.err;
    const auto changed = run_kevo({"run", "--resume", run_id, "--db", db, "--profile", "paper", "--iterations", "3"});
    EXPECT_EQ(changed.exit_code, 2);
    EXPECT_NE(changed.err.find("--profile cannot change there (stored: small, given: paper)"), std::string::npos)
        << changed.err;
    // Repeating a stored value is not a change.
    const auto extended = run_kevo({"run", "--resume", run_id, "--db", db, "--iterations", "3", "--warmup", "1", "--json"});
    ASSERT_TRUE(extended.exit_code == 0 || extended.exit_code == 1) << extended.err;
    const auto doc = report(db, run_id);
    EXPECT_EQ(doc["status"], "finished");
    ASSERT_EQ(doc["iterations"].size(), 4u) << doc.dump(1);
    EXPECT_EQ(doc["settings"]["iterations"], 3);
    EXPECT_FALSE(doc["heldout"].empty());
}

TEST(RunLifecycle, ARunThatFailsBeforeItsFirstIterationIsFailed) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string db = path("failed.db");
    // A deadline no seed can meet with this much timing.
    const auto r = run_kevo({"run", "heat2d", "--backend", "opencl", "--db", db, "--out", path("failed-out"), "--timeout",
                             "0.1", "--warmup", "1000"});
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find("the seed of heat2d failed (timeout)"), std::string::npos) << r.err;
    const auto all = run_kevo({"report", "--all", "--db", db, "--json"}).json();
    ASSERT_EQ(all["runs"].size(), 1u);
    EXPECT_EQ(all["runs"][0]["status"], "failed");
    EXPECT_NE(all["runs"][0]["summary"]["error"].get<std::string>().find("timeout"), std::string::npos);
}

// (On scripted evaluations: the user's kernel twice the seed's speed, then one that is wrong.)
TEST(RunLifecycle, FromStartsTheSearchAtTheUsersKernel) {
    const std::string db = path("from.db"), out = path("from-out"), mine = path("my_saxpy.cl");
    std::filesystem::remove(db);
    std::ofstream(mine) << kevo::test::scripted(std::string(kevo::task_file("saxpy", "best.cl")), "speed=2");
    const auto r = run_scripted_kevo(quick_run("saxpy", db, out, {"--iterations", "2", "--from", mine, "--json"}));
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const auto doc = report(db, r.json()["run_id"]);
    ASSERT_EQ(doc["iterations"].size(), 4u) << doc.dump(1);  // seed, the user's kernel, two proposals
    EXPECT_EQ(doc["iterations"][1]["status"], "from");
    EXPECT_TRUE(doc["iterations"][1]["accepted"].get<bool>());
    // The tuner moves the user's kernel's knobs, not the seed's.
    const auto second = run_kevo({"report", r.json()["run_id"], "--db", db, "--iteration", "2", "--json"}).json();
    EXPECT_NE(second["source"].get<std::string>().find(kevo::task_file("saxpy", "best.cl").substr(0, 40)), std::string::npos);

    const std::string wrong = path("wrong_saxpy.cl");
    std::ofstream(wrong) << kevo::test::scripted(std::string(kevo::task_file("saxpy", "seed.cl")), "verdict=incorrect");
    const auto bad = run_scripted_kevo(quick_run("saxpy", db, out, {"--iterations", "2", "--from", wrong}));
    // Checked before the seed is evaluated: exit 1 (a rejected kernel), and no failed run is left.
    EXPECT_EQ(bad.exit_code, 1) << bad.err;
    EXPECT_NE(bad.err.find("--from " + wrong + ": the kernel is incorrect"), std::string::npos) << bad.err;
    EXPECT_EQ(run_kevo({"report", "--all", "--db", db, "--json"}).json()["runs"].size(), 1u);
}

TEST(RunLifecycle, AModelEchoingTheSeedIsADuplicate) {
    const std::string db = path("echo.db"), dir = path("echo-replay");
    std::filesystem::create_directories(dir);
    // The seed with CRLF line ends, trailing blanks and a spelled-out default knob value.
    std::string echo;
    for (char c : std::string(kevo::task_file("saxpy", "seed.cl"))) echo += c == '\n' ? std::string("  \r\n") : std::string(1, c);
    std::ofstream(dir + "/01.cl") << echo;
    const auto r = run_scripted_kevo({"run", "saxpy", "--backend", "opencl", "--proposer", "replay", "--replay", dir, "--db",
                                      db, "--out", path("echo-out"), "--iterations", "1", "--gate-rounds", "1", "--json"});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const auto doc = report(db, r.json()["run_id"]);
    ASSERT_EQ(doc["iterations"].size(), 2u);
    EXPECT_EQ(doc["iterations"][1]["status"], "duplicate") << doc["iterations"][1].dump(1);
}

TEST(RunLifecycle, ReportReadsWithoutWritingAndShowsAnIterationInFull) {
    const std::string empty = path("empty.db");
    std::ofstream(empty).close();
    const auto none = run_kevo({"report", "--all", "--db", empty});
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("not a kevo store"), std::string::npos) << none.err;
    EXPECT_EQ(std::filesystem::file_size(empty), 0u) << "report wrote a schema into an empty file";

    const std::string db = path("report.db"), script = path("answer.sh");
    std::ofstream(script) << "#!/bin/sh\ncat > /dev/null\nprintf 'my reasoning\\n```opencl\\n'\ncat " << path("k.cl")
                          << "\nprintf '```\\n'\n";
    std::ofstream(path("k.cl")) << kevo::task_file("saxpy", "seed.cl") << "\n// a different comment\n";
    std::filesystem::permissions(script, std::filesystem::perms::owner_all);
    const auto r = run_scripted_kevo({"run", "saxpy", "--backend", "opencl", "--proposer", "cmd", "--command", script, "--db",
                                      db, "--out", path("report-out"), "--iterations", "1", "--gate-rounds", "1", "--json"});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const std::string run_id = r.json()["run_id"];
    const auto before = std::filesystem::last_write_time(db);
    const auto text = run_kevo({"report", run_id, "--db", db, "--iteration", "1"});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("--- prompt ---"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("--- answer ---\nmy reasoning"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("// a different comment"), std::string::npos) << text.out;
    const auto doc = run_kevo({"report", run_id, "--db", db, "--iteration", "1", "--json"}).json();
    EXPECT_NE(doc["prompt"].get<std::string>().find("saxpy"), std::string::npos);
    EXPECT_EQ(std::filesystem::last_write_time(db), before) << "reading a report changed the store";
    const auto missing = run_kevo({"report", run_id, "--db", db, "--iteration", "9"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_NE(missing.err.find("has no iteration 9"), std::string::npos) << missing.err;
    const auto table = run_kevo({"report", run_id, "--db", db});
    EXPECT_NE(table.out.find("search S"), std::string::npos) << table.out;

    // And a run can be deleted.
    const auto deleted = run_kevo({"delete", run_id, "--db", db});
    EXPECT_EQ(deleted.exit_code, 0) << deleted.err;
    EXPECT_TRUE(run_kevo({"report", "--all", "--db", db, "--json"}).json()["runs"].empty());
    const auto again = run_kevo({"delete", run_id, "--db", db});
    EXPECT_EQ(again.exit_code, 2);
    EXPECT_NE(again.err.find("no run '" + run_id + "'"), std::string::npos) << again.err;
}

}  // namespace
