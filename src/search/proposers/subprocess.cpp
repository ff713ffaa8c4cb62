// run_shell: posix_spawn of /bin/sh -c in a new process group, stdin written and stdout/stderr
// read concurrently with poll (a large prompt must not deadlock against a full stdout pipe),
// the whole group killed on the deadline.
#include "search/proposers/subprocess.hpp"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include <fcntl.h>
#include <poll.h>

#include "core/interrupt.hpp"
#include <pthread.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

extern char** environ;

namespace kevo {
namespace {

using Clock = std::chrono::steady_clock;

constexpr size_t kMaxStdout = 32u << 20;
constexpr size_t kMaxStderr = 64u << 10;  // only its tail is kept
constexpr auto kDrainGrace = std::chrono::seconds(1);

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

// While kevo writes the prompt, a command that exits without reading it must produce EPIPE, not
// a SIGPIPE that would end kevo. The signal is blocked on this thread only, and a SIGPIPE raised
// meanwhile is consumed before the mask is restored.
class SigpipeBlock {
public:
    SigpipeBlock() {
        sigset_t pipe_set;
        sigemptyset(&pipe_set);
        sigaddset(&pipe_set, SIGPIPE);
        sigset_t pending;
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
        pthread_sigmask(SIG_BLOCK, &pipe_set, &old_);
    }
    ~SigpipeBlock() {
        if (!was_pending_) {
            sigset_t pipe_set;
            sigemptyset(&pipe_set);
            sigaddset(&pipe_set, SIGPIPE);
            const timespec zero{0, 0};
            while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {}
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    SigpipeBlock(const SigpipeBlock&) = delete;
    SigpipeBlock& operator=(const SigpipeBlock&) = delete;

private:
    sigset_t old_;
    bool was_pending_ = false;
};

std::vector<std::string> environment(const std::vector<std::string>& extra) {
    std::vector<std::string> env;
    const auto overridden = [&](const char* entry) {
        const char* eq = std::strchr(entry, '=');
        const size_t n = eq ? static_cast<size_t>(eq - entry) : std::strlen(entry);
        return std::any_of(extra.begin(), extra.end(),
                           [&](const std::string& e) { return e.size() > n && e.compare(0, n, entry, n) == 0 && e[n] == '='; });
    };
    for (char** e = environ; e && *e; ++e)
        if (!overridden(*e)) env.emplace_back(*e);
    env.insert(env.end(), extra.begin(), extra.end());
    return env;
}

void set_nonblocking(int fd) { ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK); }

void decode_status(int status, SubprocessResult& r) {
    if (WIFEXITED(status)) r.exit_status = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) r.signal = WTERMSIG(status);
}

}  // namespace

Expected<SubprocessResult> run_shell(const std::string& command, const std::string& input, double timeout_s,
                                     const std::vector<std::string>& extra_env) {
    int in[2] = {-1, -1}, out[2] = {-1, -1}, err[2] = {-1, -1};
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(err, O_CLOEXEC) != 0) {
        const int e = errno;
        for (int* p : {in, out, err}) {
            close_fd(p[0]);
            close_fd(p[1]);
        }
        return make_error(fmt::format("cannot create pipes for the command: {}", std::strerror(e)));
    }

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
    posix_spawnattr_setpgroup(&attr, 0);
    // kevo ignores SIGPIPE; the command should get the ordinary behaviour back.
    sigset_t defaults, empty;
    sigemptyset(&defaults);
    sigaddset(&defaults, SIGPIPE);
    sigemptyset(&empty);
    posix_spawnattr_setsigdefault(&attr, &defaults);
    posix_spawnattr_setsigmask(&attr, &empty);

    std::vector<std::string> env = environment(extra_env);
    std::vector<char*> envp;
    for (auto& e : env) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string sh = "sh", dash_c = "-c", cmd = command;
    char* argv[] = {sh.data(), dash_c.data(), cmd.data(), nullptr};

    pid_t pid = -1;
    const auto start = Clock::now();
    const int rc = posix_spawn(&pid, "/bin/sh", &actions, &attr, argv, envp.data());
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    close_fd(in[0]);
    close_fd(out[1]);
    close_fd(err[1]);
    if (rc != 0) {
        close_fd(in[1]);
        close_fd(out[0]);
        close_fd(err[0]);
        return make_error(fmt::format("cannot start /bin/sh: {}", std::strerror(rc)));
    }

    SubprocessResult result;
    int write_fd = in[1], out_fd = out[0], err_fd = err[0];
    for (int fd : {write_fd, out_fd, err_fd}) set_nonblocking(fd);
    if (input.empty()) close_fd(write_fd);

    const SigpipeBlock sigpipe_block;
    auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    size_t written = 0;
    bool reaped = false;
    char buffer[65536];

    const auto drain = [&](int& fd, std::string& into, bool is_stdout) {
        for (;;) {
            const ssize_t n = ::read(fd, buffer, sizeof buffer);
            if (n > 0) {
                if (is_stdout) {
                    const size_t room = kMaxStdout - std::min(kMaxStdout, into.size());
                    into.append(buffer, std::min(room, static_cast<size_t>(n)));
                    if (static_cast<size_t>(n) > room) result.out_truncated = true;
                } else {
                    into.append(buffer, static_cast<size_t>(n));
                    if (into.size() > kMaxStderr) into.erase(0, into.size() - kMaxStderr);
                }
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
            close_fd(fd);  // EOF or a read error: nothing more will come
            return;
        }
    };

    for (;;) {
        if (!reaped) {
            int status = 0;
            if (::waitpid(pid, &status, WNOHANG) == pid) {
                reaped = true;
                decode_status(status, result);
                // Whatever it left running in the background goes with it; the pipes then close.
                ::kill(-pid, SIGKILL);
                deadline = std::min(deadline, Clock::now() + kDrainGrace);
                close_fd(write_fd);
            }
        }
        if (reaped && out_fd < 0 && err_fd < 0) break;

        if (!reaped && interrupt_requested()) {
            result.interrupted = true;
            ::kill(-pid, SIGKILL);
            int status = 0;
            while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            reaped = true;
            decode_status(status, result);
            break;
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            if (!reaped) {
                result.timed_out = true;
                ::kill(-pid, SIGKILL);
                int status = 0;
                while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
                reaped = true;
                decode_status(status, result);
                result.exit_status = -1;
            }
            break;
        }

        pollfd fds[3];
        nfds_t n = 0;
        if (write_fd >= 0) fds[n++] = {write_fd, POLLOUT, 0};
        if (out_fd >= 0) fds[n++] = {out_fd, POLLIN, 0};
        if (err_fd >= 0) fds[n++] = {err_fd, POLLIN, 0};
        const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        // Short waits while the pipes are closed but the process lives on: its exit is polled.
        const int wait_ms = static_cast<int>(std::clamp<long long>(remaining, 1, n == 0 ? 10 : 100));
        if (::poll(n ? fds : nullptr, n, wait_ms) < 0 && errno != EINTR) break;

        for (nfds_t i = 0; i < n; ++i) {
            if (fds[i].revents == 0) continue;
            if (fds[i].fd == write_fd) {
                const ssize_t w = ::write(write_fd, input.data() + written, std::min<size_t>(input.size() - written, 65536));
                if (w > 0) written += static_cast<size_t>(w);
                // EPIPE: the command does not read all of its stdin, which is its business.
                if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) close_fd(write_fd);
            } else if (fds[i].fd == out_fd) {
                drain(out_fd, result.out, true);
            } else if (fds[i].fd == err_fd) {
                drain(err_fd, result.err, false);
            }
        }
    }
    close_fd(write_fd);
    close_fd(out_fd);
    close_fd(err_fd);
    if (!reaped) {
        ::kill(-pid, SIGKILL);
        int status = 0;
        while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
        decode_status(status, result);
    }
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
}

}  // namespace kevo
