// See process.hpp. fork + execve rather than posix_spawn: the death signal and the resource limits
// must be set in the child. Everything the child needs is built before the fork, so that the child
// calls only async-signal-safe functions (kevo has threads). An exec failure comes back through a
// close-on-exec pipe, so that a missing executable is an error of spawn, not an exit status.
#include "core/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <string_view>
#include <thread>

#include <fmt/format.h>

extern char** environ;

namespace kevo {

namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kDrainGrace = std::chrono::seconds(1);
// Descriptors kevo keeps are lifted above this, so that the child's dup2 calls onto 0-4 cannot
// clobber a source that has not been moved yet.
constexpr int kHighFd = 10;

void close_fd(int& fd) {
    if (fd >= 0) ::close(fd);
    fd = -1;
}

int lift(int fd) {
    if (fd < 0 || fd >= kHighFd) return fd;
    const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, kHighFd);
    if (high < 0) return fd;
    ::close(fd);
    return high;
}

// A pipe with both ends close-on-exec and above kHighFd; [0] reads, [1] writes.
bool make_pipe(int ends[2]) {
    if (::pipe2(ends, O_CLOEXEC) != 0) return false;
    ends[0] = lift(ends[0]);
    ends[1] = lift(ends[1]);
    return true;
}

ExitStatus decode(int status) {
    ExitStatus s;
    if (WIFEXITED(status)) s.code = WEXITSTATUS(status);
    if (WIFSIGNALED(status)) s.signal = WTERMSIG(status);
    return s;
}

std::vector<std::string> environment(const std::vector<std::pair<std::string, std::string>>& extra, bool inherit) {
    std::vector<std::string> env;
    for (char** e = inherit ? environ : nullptr; e && *e; ++e) {
        const std::string_view entry(*e);
        const bool replaced = std::any_of(extra.begin(), extra.end(), [&](const auto& kv) {
            return entry.size() > kv.first.size() && entry.compare(0, kv.first.size(), kv.first) == 0 &&
                   entry[kv.first.size()] == '=';
        });
        if (!replaced) env.emplace_back(entry);
    }
    for (const auto& [name, value] : extra) env.push_back(name + "=" + value);
    return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    for (auto& s : strings) out.push_back(s.data());
    out.push_back(nullptr);
    return out;
}

// While kevo writes a child's stdin, a child that exits without reading it must produce EPIPE, not
// a SIGPIPE that would end kevo (kevo's main ignores it; a library user may not). The signal is
// blocked on this thread only, and one raised meanwhile is consumed before the mask is restored.
class SigpipeBlock {
public:
    SigpipeBlock() {
        sigset_t pipe_set = sigpipe_set();
        sigset_t pending;
        sigpending(&pending);
        was_pending_ = sigismember(&pending, SIGPIPE) == 1;
        pthread_sigmask(SIG_BLOCK, &pipe_set, &old_);
    }
    ~SigpipeBlock() {
        if (!was_pending_) {
            sigset_t pipe_set = sigpipe_set();
            const timespec zero{0, 0};
            while (sigtimedwait(&pipe_set, nullptr, &zero) == SIGPIPE) {}
        }
        pthread_sigmask(SIG_SETMASK, &old_, nullptr);
    }
    SigpipeBlock(const SigpipeBlock&) = delete;
    SigpipeBlock& operator=(const SigpipeBlock&) = delete;

private:
    static sigset_t sigpipe_set() {
        sigset_t s;
        sigemptyset(&s);
        sigaddset(&s, SIGPIPE);
        return s;
    }
    sigset_t old_;
    bool was_pending_ = false;
};

// The child's side of one descriptor: dup2(source, target) after the fork.
struct Dup {
    int source, target;
};

}  // namespace

std::string ExitStatus::describe() const {
    if (signal) {
        const char* abbrev = sigabbrev_np(signal);
        return fmt::format("killed by signal {} ({})", abbrev ? abbrev : "?", strsignal(signal));
    }
    return fmt::format("exited with status {}", code);
}

Expected<Process> Process::spawn(const SpawnOptions& o) {
    std::vector<std::string> argv_text = {o.argv0.empty() ? o.executable : o.argv0};
    argv_text.insert(argv_text.end(), o.args.begin(), o.args.end());
    std::vector<char*> argv = pointers(argv_text);
    std::vector<std::string> env_text = environment(o.env, o.inherit_environment);
    std::vector<char*> envp = pointers(env_text);

    const std::string& what = o.description.empty() ? o.executable : o.description;
    Process p;
    std::vector<int> child_ends;  // closed in kevo once the child has them
    std::vector<Dup> dups;
    auto fail = [&](const std::string& why) {
        for (int& fd : child_ends) close_fd(fd);
        return make_error(fmt::format("cannot start {}: {}", what, why));
    };
    auto open_fd = [&](const char* path, int flags) {
        const int fd = lift(::open(path, flags | O_CLOEXEC, 0644));
        if (fd >= 0) child_ends.push_back(fd);
        return fd;
    };
    // One stream: its source for the child, and kevo's end when it is a pipe.
    auto stream = [&](StreamTo to, int target, int& kevo_end) -> std::optional<std::string> {
        switch (to) {
            case StreamTo::inherit:
                return std::nullopt;
            case StreamTo::null: {
                const int fd = open_fd("/dev/null", target == 0 ? O_RDONLY : O_WRONLY);
                if (fd < 0) return fmt::format("/dev/null: {}", std::strerror(errno));
                dups.push_back({fd, target});
                return std::nullopt;
            }
            case StreamTo::pipe: {
                int ends[2];
                if (!make_pipe(ends)) return fmt::format("pipe: {}", std::strerror(errno));
                const bool child_reads = target == 0;
                kevo_end = child_reads ? ends[1] : ends[0];
                child_ends.push_back(child_reads ? ends[0] : ends[1]);
                dups.push_back({child_ends.back(), target});
                return std::nullopt;
            }
            case StreamTo::log_file: {
                if (target == 0) return std::string("stdin cannot come from a log file");
                const int fd = open_fd(o.log_path.c_str(), O_WRONLY | O_CREAT | O_APPEND);
                if (fd < 0) return fmt::format("cannot open the log {}: {}", o.log_path, std::strerror(errno));
                dups.push_back({fd, target});
                return std::nullopt;
            }
            case StreamTo::to_stderr:
                if (target != 1) return std::string("only stdout can join stderr");
                dups.push_back({2, 1});
                return std::nullopt;
        }
        return std::nullopt;
    };
    // stderr first: stdout may join it.
    if (auto why = stream(o.stderr_to, 2, p.stderr_)) return fail(*why);
    if (auto why = stream(o.stdout_to, 1, p.stdout_)) return fail(*why);
    if (auto why = stream(o.stdin_to, 0, p.stdin_)) return fail(*why);
    for (const ExtraPipe& extra : o.extra_pipes) {
        int ends[2];
        if (!make_pipe(ends)) return fail(fmt::format("pipe: {}", std::strerror(errno)));
        p.extra_.emplace_back(extra.child_fd, extra.child_reads ? ends[1] : ends[0]);
        child_ends.push_back(extra.child_reads ? ends[0] : ends[1]);
        dups.push_back({child_ends.back(), extra.child_fd});
    }
    int exec_error[2];
    if (!make_pipe(exec_error)) return fail(fmt::format("pipe: {}", std::strerror(errno)));

    rlimit as_limit{}, cpu_limit{};
    if (o.address_space_bytes) as_limit.rlim_cur = as_limit.rlim_max = *o.address_space_bytes;
    if (o.cpu_seconds) cpu_limit.rlim_cur = cpu_limit.rlim_max = *o.cpu_seconds;
    sigset_t no_signals;
    sigemptyset(&no_signals);
    struct sigaction default_action {};
    default_action.sa_handler = SIG_DFL;
    const pid_t parent = ::getpid();

    const pid_t pid = ::fork();
    if (pid < 0) {
        const int e = errno;
        close_fd(exec_error[0]);
        close_fd(exec_error[1]);
        return fail(std::strerror(e));
    }
    if (pid == 0) {
        // The child: async-signal-safe calls only.
        ::setpgid(0, 0);
        if (o.die_with_parent) {
            ::prctl(PR_SET_PDEATHSIG, SIGKILL);
            if (::getppid() != parent) ::_exit(128 + SIGKILL);  // kevo died before the death signal was set
        }
        for (const Dup& d : dups) ::dup2(d.source, d.target);
        if (o.address_space_bytes) ::setrlimit(RLIMIT_AS, &as_limit);
        if (o.cpu_seconds) ::setrlimit(RLIMIT_CPU, &cpu_limit);
        if (o.default_signals) {
            ::sigaction(SIGPIPE, &default_action, nullptr);
            ::sigprocmask(SIG_SETMASK, &no_signals, nullptr);
        }
        if (!o.working_dir.empty() && ::chdir(o.working_dir.c_str()) != 0) {
            const int e = errno;
            [[maybe_unused]] const ssize_t n = ::write(exec_error[1], &e, sizeof e);
            ::_exit(127);
        }
        if (o.sandbox) o.sandbox->enter();
        ::execve(o.executable.c_str(), argv.data(), envp.data());
        const int e = errno;
        [[maybe_unused]] const ssize_t n = ::write(exec_error[1], &e, sizeof e);
        ::_exit(127);
    }
    ::setpgid(pid, pid);  // also from here, so that it holds before the first signal is sent
    p.pid_ = pid;
    for (int& fd : child_ends) close_fd(fd);
    close_fd(exec_error[1]);
    int e = 0;
    ssize_t n;
    while ((n = ::read(exec_error[0], &e, sizeof e)) < 0 && errno == EINTR) {}
    close_fd(exec_error[0]);
    if (n == static_cast<ssize_t>(sizeof e)) {
        p.wait();  // it exits at once (127)
        return make_error(fmt::format("cannot start {}: {}", what, std::strerror(e)));
    }
    return p;
}

Process::Process(Process&& other) noexcept { *this = std::move(other); }

Process& Process::operator=(Process&& other) noexcept {
    if (this == &other) return *this;
    release();
    pid_ = std::exchange(other.pid_, -1);
    stdin_ = std::exchange(other.stdin_, -1);
    stdout_ = std::exchange(other.stdout_, -1);
    stderr_ = std::exchange(other.stderr_, -1);
    extra_ = std::exchange(other.extra_, {});
    status_ = std::exchange(other.status_, std::nullopt);
    return *this;
}

Process::~Process() { release(); }

void Process::release() {
    if (pid_ > 0 && !status_) kill_group();
    close_fd(stdin_);
    close_fd(stdout_);
    close_fd(stderr_);
    for (auto& [child_fd, fd] : extra_) close_fd(fd);
    extra_.clear();
    pid_ = -1;
}

int Process::pipe_fd(int child_fd) const {
    for (const auto& [target, fd] : extra_)
        if (target == child_fd) return fd;
    return -1;
}

void Process::close_stdin() { close_fd(stdin_); }

std::optional<ExitStatus> Process::poll() {
    if (status_ || pid_ <= 0) return status_;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) status_ = decode(status);
    else if (r < 0 && errno == ECHILD) status_ = ExitStatus{-1, SIGKILL};  // reaped elsewhere: it is gone
    return status_;
}

std::optional<ExitStatus> Process::wait_for(double seconds) {
    const auto deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (!poll()) {
        if (Clock::now() >= deadline) return std::nullopt;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    return status_;
}

ExitStatus Process::wait() {
    if (status_ || pid_ <= 0) return status_.value_or(ExitStatus{});
    int status = 0;
    pid_t r;
    while ((r = ::waitpid(pid_, &status, 0)) < 0 && errno == EINTR) {}
    status_ = r == pid_ ? decode(status) : ExitStatus{-1, SIGKILL};
    return *status_;
}

void Process::signal(int sig) const {
    if (pid_ > 0 && !status_) ::kill(pid_, sig);
}

ExitStatus Process::kill_group() {
    if (pid_ > 0 && !status_) {
        ::kill(-pid_, SIGKILL);  // the whole group: whatever it started, driver helpers included
        ::kill(pid_, SIGKILL);
    }
    return wait();
}

Captured Process::communicate(const std::string& input, double timeout_s, const CaptureLimits& limits,
                              const std::function<bool()>& stop) {
    Captured result;
    const auto start = Clock::now();
    for (int fd : {stdin_, stdout_, stderr_})
        if (fd >= 0) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
    if (input.empty()) close_fd(stdin_);

    const SigpipeBlock sigpipe_block;
    auto deadline = start + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(timeout_s));
    size_t written = 0;
    char buffer[65536];

    const auto drain = [&](int& fd, std::string& into, bool is_stdout) {
        for (;;) {
            const ssize_t n = ::read(fd, buffer, sizeof buffer);
            if (n > 0) {
                if (is_stdout) {
                    const size_t room = limits.max_stdout - std::min(limits.max_stdout, into.size());
                    into.append(buffer, std::min(room, static_cast<size_t>(n)));
                    if (static_cast<size_t>(n) > room) result.out_truncated = true;
                } else {
                    into.append(buffer, static_cast<size_t>(n));
                    if (into.size() > limits.max_stderr_tail) into.erase(0, into.size() - limits.max_stderr_tail);
                }
                continue;
            }
            if (n < 0 && (errno == EAGAIN || errno == EINTR)) return;
            close_fd(fd);  // EOF or a read error: nothing more will come
            return;
        }
    };

    for (;;) {
        if (!status_ && poll()) {
            // Whatever it left running in the background goes with it; the pipes then close.
            ::kill(-pid_, SIGKILL);
            deadline = std::min(deadline, Clock::now() + kDrainGrace);
            close_fd(stdin_);
        }
        if (status_ && stdout_ < 0 && stderr_ < 0) break;
        if (!status_ && stop && stop()) {
            result.stopped = true;
            kill_group();
            break;
        }
        const auto now = Clock::now();
        if (now >= deadline) {
            if (!status_) {
                result.timed_out = true;
                kill_group();
            }
            break;
        }

        pollfd fds[3];
        nfds_t n = 0;
        if (stdin_ >= 0) fds[n++] = {stdin_, POLLOUT, 0};
        if (stdout_ >= 0) fds[n++] = {stdout_, POLLIN, 0};
        if (stderr_ >= 0) fds[n++] = {stderr_, POLLIN, 0};
        const auto remaining = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count();
        // Short waits while the pipes are closed but the process lives on: its exit is polled.
        const int wait_ms = static_cast<int>(std::clamp<long long>(remaining, 1, n == 0 ? 10 : 100));
        if (::poll(n ? fds : nullptr, n, wait_ms) < 0 && errno != EINTR) break;

        for (nfds_t i = 0; i < n; ++i) {
            if (fds[i].revents == 0) continue;
            if (fds[i].fd == stdin_) {
                const ssize_t w = ::write(stdin_, input.data() + written, std::min<size_t>(input.size() - written, 65536));
                if (w > 0) written += static_cast<size_t>(w);
                // EPIPE: the child does not read all of its stdin, which is its business.
                if ((w < 0 && errno != EAGAIN && errno != EINTR) || written == input.size()) close_fd(stdin_);
            } else if (fds[i].fd == stdout_) {
                drain(stdout_, result.out, true);
            } else if (fds[i].fd == stderr_) {
                drain(stderr_, result.err, false);
            }
        }
    }
    close_fd(stdin_);
    close_fd(stdout_);
    close_fd(stderr_);
    result.status = kill_group();  // a no-op when it was reaped
    result.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    return result;
}

std::string self_executable() {
    std::error_code ec;
    auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("/proc/self/exe") : path.string();
}

}  // namespace kevo
