// See search_state.hpp.
#include "search/search_state.hpp"

#include <cassert>

namespace kevo {

SearchState::SearchState(int history_limit, int stagnation_window)
    : history_limit_(history_limit), stagnation_window_(stagnation_window) {}

bool SearchState::dropout_due() const {
    return stagnation_window_ > 0 && since_improvement_ >= stagnation_window_;
}

void SearchState::apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) {
    assert((record.iteration > 0 || (evaluated && record.accepted)) && "iteration 0 is the accepted seed");
    last_iteration_ = record.iteration;
    cost_usd_ += record.cost_usd;
    seconds_ += record.seconds;
    // The user's own starting kernel (--from) is not a proposal: the proposer never made it.
    const bool proposal = record.iteration > 0 && record.status != kFromStatus;
    if (proposal) ++proposals_;
    // The dropout came before the proposal: the proposer saw no history and was asked for a
    // different approach, and the count towards the next dropout starts again.
    if (record.dropout) {
        history_.clear();
        since_improvement_ = 0;
    }
    if (!evaluated) {
        ++since_improvement_;
        return;
    }
    hashes_.insert(evaluated->hash);
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

}  // namespace kevo
