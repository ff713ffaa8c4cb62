// core/process with real processes (/bin/sh): output capture and its caps, stdin, the deadline
// killing a hanging child and what it started, exit codes and signals, resource limits, the death
// signal, the environment, extra pipes and log files.
#include <gtest/gtest.h>

#include <unistd.h>

#include <chrono>
#include <csignal>
#include <fstream>
#include <sstream>
#include <thread>

#include "core/process.hpp"
#include "temp_dir.hpp"

namespace kevo {
namespace {

using Clock = std::chrono::steady_clock;
double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

SpawnOptions shell(const std::string& script) {
    SpawnOptions o;
    o.executable = "/bin/sh";
    o.args = {"-c", script};
    o.stdin_to = o.stdout_to = o.stderr_to = StreamTo::pipe;
    return o;
}

Captured run(const SpawnOptions& o, const std::string& input = {}, double timeout_s = 20, CaptureLimits limits = {}) {
    auto p = Process::spawn(o);
    EXPECT_TRUE(p.has_value()) << (p ? "" : p.error().message);
    if (!p) return {};
    return p->communicate(input, timeout_s, limits);
}

// Gone, or a zombie nobody has reaped yet.
bool process_gone(int pid) {
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

bool wait_gone(int pid) {
    for (int i = 0; i < 100 && !process_gone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    return process_gone(pid);
}

std::string slurp(const std::string& path) {
    std::ifstream in(path);
    std::ostringstream s;
    s << in.rdbuf();
    return s.str();
}

TEST(Process, CapturesStdoutAndStderrApart) {
    const Captured c = run(shell("echo out; echo err >&2; exit 0"));
    EXPECT_EQ(c.out, "out\n");
    EXPECT_EQ(c.err, "err\n");
    EXPECT_TRUE(c.status.exited());
    EXPECT_EQ(c.status.code, 0);
    EXPECT_FALSE(c.timed_out);
    EXPECT_FALSE(c.out_truncated);
}

TEST(Process, EchoesALargeInputWithoutDeadlock) {
    const std::string input(3 << 20, 'x');  // far more than both pipes hold
    const auto start = Clock::now();
    const Captured c = run(shell("cat"), input);
    EXPECT_LT(seconds_since(start), 10.0);
    EXPECT_EQ(c.out.size(), input.size());
    EXPECT_EQ(c.out, input);
}

TEST(Process, CapsStdoutAndKeepsTheTailOfStderr) {
    CaptureLimits limits;
    limits.max_stdout = 1000;
    limits.max_stderr_tail = 4;
    const Captured c = run(shell("head -c 5000 /dev/zero; printf 'abcdefgh' >&2"), {}, 20, limits);
    EXPECT_EQ(c.out.size(), 1000u);
    EXPECT_TRUE(c.out_truncated);
    EXPECT_EQ(c.err, "efgh");
    // Positive control: under the cap nothing is marked.
    limits.max_stdout = 5000;
    const Captured whole = run(shell("head -c 5000 /dev/zero"), {}, 20, limits);
    EXPECT_EQ(whole.out.size(), 5000u);
    EXPECT_FALSE(whole.out_truncated);
}

TEST(Process, ExitCodesAndSignalsAreTold) {
    const Captured three = run(shell("exit 3"));
    EXPECT_EQ(three.status.code, 3);
    EXPECT_EQ(three.status.signal, 0);
    EXPECT_EQ(three.status.shell_code(), 3);
    EXPECT_EQ(three.status.describe(), "exited with status 3");
    const Captured term = run(shell("kill -TERM $$; sleep 5"));
    EXPECT_FALSE(term.status.exited());
    EXPECT_EQ(term.status.signal, SIGTERM);
    EXPECT_EQ(term.status.shell_code(), 128 + SIGTERM);
    EXPECT_EQ(term.status.describe(), "killed by signal TERM (Terminated)");
}

TEST(Process, DeadlineKillsAHangingChildAndItsGrandchildren) {
    test::TempDir dir;
    const std::string pid_file = dir.file("background.pid");
    const auto start = Clock::now();
    const Captured c = run(shell("sleep 30 & echo $! > '" + pid_file + "'; echo partial; sleep 30"), {}, 0.5);
    const double elapsed = seconds_since(start);
    EXPECT_TRUE(c.timed_out);
    EXPECT_EQ(c.status.signal, SIGKILL);
    EXPECT_EQ(c.out, "partial\n");  // what it wrote before the deadline is kept
    EXPECT_GE(elapsed, 0.45);
    EXPECT_LT(elapsed, 3.0);
    std::ifstream in(pid_file);
    int background = 0;
    ASSERT_TRUE(in >> background);
    EXPECT_TRUE(wait_gone(background)) << "the grandchild outlived the deadline";
}

TEST(Process, ExitingChildTakesItsBackgroundWithIt) {
    test::TempDir dir;
    const std::string pid_file = dir.file("background.pid");
    // The background sleep holds the pipes open: without the group kill this would wait 30 s.
    const auto start = Clock::now();
    const Captured c = run(shell("sleep 30 & echo $! > '" + pid_file + "'; exit 4"), {}, 20);
    EXPECT_LT(seconds_since(start), 5.0);
    EXPECT_FALSE(c.timed_out);
    EXPECT_EQ(c.status.code, 4);
    std::ifstream in(pid_file);
    int background = 0;
    ASSERT_TRUE(in >> background);
    EXPECT_TRUE(wait_gone(background));
}

TEST(Process, StopKillsTheGroup) {
    auto p = Process::spawn(shell("sleep 30"));
    ASSERT_TRUE(p.has_value()) << p.error().message;
    const auto start = Clock::now();
    const Captured c = p->communicate({}, 20, {}, [&] { return seconds_since(start) > 0.2; });
    EXPECT_TRUE(c.stopped);
    EXPECT_FALSE(c.timed_out);
    EXPECT_EQ(c.status.signal, SIGKILL);
    EXPECT_LT(seconds_since(start), 3.0);
}

TEST(Process, AddressSpaceLimitStopsALargeAllocation) {
    // The shell builds a 60 MB string: fine without a limit, fatal under 24 MiB of address space.
    const std::string script = "x=$(head -c 60000000 /dev/zero | tr '\\0' a); echo ${#x}";
    SpawnOptions limited = shell(script);
    limited.address_space_bytes = 24ull << 20;
    const Captured under = run(limited);
    EXPECT_NE(under.status.shell_code(), 0) << under.out;
    EXPECT_EQ(under.out.find("60000000"), std::string::npos);
    const Captured free_run = run(shell(script));  // positive control
    EXPECT_EQ(free_run.status.code, 0) << free_run.err;
    EXPECT_EQ(free_run.out, "60000000\n");
}

TEST(Process, CpuLimitEndsABusyLoop) {
    SpawnOptions o = shell("while :; do :; done");
    o.cpu_seconds = 1;
    const auto start = Clock::now();
    const Captured c = run(o, {}, 20);
    EXPECT_FALSE(c.timed_out) << "the CPU limit, not the deadline, should have ended it";
    EXPECT_TRUE(c.status.signal == SIGXCPU || c.status.signal == SIGKILL) << c.status.describe();
    EXPECT_LT(seconds_since(start), 15.0);
}

TEST(Process, EnvironmentIsInheritedAddedToAndOverridden) {
    test::ScopedEnv inherited("KEVO_PROCESS_TEST_KEPT", "kept");
    test::ScopedEnv overridden("KEVO_PROCESS_TEST_OVERRIDDEN", "old");
    SpawnOptions o = shell("echo \"$KEVO_PROCESS_TEST_KEPT $KEVO_PROCESS_TEST_OVERRIDDEN $KEVO_PROCESS_TEST_ADDED\"; "
                           "env | grep -c '^KEVO_PROCESS_TEST_OVERRIDDEN='");
    o.env = {{"KEVO_PROCESS_TEST_OVERRIDDEN", "new"}, {"KEVO_PROCESS_TEST_ADDED", "added"}};
    const Captured c = run(o);
    EXPECT_EQ(c.out, "kept new added\n1\n");
}

TEST(Process, MissingExecutableIsAnErrorOfSpawn) {
    SpawnOptions o;
    o.executable = "/nonexistent/kevo-no-such-program";
    o.description = "the test program";
    auto p = Process::spawn(o);
    ASSERT_FALSE(p.has_value());
    EXPECT_EQ(p.error().message, "cannot start the test program: No such file or directory");
}

TEST(Process, ExtraPipesReachFixedDescriptors) {
    SpawnOptions o;
    o.executable = "/bin/sh";
    o.args = {"-c", "read line <&3; echo \"got $line\" >&4"};
    o.extra_pipes = {{3, true}, {4, false}};
    auto p = Process::spawn(o);
    ASSERT_TRUE(p.has_value()) << p.error().message;
    ASSERT_GE(p->pipe_fd(3), 0);
    ASSERT_GE(p->pipe_fd(4), 0);
    EXPECT_EQ(p->pipe_fd(5), -1);
    ASSERT_EQ(::write(p->pipe_fd(3), "hello\n", 6), 6);
    char buffer[64] = {};
    std::string got;
    for (ssize_t n; got.find('\n') == std::string::npos && (n = ::read(p->pipe_fd(4), buffer, sizeof buffer)) > 0;)
        got.append(buffer, static_cast<size_t>(n));
    EXPECT_EQ(got, "got hello\n");
    auto status = p->wait_for(5);
    ASSERT_TRUE(status);
    EXPECT_EQ(status->code, 0);
}

TEST(Process, LogFileTakesStdoutAndStderrAndStdinIsEmpty) {
    test::TempDir dir;
    const std::string log = dir.file("child.log");
    { std::ofstream(log) << "earlier\n"; }
    SpawnOptions o;
    o.executable = "/bin/sh";
    o.args = {"-c", "cat; echo out; echo err >&2"};
    o.stdin_to = StreamTo::null;
    o.stdout_to = o.stderr_to = StreamTo::log_file;
    o.log_path = log;
    auto p = Process::spawn(o);
    ASSERT_TRUE(p.has_value()) << p.error().message;
    EXPECT_EQ(p->wait().code, 0);
    EXPECT_EQ(slurp(log), "earlier\nout\nerr\n");  // appended, never truncated
}

TEST(Process, DiesWithTheThreadThatStartedIt) {
    // PR_SET_PDEATHSIG fires when the spawning thread ends: a spawner on a short-lived thread
    // loses its child, which is why kevo spawns on the thread that keeps the handle.
    auto spawn_on_thread = [](bool die_with_parent) {
        std::optional<Process> child;
        std::thread([&] {
            SpawnOptions o;
            o.executable = "/bin/sh";
            o.args = {"-c", "sleep 30"};
            o.die_with_parent = die_with_parent;
            auto p = Process::spawn(o);
            if (p) child.emplace(std::move(*p));
        }).join();
        return child;
    };
    auto dying = spawn_on_thread(true);
    ASSERT_TRUE(dying);
    auto status = dying->wait_for(5);
    ASSERT_TRUE(status) << "the child outlived its spawning thread";
    EXPECT_EQ(status->signal, SIGKILL);
    auto living = spawn_on_thread(false);  // positive control
    ASSERT_TRUE(living);
    EXPECT_FALSE(living->wait_for(0.3)) << "without the death signal the child lives on";
    EXPECT_EQ(living->kill_group().signal, SIGKILL);
}

TEST(Process, HandleGoingOutOfScopeKillsAndReaps) {
    int pid = -1;
    {
        auto p = Process::spawn(shell("sleep 30"));
        ASSERT_TRUE(p.has_value());
        pid = p->pid();
        EXPECT_FALSE(p->poll());
    }
    EXPECT_TRUE(wait_gone(pid));
    errno = 0;
    EXPECT_EQ(::kill(pid, 0), -1) << "reaped, not left a zombie";
}

TEST(Process, SelfExecutableIsThisBinary) {
    const std::string self = self_executable();
    EXPECT_NE(self, "/proc/self/exe");
    EXPECT_EQ(::access(self.c_str(), X_OK), 0) << self;
}

}  // namespace
}  // namespace kevo
