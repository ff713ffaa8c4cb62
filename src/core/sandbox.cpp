// See sandbox.hpp. Landlock through its raw system calls (glibc has no wrappers); the rights
// handled are every kind of write, so a rule for the folder gives them back beneath it only.
#include "core/sandbox.hpp"

#include <fcntl.h>
#include <linux/landlock.h>
#include <sched.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace kevo {

namespace {

constexpr __u64 kWriteRights = LANDLOCK_ACCESS_FS_WRITE_FILE | LANDLOCK_ACCESS_FS_REMOVE_DIR |
                               LANDLOCK_ACCESS_FS_REMOVE_FILE | LANDLOCK_ACCESS_FS_MAKE_CHAR |
                               LANDLOCK_ACCESS_FS_MAKE_DIR | LANDLOCK_ACCESS_FS_MAKE_REG |
                               LANDLOCK_ACCESS_FS_MAKE_SOCK | LANDLOCK_ACCESS_FS_MAKE_FIFO |
                               LANDLOCK_ACCESS_FS_MAKE_BLOCK | LANDLOCK_ACCESS_FS_MAKE_SYM;

void say(const char* text) noexcept {
    [[maybe_unused]] const ssize_t n = ::write(2, text, std::strlen(text));
}

// Rights of later Landlock ABIs, defined here where the headers predate them.
#ifndef LANDLOCK_ACCESS_FS_TRUNCATE
#define LANDLOCK_ACCESS_FS_TRUNCATE (1ULL << 14)
#endif

// Every write right this kernel's Landlock knows. REFER (ABI 2) must be handled and granted in the
// folder: where it is not handled, Landlock refuses every rename into another directory (EXDEV),
// which the tools in the folder do for their caches.
__u64 write_rights_of_this_kernel() {
    const long abi = ::syscall(SYS_landlock_create_ruleset, nullptr, 0, LANDLOCK_CREATE_RULESET_VERSION);
    __u64 rights = kWriteRights;
    if (abi >= 2) rights |= LANDLOCK_ACCESS_FS_REFER;
    if (abi >= 3) rights |= LANDLOCK_ACCESS_FS_TRUNCATE;
    return rights;
}

// Allows `rights` beneath `path` in the ruleset; false (errno set) when it cannot.
bool allow_beneath(int ruleset, const char* path, __u64 rights) {
    const int dir = ::open(path, O_PATH | O_CLOEXEC);
    if (dir < 0) return false;
    landlock_path_beneath_attr beneath{};
    beneath.allowed_access = rights;
    beneath.parent_fd = dir;
    const long added = ::syscall(SYS_landlock_add_rule, ruleset, LANDLOCK_RULE_PATH_BENEATH, &beneath, 0);
    const int e = errno;
    ::close(dir);
    errno = e;
    return added == 0;
}

}  // namespace

SandboxPlan::SandboxPlan(const SandboxOptions& options) : isolate_network_(options.isolate_network) {
    if (options.writable_only_beneath.empty()) return;
    const __u64 rights = write_rights_of_this_kernel();
    landlock_ruleset_attr attr{};
    attr.handled_access_fs = rights;
    const long fd = ::syscall(SYS_landlock_create_ruleset, &attr, sizeof attr, 0);
    if (fd < 0) {
        unavailable_.push_back(fmt::format("Landlock (writes outside {} are not blocked): {}", options.writable_only_beneath,
                                           std::strerror(errno)));
        return;
    }
    ruleset_fd_ = static_cast<int>(fd);
    // /dev/null is where tools send what they discard; writing there reaches no file.
    const __u64 file_rights = LANDLOCK_ACCESS_FS_WRITE_FILE | (rights & LANDLOCK_ACCESS_FS_TRUNCATE);
    if (!allow_beneath(ruleset_fd_, options.writable_only_beneath.c_str(), rights) ||
        !allow_beneath(ruleset_fd_, "/dev/null", file_rights)) {
        unavailable_.push_back(fmt::format("Landlock rule for {}: {}", options.writable_only_beneath, std::strerror(errno)));
        ::close(ruleset_fd_);
        ruleset_fd_ = -1;
    }
}

SandboxPlan::~SandboxPlan() {
    if (ruleset_fd_ >= 0) ::close(ruleset_fd_);
}

void SandboxPlan::enter() const noexcept {
    if (isolate_network_) {
        // A user namespace lets an unprivileged process make the network namespace; as root the
        // network namespace alone does.
        if (::unshare(CLONE_NEWNET) != 0 && ::unshare(CLONE_NEWUSER | CLONE_NEWNET) != 0)
            say("kevo sandbox: no network namespace (unshare refused); the network is reachable\n");
    }
    if (ruleset_fd_ < 0) return;
    if (::prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 || ::syscall(SYS_landlock_restrict_self, ruleset_fd_, 0) != 0)
        say("kevo sandbox: Landlock could not be applied; writes are not restricted\n");
}

}  // namespace kevo
