// `kevo sweep` end to end with a real SQLite store. On scripted evaluations (kevo_scripted, whose
// cells run kevo_scripted again: the sweep's part, whatever the kernels): a small sweep fills every
// cell with a tagged run; a sweep killed with SIGKILL mid-way takes its runs down with it and, run
// again, finishes every cell exactly once. With the real binary and the real worker on PoCL: the same
// study at concurrency 1 and 3 gives the same verdicts at every iteration, while the device's lease
// log shows that no two evaluations' device work overlapped.
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "lease_log.hpp"
#include "run_support.hpp"
#include "store/run_lock.hpp"
#include "store/store.hpp"

namespace {

namespace fs = std::filesystem;
using kevo::test::has_device;
using kevo::test::opencl_cpu_device;
using kevo::test::run_kevo;
using kevo::test::slurp;

std::string temp_path(const std::string& name) { return kevo::test::temp_path("kevo_sweep", name); }

// Replay candidates for saxpy, in order: two correct variants, a compile error, a subtly wrong
// kernel, a kernel that never ends (a timeout), another correct variant.
std::string replay_folder() {
    const fs::path dir = fs::path(temp_path("cands")) / "saxpy";
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string seed = slurp(std::string(KEVO_SOURCE_DIR) + "/tasks/saxpy/seed.cl");
    std::ofstream(dir / "01.cl") << "// variant 1\n" << seed;
    std::ofstream(dir / "02.cl") << "// variant 2\n" << seed;
    fs::copy_file(kevo::test::candidate("saxpy_compile_error.cl"), dir / "03.cl");
    fs::copy_file(kevo::test::candidate("saxpy_slightly_wrong.cl"), dir / "04.cl");
    fs::copy_file(kevo::test::candidate("saxpy_infinite_loop.cl"), dir / "05.cl");
    std::ofstream(dir / "06.cl") << "// variant 6\n" << seed;
    return dir.parent_path().string();
}

struct StudyText {
    std::string name = "tiny";
    std::string models = "[[models]]\nname = \"tuner\"\nproposer = \"tune\"\n";
    std::string seeds = "[1]";
    int iterations = 3;
    int concurrency = 2;
    int timeout = 30;  // seconds per candidate
};

std::string write_study(const std::string& file, const StudyText& s, int device) {
    std::ofstream(file) << fmt::format(
        "name = \"{}\"\nprofile = \"small\"\nbackend = \"opencl\"\ndevice = {}\ntasks = [\"saxpy\"]\nseeds = {}\n"
        "concurrency = {}\n[budget]\niterations = {}\n[run]\nwarmup = 1\nrepeat = 3\nmax_repeat = 6\ngate_rounds = 1\ntimeout = {}\n{}",
        s.name, device, s.seeds, s.concurrency, s.iterations, s.timeout, s.models);
    return file;
}

std::vector<std::string> sweep_args(const std::string& study, const std::string& db, const std::string& out) {
    return {"sweep", study, "--db", db, "--out", out};
}

// The study's runs, by cell.
std::map<std::string, kevo::RunRecord> runs_by_cell(kevo::Store& store, const std::string& study_id) {
    std::map<std::string, kevo::RunRecord> out;
    auto cells = store.load_study_cells(study_id);
    EXPECT_TRUE(cells.has_value());
    for (const auto& c : *cells) {
        EXPECT_TRUE(c.run_id.has_value()) << c.cell;
        if (!c.run_id) continue;
        auto run = store.load_run(*c.run_id);
        EXPECT_TRUE(run.has_value()) << c.cell;
        if (run) out[c.cell] = *run;
    }
    return out;
}

TEST(Sweep, SmallSweepFillsEveryCellWithATaggedRun) {
    const int device = 0;
    StudyText s;
    s.models += fmt::format("[[models]]\nname = \"replayed\"\nproposer = \"replay\"\nreplay = \"{}/{{task}}\"\n", replay_folder());
    const std::string db = temp_path("small.db");
    fs::remove(db);
    const auto r = kevo::test::run_scripted_kevo(sweep_args(write_study(temp_path("small.toml"), s, device), db, temp_path("small-out")));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("2 of 2 cells finished, 0 failed"), std::string::npos) << r.out;
    auto store = kevo::Store::open(db);
    ASSERT_TRUE(store.has_value());
    auto studies = (*store)->list_studies();
    ASSERT_TRUE(studies && studies->size() == 1u);
    EXPECT_EQ(studies->front().name, "tiny");
    const auto runs = runs_by_cell(**store, studies->front().study_id);
    ASSERT_EQ(runs.size(), 2u);
    for (const auto& [cell, run] : runs) {
        EXPECT_EQ(run.status, kevo::RunStatus::finished) << cell;
        EXPECT_EQ(run.iterations_done, 3) << cell;
        const auto tag = run.settings.value("settings", nlohmann::json::object()).value("study", nlohmann::json::object());
        EXPECT_EQ(tag.value("study_id", ""), studies->front().study_id) << run.settings.dump();
        EXPECT_EQ(tag.value("cell", ""), cell);
        EXPECT_EQ(tag.value("model", ""), cell.substr(6, cell.find('/', 6) - 6)) << cell;
    }
    EXPECT_EQ((*store)->list_runs()->size(), 2u);
    // Run again: nothing left to do, nothing repeated.
    const auto again = run_kevo(sweep_args(temp_path("small.toml"), db, temp_path("small-out")));
    EXPECT_EQ(again.exit_code, 0) << again.err;
    EXPECT_NE(again.err.find("continuing study tiny"), std::string::npos) << again.err;
    EXPECT_EQ((*store)->list_runs()->size(), 2u);
    // On a terminal the table is drawn in place (each line cleared first), and not printed again at the end.
    const auto screen = kevo::test::run_kevo_on_terminal(sweep_args(temp_path("small.toml"), db, temp_path("small-out")));
    EXPECT_EQ(screen.exit_code, 0) << screen.out;
    EXPECT_NE(screen.out.find("\033[Kcell"), std::string::npos) << screen.out;
    size_t headers = 0;
    for (size_t at = screen.out.find("cell "); at != std::string::npos; at = screen.out.find("cell ", at + 1)) ++headers;
    EXPECT_EQ(headers, 1u) << screen.out;
    // A changed budget is refused, naming the change.
    s.iterations = 5;
    const auto changed = run_kevo(sweep_args(write_study(temp_path("small.toml"), s, device), db, temp_path("small-out")));
    EXPECT_EQ(changed.exit_code, 2);
    EXPECT_NE(changed.err.find("budget.iterations: 3 stored, 5 in the file"), std::string::npos) << changed.err;
    EXPECT_NE(changed.err.find("--new"), std::string::npos) << changed.err;
}

// Waits until some run in `db` has recorded `iterations` iterations, for up to ten minutes: the
// first iterations include the device's first calibration, which took over two minutes on the
// H200 machine's PoCL with a dozen other tests loading its cores.
bool wait_for_progress(const std::string& db, int iterations) {
    for (int i = 0; i < 6000; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        auto store = kevo::Store::open(db, kevo::Store::Access::read_only);
        if (!store) continue;
        auto runs = (*store)->list_runs();
        if (!runs) continue;
        for (const auto& r : *runs)
            if (r.iterations_done >= iterations) return true;
    }
    return false;
}

TEST(Sweep, KilledSweepResumesAndFinishesEveryCellExactlyOnce) {
    const int device = 0;
    StudyText s;
    s.name = "killed";
    s.seeds = "[1, 2, 3, 4]";
    s.iterations = 4;
    const std::string db = temp_path("killed.db"), out = temp_path("killed-out"), log = temp_path("killed.log");
    fs::remove(db);
    const std::string study = write_study(temp_path("killed.toml"), s, device);
    const pid_t pid = kevo::test::spawn_scripted_kevo(sweep_args(study, db, out), log, 100);
    ASSERT_GT(pid, 0);
    ASSERT_TRUE(wait_for_progress(db, 2)) << slurp(log);
    ::kill(pid, SIGKILL);  // the sweep alone: its runs must follow it down by themselves
    int status = 0;
    ::waitpid(pid, &status, 0);

    auto store = kevo::Store::open(db);
    ASSERT_TRUE(store.has_value());
    auto studies = (*store)->list_studies();
    ASSERT_TRUE(studies && studies->size() == 1u);
    const std::string study_id = studies->front().study_id;
    // No run is left running: each run's lock is free within moments.
    for (int i = 0; i < 100; ++i) {
        bool held = false;
        const auto runs = (*store)->list_runs();
        ASSERT_TRUE(runs.has_value());
        for (const auto& r : *runs) held = held || kevo::RunLock::probe(db, r.run_id) == kevo::RunLock::State::held;
        if (!held) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
        ASSERT_LT(i, 99) << "a run outlived the killed sweep";
    }
    const size_t started = (*store)->list_runs()->size();
    EXPECT_GE(started, 1u);
    EXPECT_LE(started, 2u) << "concurrency 2";

    const auto resumed = kevo::test::run_scripted_kevo(sweep_args(study, db, out));
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_NE(resumed.err.find("continuing study killed"), std::string::npos) << resumed.err;
    const auto runs = runs_by_cell(**store, study_id);
    ASSERT_EQ(runs.size(), 4u);
    std::set<std::string> ids;
    for (const auto& [cell, run] : runs) {
        EXPECT_EQ(run.status, kevo::RunStatus::finished) << cell;
        ids.insert(run.run_id);
        auto rows = (*store)->load_iterations(run.run_id);
        ASSERT_TRUE(rows.has_value());
        ASSERT_EQ(rows->size(), 5u) << cell << ": the seed and 4 iterations, each once";
        for (size_t i = 0; i < rows->size(); ++i) EXPECT_EQ((*rows)[i].iteration, static_cast<int>(i)) << cell;
    }
    EXPECT_EQ(ids.size(), 4u);
    EXPECT_EQ((*store)->list_runs()->size(), 4u) << "no cell was run twice";
}

// Each iteration's (status, verdict) of every cell's run.
std::map<std::string, std::vector<std::string>> verdicts(const std::string& db) {
    std::map<std::string, std::vector<std::string>> out;
    auto store = kevo::Store::open(db);
    EXPECT_TRUE(store.has_value());
    auto studies = (*store)->list_studies();
    EXPECT_TRUE(studies && studies->size() == 1u);
    for (const auto& [cell, run] : runs_by_cell(**store, studies->front().study_id)) {
        auto rows = (*store)->load_iterations(run.run_id);
        EXPECT_TRUE(rows.has_value());
        for (const auto& row : *rows) out[cell].push_back(fmt::format("{} {} {}", row.iteration, kevo::iteration_status_name(row.status), row.verdict));
    }
    return out;
}

TEST(Sweep, VerdictsDoNotChangeWithConcurrencyAndDeviceWorkNeverOverlaps) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const int device = opencl_cpu_device().value_or(0);
    StudyText s;
    s.name = "concurrency";
    s.seeds = "[1, 2, 3]";
    s.iterations = 6;
    // The kernel that never ends takes all of it, each time; a correct one must never come near it
    // (at 8 s, a correct kernel's extra timing rounds on a loaded machine went past it at either level,
    // before the study bounded them with max_repeat).
    s.timeout = 15;
    s.models = fmt::format("[[models]]\nname = \"replayed\"\nproposer = \"replay\"\nreplay = \"{}/{{task}}\"\n", replay_folder());
    std::map<int, std::map<std::string, std::vector<std::string>>> by_level;
    const std::string lease_log = temp_path("lease.log");
    for (int level : {1, 3}) {
        s.concurrency = level;
        const std::string db = temp_path(fmt::format("c{}.db", level));
        fs::remove(db);
        fs::remove(lease_log);
        ::setenv("KEVO_LEASE_LOG", lease_log.c_str(), 1);
        const auto r = run_kevo(sweep_args(write_study(temp_path("c.toml"), s, device), db, temp_path("c-out")));
        ::unsetenv("KEVO_LEASE_LOG");
        ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
        by_level[level] = verdicts(db);
        const auto intervals = kevo::test::read_lease_log(lease_log);
        EXPECT_EQ(kevo::test::first_overlap(intervals), "") << "level " << level;
        if (level == 3) EXPECT_GE(kevo::test::holders(intervals), 3u) << "three runs' workers took the lease";
    }
    ASSERT_EQ(by_level[1].size(), 3u);
    EXPECT_EQ(by_level[1], by_level[3]);
    for (const auto& [cell, rows] : by_level[3]) {
        ASSERT_EQ(rows.size(), 7u) << cell;
        EXPECT_EQ(rows[3], "3 evaluated compile_error") << cell;
        EXPECT_EQ(rows[4], "4 evaluated incorrect") << cell;
        EXPECT_EQ(rows[5], "5 evaluated timeout") << cell << ": waiting for the lease is not the candidate's time";
    }
}

TEST(DeviceLease, TwoProcessesTimingNeverOverlap) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const int device = opencl_cpu_device().value_or(0);
    const std::string lease_log = temp_path("two.log");
    fs::remove(lease_log);
    ::setenv("KEVO_LEASE_LOG", lease_log.c_str(), 1);
    const std::string seed = std::string(KEVO_SOURCE_DIR) + "/tasks/saxpy/seed.cl";
    std::vector<pid_t> pids;
    for (int i = 0; i < 2; ++i)
        pids.push_back(kevo::test::spawn_kevo({"eval", "saxpy", seed, "--backend", "opencl", "--device",
                                               std::to_string(device), "--profile", "small", "--repeat", "20"},
                                              temp_path(fmt::format("two-{}.log", i))));
    ::unsetenv("KEVO_LEASE_LOG");
    for (pid_t pid : pids) {
        int status = 0;
        ASSERT_EQ(::waitpid(pid, &status, 0), pid);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    }
    const auto intervals = kevo::test::read_lease_log(lease_log);
    EXPECT_EQ(kevo::test::holders(intervals), 2u);
    EXPECT_EQ(kevo::test::first_overlap(intervals), "");
}

}  // namespace
