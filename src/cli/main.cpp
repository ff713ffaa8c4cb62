// kevo's entry point: builds the command tree (one file per subcommand) and maps parse errors to
// exit status 2 (CLI.md), help to 0.
#include <csignal>
#include <cstdio>

#include <CLI/CLI.hpp>

#include "cli/commands.hpp"
#include "cli/common.hpp"

int main(int argc, char** argv) {
    // A worker that dies while we write to it must not take kevo down with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    using namespace kevo::cli;
    CLI::App app{"kevo: benchmark and optimise scientific GPU kernels (CUDA, OpenCL)", "kevo"};
    app.require_subcommand(1);
    app.set_version_flag("--version", "kevo 0.1.0");
    int exit_code = kExitOk;
    setup_devices(app, exit_code);
    setup_tasks(app, exit_code);
    setup_show(app, exit_code);
    setup_calibrate(app, exit_code);
    setup_eval(app, exit_code);
    setup_run(app, exit_code);
    setup_report(app, exit_code);
    setup_bench(app, exit_code);
    setup_worker(app, exit_code);
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        std::fprintf(stderr, "kevo: %s\nRun 'kevo --help' (or 'kevo COMMAND --help') for usage.\n", e.what());
        return kExitUsage;
    }
    return exit_code;
}
