// Confinement for a child process that runs code kevo did not write (Triton's compiler on a
// candidate): no network (a fresh network namespace) and no writes outside one folder (Landlock).
// The plan is made in the parent, where allocating is allowed; the child applies it between fork and
// exec with system calls only. A layer the kernel does not offer is skipped and named, so that the
// caller can say which protections were in force.
#pragma once

#include <string>
#include <vector>

namespace kevo {

struct SandboxOptions {
    bool isolate_network = false;
    std::string writable_only_beneath;  // empty: writes are not restricted
};

class SandboxPlan {
public:
    explicit SandboxPlan(const SandboxOptions& options);
    ~SandboxPlan();
    SandboxPlan(const SandboxPlan&) = delete;
    SandboxPlan& operator=(const SandboxPlan&) = delete;

    // In the child, after fork: async-signal-safe. A layer that fails there is reported on fd 2 as
    // one line starting "kevo sandbox:" and the child goes on without it.
    void enter() const noexcept;

    // The layers that could not be prepared ("Landlock: not supported by this kernel").
    const std::vector<std::string>& unavailable() const { return unavailable_; }

private:
    bool isolate_network_ = false;
    int ruleset_fd_ = -1;
    std::vector<std::string> unavailable_;
};

}  // namespace kevo
