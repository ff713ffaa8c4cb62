// One function per subcommand: each adds itself to the app and stores its exit status in `exit_code`.
#pragma once

#include <CLI/CLI.hpp>

namespace kevo::cli {

void setup_devices(CLI::App& app, int& exit_code);
void setup_tasks(CLI::App& app, int& exit_code);
void setup_show(CLI::App& app, int& exit_code);
void setup_calibrate(CLI::App& app, int& exit_code);
void setup_eval(CLI::App& app, int& exit_code);
void setup_run(CLI::App& app, int& exit_code);
void setup_report(CLI::App& app, int& exit_code);
void setup_worker(CLI::App& app, int& exit_code);
void setup_bench(CLI::App& app, int& exit_code);
void setup_delete(CLI::App& app, int& exit_code);
void setup_sweep(CLI::App& app, int& exit_code);
void setup_export(CLI::App& app, int& exit_code);
void setup_knowledge(CLI::App& app, int& exit_code);

}  // namespace kevo::cli
