// `kevo show TASK`: the seed source in the backend's language, or the brief a proposer reads.
#include <fmt/format.h>

#include "backend/registry.hpp"
#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "task/registry.hpp"

namespace kevo::cli {

namespace {

struct ShowOptions {
    std::string task;
    std::string backend = "auto";
    std::string language;  // empty: the backend's default
    bool seed = false, brief = false, best = false;
};

int run(const ShowOptions& o) {
    auto task = make_task(o.task);
    if (!task) return fail(task.error().message);
    if (int(o.seed) + int(o.brief) + int(o.best) > 1) return fail("choose one of --seed, --brief, --best");
    if (o.brief) {
        say(false, std::string(task_file(o.task, "brief.md")));
        return kExitOk;
    }
    Language language;
    if (!o.language.empty()) {
        language = language_named(o.language);
        if (!language) return fail(fmt::format("--language {}: not a kernel language ({})", o.language, language_choices()));
    } else {
        auto backend = resolve_backend_name(o.backend);
        if (!backend) return fail(backend.error().message);
        language = make_backend(*backend)->language();
    }
    const char* suffix = language_suffix(language);
    const std::string file = fmt::format("{}.{}", o.best ? "best" : "seed", suffix);
    const auto text = task_file(o.task, file);
    if (text.empty()) return fail(fmt::format("task {} ships no {}", o.task, file));
    say(false, std::string(text));
    return kExitOk;
}

}  // namespace

void setup_show(CLI::App& app, int& exit_code) {
    auto* cmd = app.add_subcommand("show", "print a task's seed kernel (default) or its brief");
    auto o = std::make_shared<ShowOptions>();
    cmd->add_option("TASK", o->task, "task name (see `kevo tasks`)")->required();
    cmd->add_option("--backend", o->backend, "language of the source: cuda (.cu), opencl (.cl) or auto")
        ->check(CLI::IsMember(backend_choices()));
    cmd->add_option("--language", o->language, "a kernel language by name (" + language_choices() + "); overrides --backend");
    cmd->add_flag("--seed", o->seed, "the naive seed kernel (default)");
    cmd->add_flag("--brief", o->brief, "the brief a proposer reads");
    cmd->add_flag("--best", o->best, "the best-known kernel, where the task ships one");
    cmd->callback([&exit_code, o] { exit_code = run(*o); });
}

}  // namespace kevo::cli
