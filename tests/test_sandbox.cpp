// The sandbox a child can be spawned in (core/sandbox.hpp): writes outside one folder fail, the
// network namespace is a fresh one (only a loopback device), and without the sandbox the same child
// does both (the control).
#include <gtest/gtest.h>

#include <filesystem>

#include "core/process.hpp"
#include "core/sandbox.hpp"
#include "temp_dir.hpp"

namespace kevo {
namespace {

Captured run_shell(const std::string& script, const SandboxPlan* sandbox) {
    SpawnOptions options;
    options.executable = "/bin/sh";
    options.args = {"-c", script};
    options.stdin_to = StreamTo::null;
    options.stdout_to = StreamTo::pipe;
    options.stderr_to = StreamTo::pipe;
    options.sandbox = sandbox;
    auto child = Process::spawn(options);
    EXPECT_TRUE(child) << (child ? "" : child.error().message);
    return child ? child->communicate("", 30) : Captured{};
}

TEST(Sandbox, WritesOutsideTheFolderFailAndInsideSucceed) {
    const test::TempDir inside("sandbox-in"), outside("sandbox-out");
    const SandboxPlan plan(SandboxOptions{false, inside.path().string()});
    if (!plan.unavailable().empty()) GTEST_SKIP() << "Landlock is not offered by this kernel: " << plan.unavailable().front();
    const std::string script = "echo a > " + inside.file("kept") + "; echo b > " + outside.file("escaped") +
                               "; mkdir " + outside.file("dir") + "; echo c > /dev/null && echo null-ok";
    const Captured sandboxed = run_shell(script, &plan);
    EXPECT_TRUE(std::filesystem::exists(inside.file("kept")));
    EXPECT_FALSE(std::filesystem::exists(outside.file("escaped")));
    EXPECT_FALSE(std::filesystem::exists(outside.file("dir")));
    EXPECT_NE(sandboxed.out.find("null-ok"), std::string::npos) << sandboxed.err;
    // Control: the same script without the sandbox writes both.
    run_shell(script, nullptr);
    EXPECT_TRUE(std::filesystem::exists(outside.file("escaped")));
}

TEST(Sandbox, AChildOfUntrustedCodeSeesOnlyTheEnvironmentItIsGiven) {
    const test::ScopedEnv secret("KEVO_API_KEY", "sk-secret");
    SpawnOptions options;
    options.executable = "/usr/bin/env";
    options.stdin_to = StreamTo::null;
    options.stdout_to = StreamTo::pipe;
    options.stderr_to = StreamTo::pipe;
    options.inherit_environment = false;
    options.env = {{"ONLY", "this"}};
    auto child = Process::spawn(options);
    ASSERT_TRUE(child) << child.error().message;
    EXPECT_EQ(child->communicate("", 10).out, "ONLY=this\n");
    // Control: inheriting (the default), the key is there.
    options.inherit_environment = true;
    auto inheriting = Process::spawn(options);
    ASSERT_TRUE(inheriting) << inheriting.error().message;
    EXPECT_NE(inheriting->communicate("", 10).out.find("KEVO_API_KEY=sk-secret"), std::string::npos);
}

TEST(Sandbox, TheNetworkIsAFreshNamespaceWithOnlyLoopback) {
    const SandboxPlan plan(SandboxOptions{true, ""});
    // The namespace's identity, and the devices in it.
    const std::string script = "readlink /proc/self/ns/net; tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d ' '";
    const Captured sandboxed = run_shell(script, &plan);
    if (sandboxed.err.find("kevo sandbox: no network namespace") != std::string::npos)
        GTEST_SKIP() << "this system refuses network namespaces: " << sandboxed.err;
    const Captured plain = run_shell(script, nullptr);
    const auto first_line = [](const std::string& text) { return text.substr(0, text.find('\n')); };
    ASSERT_TRUE(first_line(plain.out).starts_with("net:[")) << plain.out << plain.err;
    EXPECT_NE(first_line(sandboxed.out), first_line(plain.out)) << "the child shares kevo's network namespace";
    EXPECT_EQ(sandboxed.out.substr(sandboxed.out.find('\n') + 1), "lo\n") << sandboxed.err;
}

}  // namespace
}  // namespace kevo
