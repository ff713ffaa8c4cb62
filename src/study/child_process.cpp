// See child_process.hpp. fork + execve rather than posix_spawn: the death signal must be set in
// the child. Everything the child needs is built before the fork, so that the child calls only
// async-signal-safe functions.
#include "study/child_process.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>

#include <fmt/format.h>

extern char** environ;

namespace kevo {

Expected<ChildProcess> ChildProcess::spawn(const std::string& executable, const std::vector<std::string>& args,
                                           const std::vector<std::pair<std::string, std::string>>& env,
                                           const std::string& log_path) {
    std::vector<std::string> argv_text = {executable};
    argv_text.insert(argv_text.end(), args.begin(), args.end());
    std::vector<char*> argv;
    for (auto& a : argv_text) argv.push_back(a.data());
    argv.push_back(nullptr);
    std::vector<std::string> env_text;
    for (char** e = environ; *e; ++e) {
        const std::string_view entry(*e);
        bool replaced = false;
        for (const auto& [name, value] : env) replaced = replaced || entry.substr(0, name.size() + 1) == name + "=";
        if (!replaced) env_text.emplace_back(entry);
    }
    for (const auto& [name, value] : env) env_text.push_back(name + "=" + value);
    std::vector<char*> envp;
    for (auto& e : env_text) envp.push_back(e.data());
    envp.push_back(nullptr);

    const int log = ::open(log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (log < 0) return make_error(fmt::format("cannot open the log {}: {}", log_path, std::strerror(errno)));
    const int null_in = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
    const pid_t parent = ::getpid();
    const pid_t pid = ::fork();
    if (pid < 0) {
        const int err = errno;
        ::close(log);
        if (null_in >= 0) ::close(null_in);
        return make_error(fmt::format("cannot start {}: {}", executable, std::strerror(err)));
    }
    if (pid == 0) {
        ::setpgid(0, 0);
        ::prctl(PR_SET_PDEATHSIG, SIGKILL);
        if (::getppid() != parent) ::_exit(128 + SIGKILL);  // the sweep died before the death signal was set
        if (null_in >= 0) ::dup2(null_in, 0);
        ::dup2(log, 1);
        ::dup2(log, 2);
        ::execve(executable.c_str(), argv.data(), envp.data());
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also from here, so that it holds before the first signal is sent
    ::close(log);
    if (null_in >= 0) ::close(null_in);
    return ChildProcess(pid);
}

std::optional<int> ChildProcess::poll() {
    if (status_) return status_;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) status_ = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    else if (r < 0 && errno == ECHILD) status_ = 128 + SIGKILL;  // reaped elsewhere: it is gone
    return status_;
}

void ChildProcess::signal(int sig) const {
    if (!status_) ::kill(pid_, sig);
}

}  // namespace kevo
