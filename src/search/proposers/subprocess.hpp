// Running a shell command (core/process) with some text on its stdin, collecting stdout and stderr, under a
// deadline: the command gets its own process group, which is killed whole on expiry, on SIGINT or
// SIGTERM (noticed within a tenth of a second), and after the command exits, so nothing it started in
// the background outlives it.
#pragma once

#include <string>
#include <vector>

#include "core/expected.hpp"

namespace kevo {

struct SubprocessResult {
    bool timed_out = false;
    bool interrupted = false;  // SIGINT/SIGTERM arrived (core/interrupt): the group was killed
    int exit_status = -1;   // when it exited normally
    int signal = 0;         // when a signal ended it (SIGKILL after a timeout included)
    std::string out, err;
    bool out_truncated = false;  // stdout passed the size cap; the rest was discarded
    double seconds = 0;
};

// `extra_env` holds "NAME=value" entries added to (and overriding) the inherited environment.
// Errors are environment faults only (no pipe, no /bin/sh); what the command does is data.
Expected<SubprocessResult> run_shell(const std::string& command, const std::string& input, double timeout_s,
                                     const std::vector<std::string>& extra_env = {});

}  // namespace kevo
