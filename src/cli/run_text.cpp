// See run_text.hpp.
#include "cli/run_text.hpp"

#include <fmt/format.h>

#include "eval/fraction_text.hpp"
#include "report/eval_text.hpp"

namespace kevo::cli {
namespace {

std::string num(const std::optional<double>& v, const char* format) {
    return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::string with_spread(const std::optional<double>& speedup, const std::optional<double>& spread) {
    if (!speedup) return "-";
    return spread ? fmt::format("{:.3f}x (spread {:.1f}%)", *speedup, 100 * *spread) : fmt::format("{:.3f}x", *speedup);
}

std::string iteration_name(int iteration) {
    return iteration == 0 ? std::string("the seed") : fmt::format("iteration {}", iteration);
}

std::string outcome_text(const RunSummary& s) {
    switch (s.outcome) {
        case RunOutcome::improved: return fmt::format("improved: {} passed the gate", iteration_name(s.recommended));
        case RunOutcome::no_gain:
            return s.within_noise ? fmt::format("no_gain: {} was within the noise of the seed; the seed is handed out",
                                                iteration_name(s.within_noise->iteration))
                                  : std::string("no_gain: nothing beat the seed");
        case RunOutcome::best_failed_gate:
            return fmt::format("best_failed_gate: the search's best ({}) failed the gate; handed out {}",
                               s.rejected ? iteration_name(s.rejected->iteration) : "-", iteration_name(s.recommended));
        case RunOutcome::interrupted:
            return fmt::format("interrupted: {} after iteration {}, before the gate", s.stop_reason, s.iterations);
    }
    return {};
}

std::string proposals_text(const ProposalCounts& c) {
    return fmt::format("{} evaluated, {} without code, {} failed edits, {} duplicates, {} proposer failures", c.evaluated,
                       c.no_code, c.edit_failed, c.duplicate, c.failed);
}

}  // namespace

std::string interrupted_text(const RunSummary& s, const std::string& db) {
    std::string out = fmt::format("\nrun {} ({}) {} after iteration {}; it is marked interrupted.\n", s.run_id, s.task,
                                  s.stop_reason, s.iterations);
    if (!s.best_path.empty())
        out += fmt::format("  best so far   {} (score {}, the seed's {}), not yet through the held-out gate\n",
                           iteration_name(s.recommended), num(s.best_score, "{:.4f}"), num(s.seed_score, "{:.4f}"));
    if (!s.best_path.empty()) out += fmt::format("  best kernel   {}\n", s.best_path);
    out += fmt::format("  proposals     {}\n", proposals_text(s.proposals));
    return out + fmt::format("  resume with   {}", s.resume ? *s.resume : resume_command(s.run_id, db, {}));
}

std::string summary_text(const RunSummary& s, const std::string& db) {
    std::string out = fmt::format(
        "\nrun {} ({}; stopped: {})\n"
        "  outcome               {}\n"
        "  seed score            {}\n"
        "  best score            {}   ({})\n"
        "  speed-up (in-dist.)   {}   (seed time / best time, side by side)\n"
        "  held-out fraction     {}   (seed: {}; best verdict there: {})\n"
        "  held-out speed-up     {}\n"
        "  proposals             {}\n"
        "  best kernel           {}\n",
        s.run_id, s.task, s.stop_reason, outcome_text(s), num(s.seed_score, "{:.4f}"), num(s.best_score, "{:.4f}"),
        iteration_name(s.recommended), with_spread(s.speedup, s.speedup_spread), fraction_text(s.heldout_fraction),
        fraction_text(s.heldout_seed_fraction), s.heldout_best_verdict,
        with_spread(s.heldout_speedup, s.heldout_speedup_spread), proposals_text(s.proposals), s.best_path);
    if (s.rejected) out += fmt::format("  rejected kernel       {}   ({})\n", s.rejected->path, s.rejected->reason);
    if (s.within_noise)
        out += fmt::format("  within the noise      {}   ({})\n", s.within_noise->path, s.within_noise->detail);
    if (!s.ceilings.source.empty()) out += fmt::format("  {}\n", ceilings_text(s.ceilings));
    return out + fmt::format("  report                kevo report {} --db {}", s.run_id, db);
}

std::string failed_gate_warning(const RunSummary& s) {
    const std::string what = s.rejected ? fmt::format("{} ({}): {}", iteration_name(s.rejected->iteration),
                                                      s.rejected->reason, s.rejected->detail)
                                        : std::string("-");
    return fmt::format("\nWARNING: the search's best kernel FAILED the gate: {}\n"
                       "WARNING: {} is {}'s kernel, which passed; the failing one is kept as {}",
                       what, s.best_path, iteration_name(s.recommended), s.rejected ? s.rejected->path : "-");
}

}  // namespace kevo::cli
