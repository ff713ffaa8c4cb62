// Child processes, the one place kevo starts them: the evaluation worker, the cmd proposer's shell
// command and a sweep's `kevo run` children. A child runs in its own process group (a deadline or
// a crash kills everything it started), dies with kevo (PR_SET_PDEATHSIG), may be held to resource
// limits, and talks through pipes whose output is capped. Starting a child is an environment fault
// when it fails (no such file, no pipes); what the child does is data (ExitStatus, Captured).
#pragma once

#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/expected.hpp"
#include "core/sandbox.hpp"

namespace kevo {

// How a child ended: an exit status or the signal that ended it.
struct ExitStatus {
    int code = -1;   // WEXITSTATUS when it exited
    int signal = 0;  // WTERMSIG when a signal ended it
    bool exited() const { return signal == 0; }
    // The shell's convention: the exit code, or 128 + N when signal N ended it.
    int shell_code() const { return signal ? 128 + signal : code; }
    // "exited with status 3", "killed by signal KILL (Killed)".
    std::string describe() const;
};

// Where one of the child's standard streams comes from or goes.
enum class StreamTo {
    inherit,    // kevo's own
    null,       // /dev/null
    pipe,       // a pipe kevo holds the other end of (Process::stdin_fd/stdout_fd/stderr_fd)
    log_file,   // SpawnOptions::log_path, appended (stdout and stderr only)
    to_stderr,  // stdout joins the child's stderr (stdout only)
};

// An extra pipe at a fixed descriptor of the child (the worker's protocol on fds 3 and 4).
struct ExtraPipe {
    int child_fd;
    bool child_reads;  // true: kevo writes, the child reads
};

struct SpawnOptions {
    std::string executable;                                  // a path; not looked up in PATH
    std::vector<std::string> args;                           // argv[1...]
    std::string argv0;                                       // empty: the executable
    std::string description;                                 // what errors call it (empty: the executable)
    std::vector<std::pair<std::string, std::string>> env;    // added to, and overriding, kevo's environment
    bool inherit_environment = true;                         // false: `env` alone (no API keys for untrusted code)
    StreamTo stdin_to = StreamTo::inherit;
    StreamTo stdout_to = StreamTo::inherit;
    StreamTo stderr_to = StreamTo::inherit;
    std::string log_path;
    std::vector<ExtraPipe> extra_pipes;
    bool die_with_parent = true;       // SIGKILL when kevo (the spawning thread) ends
    bool default_signals = false;      // SIGPIPE back to its default and no blocked signals (kevo ignores SIGPIPE)
    std::optional<unsigned long long> address_space_bytes;  // RLIMIT_AS
    std::optional<unsigned long long> cpu_seconds;          // RLIMIT_CPU
    std::string working_dir;                                 // empty: kevo's own
    const SandboxPlan* sandbox = nullptr;                    // entered just before exec; must outlive spawn()
};

// What Process::communicate collected.
struct Captured {
    ExitStatus status;
    std::string out, err;        // err keeps only its tail
    bool out_truncated = false;  // stdout passed its cap; the rest was discarded
    bool timed_out = false;      // the deadline passed: the group was killed
    bool stopped = false;        // `stop` said so: the group was killed
    double seconds = 0;
};

struct CaptureLimits {
    size_t max_stdout = 32u << 20;
    size_t max_stderr_tail = 64u << 10;
};

class Process {
public:
    static Expected<Process> spawn(const SpawnOptions& options);

    Process(Process&& other) noexcept;
    Process& operator=(Process&& other) noexcept;
    Process(const Process&) = delete;
    Process& operator=(const Process&) = delete;
    // A child still running is killed with its group and reaped: none outlives its handle.
    ~Process();

    pid_t pid() const { return pid_; }
    int stdin_fd() const { return stdin_; }
    int stdout_fd() const { return stdout_; }
    int stderr_fd() const { return stderr_; }
    // kevo's end of the extra pipe at `child_fd`; -1 when there is none.
    int pipe_fd(int child_fd) const;
    void close_stdin();

    // How it ended, once it has (reaps it); nothing while it runs.
    std::optional<ExitStatus> poll();
    // Waits up to `seconds` for it to end.
    std::optional<ExitStatus> wait_for(double seconds);
    ExitStatus wait();
    bool reaped() const { return status_.has_value(); }

    void signal(int sig) const;  // the child only (a sweep passes one SIGINT on)
    // SIGKILL to the whole group, then reaps the child.
    ExitStatus kill_group();

    // Writes `input` to stdin (then closes it) while reading stdout and stderr (a large input must
    // not deadlock against a full output pipe), until the child has exited and its pipes closed.
    // The group is killed on the deadline, when `stop` returns true (polled every 0.1 s), and after
    // the child exits (whatever it left in the background goes with it, after a 1 s drain).
    Captured communicate(const std::string& input, double timeout_s, const CaptureLimits& limits = {},
                         const std::function<bool()>& stop = {});

private:
    Process() = default;
    void release();
    pid_t pid_ = -1;
    int stdin_ = -1, stdout_ = -1, stderr_ = -1;
    std::vector<std::pair<int, int>> extra_;  // (child fd, kevo's end)
    std::optional<ExitStatus> status_;
};

// Path of the running executable (the worker and the sweep's children are this same binary).
std::string self_executable();

}  // namespace kevo
