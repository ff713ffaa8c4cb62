// One population's line of descent: its incumbent and every earlier one, the previous attempt, the
// short history shown to the proposer and the count towards its next optimisation dropout. The
// (1+1) strategy has one; islands have one per island; map-elites one for the whole archive (its
// history and dropouts). `apply` moves it on by one iteration's record, live and on --resume alike.
#pragma once

#include <cassert>
#include <deque>
#include <optional>
#include <vector>

#include "search/search_state.hpp"

namespace kevo {

class Lineage {
public:
    // history_limit: attempts kept for the proposer; stagnation_window: iterations without an
    // improvement before a dropout (0: never).
    Lineage(int history_limit, int stagnation_window);

    // The effect of one of this population's iterations (`record.accepted`: it became the incumbent).
    void apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated);
    // A better kernel from elsewhere (a migrant) becomes the incumbent: a new start, so the count
    // towards the next dropout starts again.
    void adopt(const StoredAttempt& incumbent);

    // Whether this population's next proposal begins with an optimisation dropout.
    bool dropout_due() const { return stagnation_window_ > 0 && since_improvement_ >= stagnation_window_; }
    bool started() const { return !incumbents_.empty(); }
    const StoredAttempt& incumbent() const {
        assert(started() && "no incumbent before the seed");
        return incumbents_.back();
    }
    // Every incumbent, oldest (the seed) first.
    const std::vector<StoredAttempt>& incumbents() const { return incumbents_; }
    const std::optional<Attempt>& previous() const { return previous_; }
    const std::deque<Attempt>& history() const { return history_; }
    int since_improvement() const { return since_improvement_; }

private:
    int history_limit_, stagnation_window_;
    std::vector<StoredAttempt> incumbents_;
    std::optional<Attempt> previous_;
    std::deque<Attempt> history_;
    int since_improvement_ = 0;
};

}  // namespace kevo
