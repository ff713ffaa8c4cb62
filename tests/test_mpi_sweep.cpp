// `mpirun -np 3 kevo sweep` (study/rank_sweep.cpp) on scripted evaluations over PoCL: the study
// sharded over three ranks gives the same cells, outcomes and store contents (scores aside) as one
// process, and one store; the shard merge keeps every run once; a rank killed mid-study loses only
// its runs in flight, which the same command run again completes, every run and iteration once.
// Open MPI is what the setup script installs: in CI a missing mpirun (or a kevo built without MPI)
// fails these tests; elsewhere they skip, naming why.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "store/store.hpp"
#include "study/ranks.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;
constexpr const char* kMpirun = "/usr/bin/mpirun";
constexpr int kRanks = 3;

std::string missing_mpi() {
    if (!fs::exists(kMpirun)) return "mpirun is not installed (Debian: openmpi-bin libopenmpi-dev)";
    if (!built_with_mpi()) return "kevo was configured without MPI (libopenmpi-dev missing at configure time)";
    return {};
}

#define REQUIRE_MPI()                                                              \
    do {                                                                           \
        const std::string why = missing_mpi();                                     \
        if (!why.empty()) {                                                        \
            if (std::getenv("CI")) FAIL() << why << ": CI installs Open MPI";      \
            GTEST_SKIP() << why;                                                   \
        }                                                                          \
    } while (0)

std::string temp_path(const std::string& name) { return test::temp_path("kevo_mpi", name); }

std::string write_study(const std::string& name, int iterations) {
    return test::write_saxpy_tuner_study(temp_path(name + ".toml"), name, 6, iterations);
}

// mpirun as root needs its two confirmations; the shared-memory transport's single-copy mechanism
// needs ptrace rights that containers often lack.
std::vector<std::string> mpirun_words(const std::vector<std::string>& kevo_args) {
    std::vector<std::string> words = {"--oversubscribe", "-np", std::to_string(kRanks), "--mca",
                                      "btl_vader_single_copy_mechanism", "none", KEVO_SCRIPTED_BINARY};
    words.insert(words.end(), kevo_args.begin(), kevo_args.end());
    return words;
}

struct RootOk {
    test::ScopedEnv a{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, b{"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"};
};

std::vector<std::string> sweep_args(const std::string& name, int iterations) {
    return {"sweep", write_study(name, iterations), "--db", temp_path(name + ".db"), "--out", temp_path(name + "-out"),
            "--json"};
}

void clean(const std::string& name) {
    std::error_code ec;
    for (const char* suffix : {".db", ".db-wal", ".db-shm"}) fs::remove(temp_path(name + suffix), ec);
    fs::remove_all(temp_path(name + ".db.shards"), ec);
    fs::remove_all(temp_path(name + ".db.locks"), ec);
    fs::remove_all(temp_path(name + "-out"), ec);
}

// What a cell's run did, scores aside: its outcome, and each iteration's verdict, acceptance and kernel.
std::map<std::string, std::string> store_facts(const std::string& db, const nlohmann::json& cells) {
    std::map<std::string, std::string> facts;
    auto store = Store::open(db, Store::Access::read_only);
    EXPECT_TRUE(store.has_value()) << db;
    if (!store) return facts;
    for (const auto& c : cells) {
        const std::string run_id = c["run_id"].get<std::string>();
        auto run = (*store)->load_run(run_id);
        EXPECT_TRUE(run.has_value()) << run_id;
        if (!run) continue;
        std::string text = fmt::format("{} {} {}", run_status_name(run->status), run->iterations_done,
                                       run->summary.value("outcome", std::string()));
        auto iterations = (*store)->load_iterations(run_id);
        EXPECT_TRUE(iterations.has_value());
        for (const auto& it : *iterations) {
            auto candidate = it.candidate_id ? (*store)->load_candidate(*it.candidate_id) : make_error("none");
            text += fmt::format(" | {} {} {} {}", it.iteration, it.verdict, it.accepted,
                                candidate ? candidate->hash : std::string("-"));
        }
        facts[c["cell"].get<std::string>()] = text;
    }
    return facts;
}

TEST(MpiSweep, ThreeRanksGiveTheCellsOutcomesAndStoreOfOneProcess) {
    REQUIRE_MPI();
    RootOk root;
    clean("one");
    clean("three");
    const auto one = test::run_scripted_kevo(sweep_args("one", 2));
    ASSERT_EQ(one.exit_code, 0) << one.out << one.err;
    const auto three = test::run_binary(kMpirun, mpirun_words(sweep_args("three", 2)));
    ASSERT_EQ(three.exit_code, 0) << three.out << three.err;
    const auto a = one.json(), b = three.json();
    ASSERT_TRUE(b.is_object()) << "rank 0 alone prints the study's JSON:\n" << three.out << three.err;
    ASSERT_EQ(a["cells"].size(), 6u);
    ASSERT_EQ(b["cells"].size(), 6u);
    for (size_t i = 0; i < 6; ++i) {
        EXPECT_EQ(a["cells"][i]["cell"], b["cells"][i]["cell"]);
        EXPECT_EQ(b["cells"][i]["status"], "finished") << b["cells"][i].dump();
        EXPECT_EQ(a["cells"][i]["note"], b["cells"][i]["note"]) << "the same outcome";
    }
    EXPECT_EQ(store_facts(temp_path("one.db"), a["cells"]), store_facts(temp_path("three.db"), b["cells"]));
    EXPECT_EQ(a["aggregates"], b["aggregates"]) << "the study's report is the same whichever way it ran";
    EXPECT_FALSE(fs::exists(temp_path("three.db.shards/rank-1.db"))) << "the shards are merged and gone";
    // The same command again finds every cell finished and records nothing new.
    const auto again = test::run_binary(kMpirun, mpirun_words(sweep_args("three", 2)));
    ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
    EXPECT_EQ(store_facts(temp_path("three.db"), b["cells"]), store_facts(temp_path("three.db"), again.json()["cells"]));
    auto store = Store::open(temp_path("three.db"), Store::Access::read_only);
    ASSERT_TRUE(store.has_value());
    const auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs.has_value());
    EXPECT_EQ(runs->size(), 6u) << "one run per cell, however many times the shards were merged";
    for (const auto& run : *runs) {
        auto full = (*store)->load_run(run.run_id);
        ASSERT_TRUE(full.has_value());
        const auto tag = full->settings.value("settings", nlohmann::json::object()).value("study", nlohmann::json::object());
        ASSERT_TRUE(tag.contains("ceilings_file")) << "the reproduce line names the file the run divided by: " << tag.dump();
        EXPECT_TRUE(fs::exists(tag["ceilings_file"].get<std::string>())) << tag.dump();
    }
}

// The pid of the sweep's rank `rank` (Open MPI names it in the process's environment).
pid_t rank_pid(int rank) {
    const std::string want = fmt::format("OMPI_COMM_WORLD_RANK={}", rank);
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        const std::string cmdline = test::slurp(entry.path().string() + "/cmdline");
        if (cmdline.find("kevo_scripted") == std::string::npos || cmdline.find("sweep") == std::string::npos) continue;
        std::string environ_text = test::slurp(entry.path().string() + "/environ");
        for (char& c : environ_text)
            if (c == '\0') c = '\n';
        if (environ_text.find(want + "\n") != std::string::npos) return static_cast<pid_t>(std::stoi(name));
    }
    return -1;
}

// Whether a process of the job (a rank, or a run it started) still lives: its command line names the store.
bool job_processes_alive(const std::string& store_name) {
    for (const auto& entry : fs::directory_iterator("/proc")) {
        const std::string name = entry.path().filename().string();
        if (name.find_first_not_of("0123456789") != std::string::npos) continue;
        std::string cmdline = test::slurp(entry.path().string() + "/cmdline");
        if (cmdline.find("kevo_scripted") != std::string::npos && cmdline.find(store_name) != std::string::npos)
            return true;
    }
    return false;
}

// Whether rank 1's shard holds a run that has made progress.
bool shard_has_progress(const std::string& shard) {
    if (!fs::exists(shard)) return false;
    auto store = Store::open(shard, Store::Access::read_only);
    if (!store) return false;
    auto runs = (*store)->list_runs();
    if (!runs) return false;
    for (const auto& r : *runs)
        if (r.iterations_done >= 1 && r.status != RunStatus::finished) return true;
    return false;
}

TEST(MpiSweep, ARankKilledMidStudyLosesOnlyItsRunsInFlightAndTheSameCommandCompletesIt) {
    REQUIRE_MPI();
    RootOk root;
    clean("killed");
    const auto args = sweep_args("killed", 4);
    pid_t job = -1;
    {
        test::ScopedEnv slow("KEVO_SCRIPTED_DELAY_MS", "300");
        std::vector<std::string> storage;
        auto argv = test::kevo_argv(mpirun_words(args), storage, kMpirun);
        job = test::spawn_in_own_group(kMpirun, argv.data(), environ, temp_path("killed-mpirun.log"));
    }
    ASSERT_GT(job, 0);
    const std::string shard = temp_path("killed.db.shards/rank-1.db");
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(120);
    while (!shard_has_progress(shard) && std::chrono::steady_clock::now() < deadline)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const pid_t victim = rank_pid(1);
    ASSERT_GT(victim, 0) << "rank 1 not found";
    ASSERT_EQ(::kill(victim, SIGKILL), 0);
    int status = 0;
    ::waitpid(job, &status, 0);
    EXPECT_FALSE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "mpirun reports the lost rank";
    ::kill(-job, SIGKILL);  // anything of the job's group still alive
    // The other ranks wind their runs down after mpirun has gone: the rerun comes once they have ended
    // (before that, kevo refuses a shard still in use).
    const auto settled = std::chrono::steady_clock::now() + std::chrono::seconds(60);
    while (job_processes_alive("killed.db") && std::chrono::steady_clock::now() < settled)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ASSERT_FALSE(job_processes_alive("killed.db")) << "the killed job's processes did not end within 60 s";
    EXPECT_TRUE(fs::exists(shard)) << "the killed rank's shard stays for the next invocation";
    EXPECT_TRUE(shard_has_progress(shard)) << "its run in flight is left unfinished there, for the rerun to resume";

    const auto rerun = test::run_binary(kMpirun, mpirun_words(args));
    ASSERT_EQ(rerun.exit_code, 0) << rerun.out << rerun.err;
    const auto doc = rerun.json();
    ASSERT_TRUE(doc.is_object()) << rerun.out << rerun.err;
    for (const auto& c : doc["cells"]) EXPECT_EQ(c["status"], "finished") << c.dump();
    auto store = Store::open(temp_path("killed.db"), Store::Access::read_only);
    ASSERT_TRUE(store.has_value());
    auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs.has_value());
    EXPECT_EQ(runs->size(), 6u) << "no cell was run again as a new run";
    for (const auto& r : *runs) {
        auto iterations = (*store)->load_iterations(r.run_id);
        ASSERT_TRUE(iterations.has_value());
        std::set<int> numbers;
        for (const auto& it : *iterations) numbers.insert(it.iteration);
        EXPECT_EQ(r.iterations_done, 4) << r.run_id;
        EXPECT_EQ(numbers.size(), iterations->size()) << r.run_id << ": an iteration recorded twice";
        EXPECT_EQ(numbers, (std::set<int>{0, 1, 2, 3, 4})) << r.run_id << ": the seed (0) and four iterations";
    }
    EXPECT_FALSE(fs::exists(shard)) << "merged and gone";
}

}  // namespace
}  // namespace kevo
