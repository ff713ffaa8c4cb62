// See child_process.hpp.
#include "study/child_process.hpp"

namespace kevo {

Expected<ChildProcess> ChildProcess::spawn(const std::string& executable, const std::vector<std::string>& args,
                                           const std::vector<std::pair<std::string, std::string>>& env,
                                           const std::string& log_path) {
    SpawnOptions options;
    options.executable = executable;
    options.args = args;
    options.env = env;
    options.stdin_to = StreamTo::null;
    options.stdout_to = options.stderr_to = StreamTo::log_file;
    options.log_path = log_path;
    options.die_with_parent = true;
    auto process = Process::spawn(options);
    if (!process) return process.error();
    return ChildProcess(std::move(*process));
}

std::optional<int> ChildProcess::poll() {
    if (auto status = process_.poll()) return status->shell_code();
    return std::nullopt;
}

}  // namespace kevo
