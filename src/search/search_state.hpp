// The state a search carries from one iteration to the next, whatever its strategy: the seed, every
// evaluated candidate, what became of the last answer, the counts and the budget spent. The
// population (incumbents, histories, dropouts, islands, archive) is the strategy's
// (search/strategies/strategy.hpp). One rule, `apply`, moves both on by one iteration's record; the
// loop uses it live after each iteration and on --resume for every stored iteration, so a resumed
// run stands exactly where the interrupted one stood.
#pragma once

#include <cassert>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "core/json.hpp"
#include "search/proposer.hpp"
#include "store/records.hpp"

namespace kevo {

// What became of the proposals of a run (the seed and a --from kernel are not proposals).
struct ProposalCounts {
    int evaluated = 0, no_code = 0, edit_failed = 0, duplicate = 0, failed = 0;
};
KEVO_JSON_FIELDS(ProposalCounts, evaluated, no_code, edit_failed, duplicate, failed)

// A candidate that was evaluated, with its identity in the store.
struct StoredAttempt {
    int64_t candidate_id = 0;
    std::string hash;  // content hash of (source, defines)
    Attempt attempt;
};

class SearchState {
public:
    // The effect of one iteration. `evaluated` is the candidate the iteration evaluated (status
    // evaluated or from); absent for no code, failed edits, proposer errors and duplicates.
    void apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated);

    bool seen(const std::string& hash) const { return hashes_.count(hash) > 0; }
    // The iteration that evaluated the candidate `candidate_id` (-1: none did).
    int evaluated_at(int64_t candidate_id) const;
    bool started() const { return last_iteration_ >= 0; }

    // The seed exists once the seed's row is applied (started()).
    const StoredAttempt& seed() const {
        assert(seed_ && "no seed before iteration 0");
        return *seed_;
    }
    // The evaluated candidate `candidate_id` (the seed and a --from kernel included); null if none.
    const StoredAttempt* attempt(int64_t candidate_id) const;
    // The last iteration, when it evaluated nothing (what the next prompt says about it).
    const std::optional<UnusedAnswer>& unused() const { return unused_; }
    // How many iterations in a row, up to the last, evaluated nothing because the proposer failed
    // (whatever the class; a signal or the run's deadline cutting a request neither counts nor
    // breaks the streak). What --max-proposer-failures counts.
    int proposer_failures_in_a_row() const { return failure_streak_; }
    // Of those, how many in a row failed with the same class and HTTP status as the last one
    // ("auth" with 401 three times), compared by class, never by the message's text.
    int same_failures_in_a_row() const { return same_failure_streak_; }
    // Iterations whose proposal failed (the proposer's fault or a signal/deadline cutting it):
    // recorded, but not counted against --iterations (loop.hpp, RunDriver::last_iteration).
    int failed_proposals() const { return counts_.failed; }
    const ProposalCounts& counts() const { return counts_; }
    int proposals() const { return proposals_; }
    int last_iteration() const { return last_iteration_; }  // -1 before the seed
    double cost_usd() const { return cost_usd_; }
    int64_t tokens() const { return tokens_; }             // prompt + completion tokens of the recorded iterations
    double seconds() const { return seconds_; }            // wall time of the recorded iterations

private:
    void note_unused(const IterationRecord& record);    // unused_
    void note_failure(const IterationRecord& record);   // the proposer-failure streaks

    std::optional<StoredAttempt> seed_;
    std::set<std::string> hashes_;
    std::map<int64_t, int> evaluated_at_;          // candidate id -> the iteration that evaluated it
    std::map<int64_t, StoredAttempt> attempts_;  // candidate id -> what was evaluated
    std::optional<UnusedAnswer> unused_;
    int failure_streak_ = 0, same_failure_streak_ = 0;
    std::string streak_failure_;  // the last failure's class and HTTP status ("auth/401")
    ProposalCounts counts_;
    int proposals_ = 0, last_iteration_ = -1;
    double cost_usd_ = 0, seconds_ = 0;
    int64_t tokens_ = 0;
};

}  // namespace kevo
