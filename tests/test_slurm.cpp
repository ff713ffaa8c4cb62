// `kevo sweep --dry-run --slurm` (study/slurm_script.hpp): the script's shape, and the script run under
// a real single-node SLURM that the test starts on this machine (Debian's slurm-wlm and munge: munged,
// slurmctld and slurmd with a configuration and sockets of the test's own, SLURM_CONF pointing at it),
// submitted with `sbatch --wait`; its study, on scripted evaluations over PoCL, must end with every
// cell finished in one store. The setup script installs SLURM and Open MPI: in CI their absence fails
// the test; elsewhere it skips, naming why.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <thread>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "store/store.hpp"
#include "study/ranks.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;

std::string temp_path(const std::string& name) { return test::temp_path("kevo_slurm", name); }

std::string write_study(const std::string& name) {
    return test::write_saxpy_tuner_study(temp_path(name + ".toml"), name, 4, 2);
}

TEST(SlurmScript, RunsTheStudyThroughMpirunOneRankPerDeviceOnEachRanksOwnDevice) {
    const auto r = test::run_scripted_kevo({"sweep", write_study("shape"), "--db", "/data/kevo.db", "--out", "/data/runs",
                                            "--dry-run", "--slurm", "--nodes", "4", "--ranks-per-node", "8"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out.rfind("#!/bin/bash\n", 0), 0u) << r.out;
    for (const char* line : {"#SBATCH --job-name=kevo-shape\n", "#SBATCH --nodes=4\n", "#SBATCH --ntasks-per-node=8\n",
                             "#SBATCH --output=kevo-shape-%j.log\n", " sweep ", " --db /data/kevo.db --out /data/runs --devices local\n"})
        EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out;
    EXPECT_EQ(r.out.find("--gpus-per-node"), std::string::npos) << "PoCL's device is a CPU: no GPUs asked for";
    const auto no_dry = test::run_scripted_kevo({"sweep", write_study("shape"), "--slurm"});
    EXPECT_EQ(no_dry.exit_code, 2) << no_dry.out;
    EXPECT_NE(no_dry.err.find("--slurm requires --dry-run"), std::string::npos) << no_dry.err;
}

TEST(SlurmScript, DevicesLocalOutsideALauncherIsRefusedNamingWhatIsAccepted) {
    const auto r = test::run_scripted_kevo({"sweep", write_study("local"), "--db", temp_path("local.db"), "--devices", "local"});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.err.find("--devices local: this process is not a rank of mpirun or srun"), std::string::npos) << r.err;
}

// A one-node SLURM of the test's own, torn down with it.
class LocalSlurm {
public:
    static std::string missing() {
        for (const char* p : {"/usr/sbin/munged", "/usr/sbin/mungekey", "/usr/sbin/slurmctld", "/usr/sbin/slurmd",
                              "/usr/bin/sbatch", "/usr/bin/sinfo", "/usr/bin/mpirun"})
            if (!fs::exists(p)) return fmt::format("{} is not installed (Debian: slurm-wlm munge openmpi-bin)", p);
        if (!built_with_mpi()) return "kevo was configured without MPI (libopenmpi-dev missing at configure time)";
        return {};
    }

    explicit LocalSlurm(const std::string& dir) : dir_(dir) {}
    ~LocalSlurm() {
        ::unsetenv("SLURM_CONF");
        for (pid_t pid : daemons_) {
            ::kill(pid, SIGTERM);
            ::waitpid(pid, nullptr, 0);
        }
    }

    // Starts the daemons; the error says which part did not come up and where its log is.
    std::string start() {
        fs::create_directories(dir_ + "/state");
        fs::create_directories(dir_ + "/spool");
        char host[256] = {};
        ::gethostname(host, sizeof host - 1);
        host_ = host;
        const std::string key = dir_ + "/munge.key", socket = dir_ + "/munge.socket";
        if (run({"/usr/sbin/mungekey", "--create", "--keyfile=" + key}) != 0) return "mungekey failed";
        spawn({"/usr/sbin/munged", "--foreground", "--force", "--key-file=" + key, "--socket=" + socket,
               "--pid-file=" + dir_ + "/munged.pid", "--log-file=" + dir_ + "/munged.log", "--seed-file=" + dir_ + "/munge.seed"},
              dir_ + "/munged.out");
        std::ofstream(dir_ + "/slurm.conf")
            << "ClusterName=kevotest\nSlurmctldHost=" << host_ << "\nSlurmUser=root\nSlurmdUser=root\n"
            << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << socket << "\n"
            << "SlurmctldPort=" << port_ << "\nSlurmdPort=" << port_ + 1 << "\n"
            << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool\n"
            << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_ << "/slurmd.pid\n"
            << "SlurmctldLogFile=" << dir_ << "/slurmctld.log\nSlurmdLogFile=" << dir_ << "/slurmd.log\n"
            << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\nSelectType=select/cons_tres\n"
            << "SelectTypeParameters=CR_CPU\nMpiDefault=none\nReturnToService=2\nSchedulerType=sched/builtin\n"
            << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
            << "NodeName=" << host_ << " CPUs=" << std::max(2u, std::thread::hardware_concurrency()) << " State=UNKNOWN\n"
            << "PartitionName=kevo Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=FORCE\n";
        ::setenv("SLURM_CONF", (dir_ + "/slurm.conf").c_str(), 1);
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        spawn({"/usr/sbin/slurmctld", "-D", "-i"}, dir_ + "/slurmctld.out");
        std::this_thread::sleep_for(std::chrono::milliseconds(1000));
        spawn({"/usr/sbin/slurmd", "-D", "-N", host_}, dir_ + "/slurmd.out");
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(60);
        while (std::chrono::steady_clock::now() < deadline) {
            const auto state = test::run_binary("/usr/bin/sinfo", {"-h", "-o", "%t"});
            if (state.exit_code == 0 && state.out.find("idle") != std::string::npos) return {};
            std::this_thread::sleep_for(std::chrono::milliseconds(500));
        }
        return fmt::format("the node did not come up idle within 60 s: see {}/slurmctld.log and {}/slurmd.log:\n{}\n{}",
                           dir_, dir_, test::slurp(dir_ + "/slurmctld.log"), test::slurp(dir_ + "/slurmd.log"));
    }

private:
    std::string dir_, host_;
    int port_ = 26817;
    std::vector<pid_t> daemons_;

    static int run(const std::vector<std::string>& words) {
        return test::run_binary(words[0].c_str(), {words.begin() + 1, words.end()}).exit_code;
    }
    void spawn(const std::vector<std::string>& words, const std::string& log) {
        std::vector<std::string> storage;
        auto argv = test::kevo_argv({words.begin() + 1, words.end()}, storage, words[0].c_str());
        const pid_t pid = test::spawn_in_own_group(words[0].c_str(), argv.data(), environ, log);
        if (pid > 0) daemons_.push_back(pid);
    }
};

TEST(SlurmScript, TheScriptRunsTheStudyUnderARealSingleNodeSlurm) {
    const std::string why = LocalSlurm::missing();
    if (!why.empty()) {
        if (std::getenv("CI")) FAIL() << why << ": CI installs SLURM and Open MPI";
        GTEST_SKIP() << why;
    }
    if (::geteuid() != 0) GTEST_SKIP() << "slurmd must run as root to start jobs; this test is not root";
    test::TempDir dir("slurm");
    LocalSlurm slurm(dir.path().string());
    const std::string started = slurm.start();
    ASSERT_TRUE(started.empty()) << started;

    const std::string db = dir.file("study.db"), out = dir.file("runs"), script = dir.file("study.sbatch");
    const auto printed = test::run_scripted_kevo({"sweep", write_study("slurm"), "--db", db, "--out", out, "--dry-run",
                                                  "--slurm", "--ranks-per-node", "2"});
    ASSERT_EQ(printed.exit_code, 0) << printed.err;
    std::ofstream(script) << printed.out;
    // The job's environment is the submitter's (sbatch's default): mpirun as root, and no single-copy
    // mechanism for the shared-memory transport (containers often forbid it).
    test::ScopedEnv root_a("OMPI_ALLOW_RUN_AS_ROOT", "1"), root_b("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"),
        copy("OMPI_MCA_btl_vader_single_copy_mechanism", "none");
    const auto job = test::run_binary("/usr/bin/sbatch", {"--wait", "--chdir", dir.path().string(), script});
    std::string logs;
    for (const auto& entry : fs::directory_iterator(dir.path()))
        if (entry.path().filename().string().rfind("kevo-slurm-", 0) == 0) logs += test::slurp(entry.path().string());
    ASSERT_EQ(job.exit_code, 0) << job.out << job.err << "\njob log:\n" << logs;
    auto store = Store::open(db, Store::Access::read_only);
    ASSERT_TRUE(store.has_value()) << logs;
    auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs.has_value());
    EXPECT_EQ(runs->size(), 4u) << logs;
    for (const auto& r : *runs) EXPECT_EQ(r.status, RunStatus::finished) << r.run_id << "\n" << logs;
    EXPECT_FALSE(fs::exists(db + ".shards/rank-1.db")) << "merged";
}

}  // namespace
}  // namespace kevo
