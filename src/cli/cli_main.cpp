// kevo's command line: builds the command tree (one file per subcommand), runs the command and maps
// parse errors to exit status 2 (CLI.md), help to 0. The kevo executable's main() is this; a test
// executable may install its own parts first (eval/evaluator_factory.hpp).
#include <csignal>
#include <cstdio>

#include <algorithm>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cli/cli_main.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/version.hpp"

namespace kevo::cli {

int kevo_main(int argc, char** argv) {
    // A worker that dies while we write to it must not take kevo down with SIGPIPE.
    std::signal(SIGPIPE, SIG_IGN);
    CLI::App app{"kevo: benchmark and optimise scientific GPU kernels (CUDA, OpenCL)", "kevo"};
    app.require_subcommand(1);
    app.set_version_flag("--version", std::string("kevo ") + kevo::kVersion);
    int exit_code = kExitOk;
    setup_devices(app, exit_code);
    setup_tasks(app, exit_code);
    setup_show(app, exit_code);
    setup_calibrate(app, exit_code);
    setup_eval(app, exit_code);
    setup_run(app, exit_code);
    setup_report(app, exit_code);
    setup_bench(app, exit_code);
    setup_delete(app, exit_code);
    setup_sweep(app, exit_code);
    setup_export(app, exit_code);
    setup_knowledge(app, exit_code);
    setup_worker(app, exit_code);
    for (int i = 1; i < argc; ++i)
        if (std::string(argv[i]) == "--json") set_json_mode(true);
    // An unknown command word: name it, and the command it probably meant.
    if (argc > 1 && argv[1][0] != '-') {
        std::vector<std::string> names;  // the listed ones (the internal worker is not)
        bool known = false;
        for (const auto* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
            known = known || sub->get_name() == argv[1];
            if (!sub->get_group().empty()) names.push_back(sub->get_name());
        }
        if (!known) {
            std::string message = fmt::format("unknown command '{}'.", argv[1]);
            if (auto near = nearest_word(argv[1], names)) message += fmt::format(" Did you mean '{}'?", *near);
            message += fmt::format(" The commands are: {}.", fmt::join(names, ", "));
            return fail(message);
        }
    }
    try {
        app.parse(argc, argv);
    } catch (const CLI::CallForHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForAllHelp& e) {
        return app.exit(e);
    } catch (const CLI::CallForVersion& e) {
        return app.exit(e);
    } catch (const CLI::ParseError& e) {
        return fail(fmt::format("{}\nRun 'kevo --help' (or 'kevo COMMAND --help') for usage.", e.what()));
    }
    return exit_code;
}

}  // namespace kevo::cli
