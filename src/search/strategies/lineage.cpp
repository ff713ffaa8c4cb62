// See lineage.hpp.
#include "search/strategies/lineage.hpp"

namespace kevo {

Lineage::Lineage(int history_limit, int stagnation_window)
    : history_limit_(history_limit), stagnation_window_(stagnation_window) {}

void Lineage::apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) {
    // The user's own starting kernel (--from) is not a proposal: it is in no history.
    const bool proposal = record.iteration > 0 && record.status != IterationStatus::from;
    // The dropout came before the proposal: the proposer saw no history and was asked for a
    // different approach, and the count towards the next dropout starts again.
    if (record.dropout) {
        history_.clear();
        since_improvement_ = 0;
    }
    if (!evaluated) {
        // A proposal that failed (the proposer could not answer) was no attempt: it brings no
        // dropout nearer, as it counts against no --iterations budget.
        const bool failed = record.status == IterationStatus::proposer_error || record.status == IterationStatus::permanent_error;
        if (!failed) ++since_improvement_;
        return;
    }
    if (record.accepted) {
        incumbents_.push_back(*evaluated);
        since_improvement_ = 0;
    } else {
        ++since_improvement_;
    }
    if (proposal) {
        previous_ = evaluated->attempt;
        history_.push_back(evaluated->attempt);
        while (static_cast<int>(history_.size()) > history_limit_) history_.pop_front();
    }
}

void Lineage::adopt(const StoredAttempt& incumbent) {
    incumbents_.push_back(incumbent);
    since_improvement_ = 0;
}

}  // namespace kevo
