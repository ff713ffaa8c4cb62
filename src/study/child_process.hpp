// A cell's `kevo run` as a child process of the sweep (core/process): in its own process group, so
// that the terminal's Ctrl-C reaches only the sweep (which passes one SIGINT on: a second would end a
// run at once); killed with the sweep however the sweep ends (PR_SET_PDEATHSIG), so a `kill -9` of
// the sweep leaves no run behind; stdin from /dev/null, stdout and stderr to a log file.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "core/expected.hpp"
#include "core/process.hpp"

namespace kevo {

class ChildProcess {
public:
    // Starts `executable` with `args` (argv[1...]), the environment plus `env` (NAME, value).
    static Expected<ChildProcess> spawn(const std::string& executable, const std::vector<std::string>& args,
                                        const std::vector<std::pair<std::string, std::string>>& env,
                                        const std::string& log_path);

    // The exit status once it has ended (128 + N when signal N ended it); nothing while it runs.
    std::optional<int> poll();
    void signal(int sig) const { process_.signal(sig); }
    pid_t pid() const { return process_.pid(); }

private:
    explicit ChildProcess(Process process) : process_(std::move(process)) {}
    Process process_;
};

}  // namespace kevo
