// Test helper: runs the real kevo binary (KEVO_BINARY), or kevo on scripted evaluations
// (KEVO_SCRIPTED_BINARY, scripted_kevo.cpp), with arguments and captures its exit status, stdout,
// stderr and wall time. Used by the CLI and fault-candidate tests.
#pragma once

#include <fcntl.h>
#include <pty.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "backend/registry.hpp"
#include "temp_dir.hpp"

extern char** environ;

namespace kevo::test {

struct ProcessResult {
    int exit_code = -1;
    std::string out, err;
    double seconds = 0;
    nlohmann::json json() const { return nlohmann::json::parse(out, nullptr, false); }
};

inline std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

// `binary`'s argv for `args`; `storage` holds the strings the pointers point into.
inline std::vector<char*> kevo_argv(const std::vector<std::string>& args, std::vector<std::string>& storage,
                                    const char* binary = KEVO_BINARY) {
    storage = {binary};
    storage.insert(storage.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : storage) argv.push_back(a.data());
    argv.push_back(nullptr);
    return argv;
}

inline ProcessResult run_binary(const char* binary, const std::vector<std::string>& args) {
    static int counter = 0;
    const std::string base = ::testing::TempDir() + "kevo_proc_" + std::to_string(::getpid()) + "_" + std::to_string(counter++);
    const std::string out_path = base + ".out", err_path = base + ".err";
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    std::vector<std::string> all;
    auto argv = kevo_argv(args, all, binary);
    ProcessResult r;
    const auto start = std::chrono::steady_clock::now();
    pid_t pid = -1;
    if (posix_spawn(&pid, binary, &actions, nullptr, argv.data(), environ) == 0) {
        int status = 0;
        ::waitpid(pid, &status, 0);
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    }
    posix_spawn_file_actions_destroy(&actions);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    r.out = slurp(out_path);
    r.err = slurp(err_path);
    std::remove(out_path.c_str());
    std::remove(err_path.c_str());
    return r;
}

inline ProcessResult run_kevo(const std::vector<std::string>& args) { return run_binary(KEVO_BINARY, args); }
// kevo's commands on scripted evaluations: for tests of rules (resume, studies, reports), not of kernels.
inline ProcessResult run_scripted_kevo(const std::vector<std::string>& args) {
    return run_binary(KEVO_SCRIPTED_BINARY, args);
}

// Starts a program in the background in its own process group (so that the whole group can be
// killed), stdin from /dev/null, stdout and stderr to `log_path` (stderr to `err_path` where one is
// given); returns its pid, or -1.
inline pid_t spawn_in_own_group(const char* path, char* const* argv, char* const* envp, const std::string& log_path,
                                const std::string& err_path = "") {
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (err_path.empty()) posix_spawn_file_actions_adddup2(&actions, 1, 2);
    else posix_spawn_file_actions_addopen(&actions, 2, err_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    pid_t pid = -1;
    if (posix_spawn(&pid, path, &actions, &attr, argv, envp) != 0) pid = -1;
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    return pid;
}

// Starts kevo in the background (its own process group, output to `log_path`, stderr to `err_path`
// where one is given); returns its pid.
inline pid_t spawn_kevo(const std::vector<std::string>& args, const std::string& log_path, const std::string& err_path = "",
                        const char* binary = KEVO_BINARY) {
    std::vector<std::string> all;
    auto argv = kevo_argv(args, all, binary);
    return spawn_in_own_group(binary, argv.data(), environ, log_path, err_path);
}

// kevo_scripted in the background (as spawn_kevo), each evaluation lasting `delay_ms`, so that a
// signal or a kill sent once the run has made progress lands before its end.
inline pid_t spawn_scripted_kevo(const std::vector<std::string>& args, const std::string& log_path, int delay_ms) {
    ScopedEnv delay("KEVO_SCRIPTED_DELAY_MS", std::to_string(delay_ms));
    return spawn_kevo(args, log_path, "", KEVO_SCRIPTED_BINARY);
}

// Runs kevo with stdout and stderr on one pseudo-terminal, as a user at a terminal sees it: the
// returned `out` is everything that reached the screen, escape sequences included.
inline ProcessResult run_kevo_on_terminal(const std::vector<std::string>& args, const char* binary = KEVO_BINARY) {
    std::vector<std::string> all;
    auto argv = kevo_argv(args, all, binary);
    ProcessResult r;
    const auto start = std::chrono::steady_clock::now();
    winsize size{};
    size.ws_row = 50;
    size.ws_col = 200;
    int terminal = -1;
    const pid_t pid = ::forkpty(&terminal, nullptr, nullptr, &size);
    if (pid < 0) return r;
    if (pid == 0) {
        ::execve(binary, argv.data(), environ);
        ::_exit(127);
    }
    char buffer[4096];
    while (true) {
        const ssize_t n = ::read(terminal, buffer, sizeof buffer);
        if (n <= 0) break;  // EIO once the child has closed its side
        r.out.append(buffer, static_cast<size_t>(n));
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    ::close(terminal);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return r;
}

inline std::string candidate(const std::string& name) { return std::string(KEVO_CANDIDATES_DIR) + "/" + name; }

inline bool has_device(const std::string& backend) {
    auto b = make_backend(backend);
    return b && !b->probe().empty();
}

}  // namespace kevo::test
