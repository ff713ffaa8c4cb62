// The `cmd` proposer: any program (a command-line coding agent, a script) that reads the prompt on
// stdin and writes its answer on stdout, run under a deadline in its own process group.
#pragma once

#include <memory>
#include <string>

#include "search/proposer.hpp"

namespace kevo {

struct CmdOptions {
    std::string command;    // run as /bin/sh -c command
    double timeout_s = 600;
};

// The program also finds KEVO_TASK, KEVO_ITERATION and KEVO_LANGUAGE ("cu" or "cl") in its
// environment.
std::unique_ptr<Proposer> make_cmd_proposer(CmdOptions options);

}  // namespace kevo
