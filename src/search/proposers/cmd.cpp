// The `cmd` proposer: the prompt goes to a shell command's stdin, its stdout is the answer. A
// command the shell cannot find or run (exit 127 / 126) fails permanently; any other failure may
// pass by the next iteration.
#include "search/proposers/cmd.hpp"
#include "search/proposers/registry.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "core/interrupt.hpp"

#include "search/prompt.hpp"
#include "search/proposers/common.hpp"
#include "search/proposers/failure_class.hpp"
#include "search/proposers/subprocess.hpp"

namespace kevo {
namespace {

// POSIX shells exit 127 for a command not found and 126 for one found but not executable.
constexpr int kShellNotFound = 127, kShellCannotExecute = 126;

Proposal failed(Proposal p, ProposerFailure why, const std::string& note) {
    p.status = Proposal::Status::failed;
    p.failure_class = why;
    p.failure = severity(why);
    p.note = one_line(note, 400);
    p.detail = note;
    return p;
}

class CmdProposer final : public Proposer {
public:
    explicit CmdProposer(CmdOptions options) : options_(std::move(options)) {}

    std::string name() const override { return "cmd"; }

    Proposal propose(const ProposalContext& context) override {
        Proposal proposal;
        BuiltPrompt prompt = compose_prompt(context);
        proposal.prompt = std::move(prompt.text);
        proposal.knowledge = std::move(prompt.notes);
        const std::vector<std::string> env = {
            "KEVO_TASK=" + (context.spec ? context.spec->name : std::string()),
            fmt::format("KEVO_ITERATION={}", context.iteration),
            std::string("KEVO_LANGUAGE=") + language_suffix(context.language),
        };
        // The run's deadline cuts the command too.
        double timeout_s = options_.timeout_s;
        bool capped = false;
        if (context.deadline) {
            const double left = std::chrono::duration<double>(*context.deadline - std::chrono::steady_clock::now()).count();
            capped = left < timeout_s;
            timeout_s = std::max(0.001, std::min(timeout_s, left));
        }
        const auto run = run_shell(options_.command, proposal.prompt, timeout_s, env);
        if (!run) return failed(std::move(proposal), ProposerFailure::command_missing, run.error().message);
        const SubprocessResult& r = *run;
        proposal.answer = r.out;
        const std::string stderr_tail = r.err.empty() ? "" : ": " + tail_one_line(r.err);
        if (r.interrupted)
            return failed(std::move(proposal), ProposerFailure::interrupted,
                          std::string("interrupted by ") + interrupt_signal_name() + " (process group killed)");
        if (r.timed_out && capped)
            return failed(std::move(proposal), ProposerFailure::deadline,
                          "the run's deadline came (process group killed)" + stderr_tail);
        if (r.timed_out)
            return failed(std::move(proposal), ProposerFailure::timeout,
                          fmt::format("timed out after {:g} s (process group killed){}", options_.timeout_s, stderr_tail));
        if (r.signal != 0)
            return failed(std::move(proposal), ProposerFailure::command_failed,
                          fmt::format("command killed by signal {}{}", r.signal, stderr_tail));
        if (r.exit_status != 0) {
            const bool cannot_run = r.exit_status == kShellNotFound || r.exit_status == kShellCannotExecute;
            return failed(std::move(proposal), cannot_run ? ProposerFailure::command_missing : ProposerFailure::command_failed,
                          fmt::format("command exited with status {}{}{}", r.exit_status,
                                      cannot_run ? " (the shell cannot find or run it)" : "", stderr_tail));
        }
        if (r.out_truncated) proposal.note = "stdout cut at 32 MiB";
        fill_from_answer(proposal, r.out, context);
        return proposal;
    }

private:
    CmdOptions options_;
};

}  // namespace

std::unique_ptr<Proposer> make_cmd_proposer(CmdOptions options) {
    return std::make_unique<CmdProposer>(std::move(options));
}

}  // namespace kevo

// The proposer's entry in the registry (search/proposers/registry.hpp): its options and its factory.
namespace kevo {
namespace {

const bool registered = register_proposer(
    {"cmd", "a program that reads the prompt on stdin and answers on stdout (--command)", 2,
     {{.name = "command", .flag = "--command", .type = OptionType::text, .fallback = "",
       .help = "program that reads the prompt on stdin and answers on stdout (cmd)", .resume = ResumeRule::reconnects,
       .study = StudyPlace::model_table, .required = "\"PROGRAM ARGS\""},
      {.name = "command_timeout", .flag = "--command-timeout", .type = OptionType::number,
       .fallback = CmdOptions{}.timeout_s, .lo = 1, .hi = 86400, .help = "seconds the command may take per proposal (cmd)",
       .resume = ResumeRule::reconnects, .study = StudyPlace::model_table}},
     [](const ProposerContext& c) -> Expected<std::unique_ptr<Proposer>> {
         const std::string command = c.values.value("command", std::string());
         if (command.empty())
             return make_error("--proposer cmd needs --command \"PROGRAM ARGS\" (prompt on stdin, answer on stdout)");
         return make_cmd_proposer(CmdOptions{command, c.values.value("command_timeout", CmdOptions{}.timeout_s)});
     },
     false, nullptr, true});

}  // namespace
}  // namespace kevo
