// The `cmd` proposer: the prompt goes to a shell command's stdin, its stdout is the answer. A
// command the shell cannot find or run (exit 127 / 126) fails permanently; any other failure may
// pass by the next iteration.
#include "search/proposers/cmd.hpp"

#include <fmt/format.h>

#include "search/prompt.hpp"
#include "search/proposers/common.hpp"
#include "search/proposers/subprocess.hpp"

namespace kevo {
namespace {

// POSIX shells exit 127 for a command not found and 126 for one found but not executable.
constexpr int kShellNotFound = 127, kShellCannotExecute = 126;

class CmdProposer final : public Proposer {
public:
    explicit CmdProposer(CmdOptions options) : options_(std::move(options)) {}

    std::string name() const override { return "cmd"; }

    Proposal propose(const ProposalContext& context) override {
        Proposal proposal;
        proposal.prompt = build_prompt(context);
        const std::vector<std::string> env = {
            "KEVO_TASK=" + (context.spec ? context.spec->name : std::string()),
            fmt::format("KEVO_ITERATION={}", context.iteration),
            std::string("KEVO_LANGUAGE=") + language_suffix(context.language),
        };
        const auto run = run_shell(options_.command, proposal.prompt, options_.timeout_s, env);
        if (!run) {
            proposal.status = Proposal::Status::failed;
            proposal.failure = Proposal::Failure::permanent;
            proposal.note = run.error().message;
            return proposal;
        }
        const SubprocessResult& r = *run;
        const std::string stderr_tail = r.err.empty() ? "" : ": " + tail_one_line(r.err);
        if (r.timed_out) {
            proposal.status = Proposal::Status::failed;
            proposal.failure = Proposal::Failure::transient;
            proposal.answer = r.out;
            proposal.note = fmt::format("timed out after {:g} s (process group killed){}", options_.timeout_s, stderr_tail);
            return proposal;
        }
        if (r.signal != 0) {
            proposal.status = Proposal::Status::failed;
            proposal.failure = Proposal::Failure::transient;
            proposal.answer = r.out;
            proposal.note = fmt::format("command killed by signal {}{}", r.signal, stderr_tail);
            return proposal;
        }
        if (r.exit_status != 0) {
            const bool cannot_run = r.exit_status == kShellNotFound || r.exit_status == kShellCannotExecute;
            proposal.status = Proposal::Status::failed;
            proposal.failure = cannot_run ? Proposal::Failure::permanent : Proposal::Failure::transient;
            proposal.answer = r.out;
            proposal.note = fmt::format("command exited with status {}{}{}", r.exit_status,
                                        cannot_run ? " (the shell cannot find or run it)" : "", stderr_tail);
            return proposal;
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
