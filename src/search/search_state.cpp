// See search_state.hpp.
#include "search/search_state.hpp"

#include <cassert>

namespace kevo {

SearchState::SearchState(int history_limit, int stagnation_window)
    : history_limit_(history_limit), stagnation_window_(stagnation_window) {}

namespace {

std::optional<UnusedAnswer::Kind> unused_kind(const std::string& status) {
    if (status == kNoCodeStatus) return UnusedAnswer::Kind::no_code;
    if (status == kEditFailedStatus) return UnusedAnswer::Kind::edit_failed;
    if (status == kDuplicateStatus) return UnusedAnswer::Kind::duplicate;
    if (status == kProposerErrorStatus || status == kPermanentErrorStatus) return UnusedAnswer::Kind::proposer_error;
    return std::nullopt;
}

void count(ProposalCounts& counts, const std::string& status) {
    if (status == kEvaluatedStatus) ++counts.evaluated;
    else if (status == kNoCodeStatus) ++counts.no_code;
    else if (status == kEditFailedStatus) ++counts.edit_failed;
    else if (status == kDuplicateStatus) ++counts.duplicate;
    else if (status == kProposerErrorStatus || status == kPermanentErrorStatus) ++counts.failed;
}

}  // namespace

int SearchState::evaluated_at(int64_t candidate_id) const {
    const auto it = evaluated_at_.find(candidate_id);
    return it == evaluated_at_.end() ? -1 : it->second;
}

bool SearchState::dropout_due() const {
    return stagnation_window_ > 0 && since_improvement_ >= stagnation_window_;
}

void SearchState::apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) {
    assert((record.iteration > 0 || (evaluated && record.accepted)) && "iteration 0 is the accepted seed");
    last_iteration_ = record.iteration;
    cost_usd_ += record.cost_usd;
    tokens_ += record.prompt_tokens + record.completion_tokens;
    seconds_ += record.seconds;
    // The user's own starting kernel (--from) is not a proposal: the proposer never made it.
    const bool proposal = record.iteration > 0 && record.status != kFromStatus;
    if (proposal) {
        ++proposals_;
        count(counts_, record.status);
        note_unused(record);
    }
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
    evaluated_at_.emplace(evaluated->candidate_id, record.iteration);
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

void SearchState::note_unused(const IterationRecord& record) {
    const bool permanent = record.status == kPermanentErrorStatus;
    const bool same = permanent_streak_ > 0 && record.diagnostics == permanent_message_;
    permanent_streak_ = !permanent ? 0 : same ? permanent_streak_ + 1 : 1;
    permanent_message_ = permanent ? record.diagnostics : std::string();

    const auto kind = unused_kind(record.status);
    if (!kind) {
        unused_.reset();
        return;
    }
    UnusedAnswer u;
    u.iteration = record.iteration;
    u.kind = *kind;
    u.detail = record.diagnostics;
    if (*kind == UnusedAnswer::Kind::duplicate && record.candidate_id) u.duplicate_of = evaluated_at(*record.candidate_id);
    u.in_a_row = unused_ ? unused_->in_a_row + 1 : 1;
    unused_ = std::move(u);
}

}  // namespace kevo
