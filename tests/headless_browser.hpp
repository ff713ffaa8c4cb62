// Test helper: loads a page in Debian's chromium, headless, and returns the DOM after load
// (--dump-dom) with chromium's log (stderr, where the page's console messages appear as
// "...:CONSOLE..." lines). Bounded: past the timeout chromium's whole process group is killed.
#pragma once

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "kevo_process.hpp"

namespace kevo::test {

// chromium's path, when installed.
inline std::optional<std::string> find_chromium() {
    for (const char* p : {"/usr/bin/chromium", "/usr/bin/chromium-browser"})
        if (std::filesystem::exists(p)) return std::string(p);
    return std::nullopt;
}

inline bool running_in_ci() {
    const char* ci = std::getenv("CI");
    return ci && *ci && std::string(ci) != "false" && std::string(ci) != "0";
}

struct BrowserResult {
    bool finished = false;  // exited by itself within the timeout
    int exit_code = -1;
    std::string dom, log;
};

// Runs chromium with `extra` arguments and the page's file:// URL; the DOM comes from stdout.
inline BrowserResult run_chromium(const std::string& chromium, const std::string& page, const std::vector<std::string>& extra,
                                  const std::string& scratch, double timeout_s = 90) {
    const std::string out_path = scratch + "/chromium.out", log_path = scratch + "/chromium.log";
    std::vector<std::string> args = {chromium, "--headless", "--no-sandbox", "--disable-gpu", "--enable-logging=stderr",
                                     "--v=0", "--user-data-dir=" + scratch + "/profile"};
    args.insert(args.end(), extra.begin(), extra.end());
    args.push_back("file://" + std::filesystem::absolute(page).string());
    // stdout to its own file (the DOM), stderr to the log: a shell does the split, in chromium's group.
    std::string command = "exec";
    for (const auto& a : args) command += " '" + a + "'";
    command += " > '" + out_path + "'";
    std::vector<std::string> sh = {"/bin/sh", "-c", command};
    std::vector<char*> argv;
    for (auto& a : sh) argv.push_back(a.data());
    argv.push_back(nullptr);
    BrowserResult r;
    const pid_t pid = spawn_in_own_group("/bin/sh", argv.data(), environ, log_path);
    if (pid < 0) return r;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    int status = 0;
    while (std::chrono::steady_clock::now() < deadline) {
        if (::waitpid(pid, &status, WNOHANG) == pid) {
            r.finished = true;
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    // Whatever is left of the group (renderers, a hung browser) goes.
    ::kill(-pid, SIGKILL);
    if (!r.finished) ::waitpid(pid, &status, 0);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    r.dom = slurp(out_path);
    r.log = slurp(log_path);
    return r;
}

}  // namespace kevo::test
