// run_shell: /bin/sh -c through core/process (its own process group, stdin written while stdout
// and stderr are read, output capped, the whole group killed on the deadline or an interrupt).
#include "search/proposers/subprocess.hpp"

#include "core/interrupt.hpp"
#include "core/process.hpp"

namespace kevo {

Expected<SubprocessResult> run_shell(const std::string& command, const std::string& input, double timeout_s,
                                     const std::vector<std::string>& extra_env) {
    SpawnOptions options;
    options.executable = "/bin/sh";
    options.argv0 = "sh";
    options.args = {"-c", command};
    for (const std::string& entry : extra_env) {
        const size_t eq = entry.find('=');
        options.env.emplace_back(entry.substr(0, eq), eq == std::string::npos ? "" : entry.substr(eq + 1));
    }
    options.stdin_to = options.stdout_to = options.stderr_to = StreamTo::pipe;
    options.default_signals = true;  // kevo ignores SIGPIPE; the command gets the ordinary behaviour back
    auto process = Process::spawn(options);
    if (!process) return process.error();
    const Captured captured = process->communicate(input, timeout_s, CaptureLimits{}, [] { return interrupt_requested(); });
    SubprocessResult result;
    result.timed_out = captured.timed_out;
    result.interrupted = captured.stopped;
    result.exit_status = captured.status.exited() && !captured.timed_out ? captured.status.code : -1;
    result.signal = captured.status.signal;
    result.out = captured.out;
    result.err = captured.err;
    result.out_truncated = captured.out_truncated;
    result.seconds = captured.seconds;
    return result;
}

}  // namespace kevo
