// See search_state.hpp.
#include "search/search_state.hpp"

#include <cassert>

namespace kevo {

namespace {

std::optional<UnusedAnswer::Kind> unused_kind(IterationStatus status) {
    switch (status) {
        case IterationStatus::no_code: return UnusedAnswer::Kind::no_code;
        case IterationStatus::edit_failed: return UnusedAnswer::Kind::edit_failed;
        case IterationStatus::duplicate: return UnusedAnswer::Kind::duplicate;
        case IterationStatus::proposer_error:
        case IterationStatus::permanent_error: return UnusedAnswer::Kind::proposer_error;
        case IterationStatus::evaluated:
        case IterationStatus::from: return std::nullopt;
    }
    return std::nullopt;
}

void count(ProposalCounts& counts, IterationStatus status) {
    switch (status) {
        case IterationStatus::evaluated: ++counts.evaluated; break;
        case IterationStatus::no_code: ++counts.no_code; break;
        case IterationStatus::edit_failed: ++counts.edit_failed; break;
        case IterationStatus::duplicate: ++counts.duplicate; break;
        case IterationStatus::proposer_error:
        case IterationStatus::permanent_error: ++counts.failed; break;
        case IterationStatus::from: break;  // the user's starting kernel is not a proposal
    }
}

}  // namespace

int SearchState::evaluated_at(int64_t candidate_id) const {
    const auto it = evaluated_at_.find(candidate_id);
    return it == evaluated_at_.end() ? -1 : it->second;
}

const StoredAttempt* SearchState::attempt(int64_t candidate_id) const {
    const auto it = attempts_.find(candidate_id);
    return it == attempts_.end() ? nullptr : &it->second;
}

void SearchState::apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) {
    assert((record.iteration > 0 || (evaluated && record.accepted)) && "iteration 0 is the accepted seed");
    last_iteration_ = record.iteration;
    cost_usd_ += record.cost_usd;
    tokens_ += record.prompt_tokens + record.completion_tokens;
    seconds_ += record.seconds;
    // The user's own starting kernel (--from) is not a proposal: the proposer never made it.
    const bool proposal = record.iteration > 0 && record.status != IterationStatus::from;
    if (proposal) {
        ++proposals_;
        count(counts_, record.status);
        note_unused(record);
        note_failure(record);
    }
    if (!evaluated) return;
    hashes_.insert(evaluated->hash);
    evaluated_at_.emplace(evaluated->candidate_id, record.iteration);
    attempts_.emplace(evaluated->candidate_id, *evaluated);
    if (record.iteration == 0) seed_ = *evaluated;
}

void SearchState::note_failure(const IterationRecord& record) {
    const bool failed = record.status == IterationStatus::proposer_error || record.status == IterationStatus::permanent_error;
    const bool cut = record.failure == proposer_failure_name(ProposerFailure::interrupted) ||
                     record.failure == proposer_failure_name(ProposerFailure::deadline);
    if (failed && cut) return;  // a signal or the run's deadline: not the proposer's fault
    if (!failed) {
        failure_streak_ = same_failure_streak_ = 0;
        streak_failure_.clear();
        return;
    }
    const std::string key = record.failure + "/" + std::to_string(record.http_status);
    same_failure_streak_ = failure_streak_ > 0 && key == streak_failure_ ? same_failure_streak_ + 1 : 1;
    ++failure_streak_;
    streak_failure_ = key;
}

void SearchState::note_unused(const IterationRecord& record) {
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
