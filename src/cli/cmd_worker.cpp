// `kevo worker`: the evaluation worker process (internal; started by the evaluator).
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "eval/worker.hpp"

namespace kevo::cli {

void setup_worker(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("worker", "internal: the isolated evaluation process")->group("");
    auto backend = std::make_shared<std::string>("opencl");
    auto device = std::make_shared<int>(0);
    auto offline = std::make_shared<std::string>();
    cmd->add_option("--backend", *backend);
    cmd->add_option("--device", *device);
    cmd->add_option("--offline", *offline, "compile-only worker for this architecture (no device)");
    cmd->callback([&exit_code, backend, device, offline] {
        exit_code = run_worker(*backend, *device, 3, 4, *offline);
    });
}

}  // namespace kevo::cli
