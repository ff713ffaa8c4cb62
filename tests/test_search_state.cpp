// The one rule of the run-wide SearchState and of a population's Lineage (the (1+1) strategy's) on
// constructed iteration records: the dropout comes every `window` iterations without an
// improvement, clears the history and restarts the count; replaying the recorded rows (the dropout
// flag included) gives the state the live run had, and without the flag (the old replay) it would not.
#include <gtest/gtest.h>

#include "search/search_state.hpp"
#include "search/strategies/lineage.hpp"

namespace kevo {
namespace {

IterationRecord row(int iteration, bool accepted = false, bool evaluated = true) {
    IterationRecord r;
    r.run_id = "r-test";
    r.iteration = iteration;
    r.candidate_id = 100 + iteration;
    r.status = evaluated ? kevo::IterationStatus::evaluated : kevo::IterationStatus::no_code;
    r.accepted = accepted;
    r.seconds = 0.5;
    r.cost_usd = 0.01;
    return r;
}

std::optional<StoredAttempt> attempt_of(const IterationRecord& r) {
    if (r.status != kevo::IterationStatus::evaluated) return std::nullopt;
    return StoredAttempt{*r.candidate_id, "hash-" + std::to_string(r.iteration), Attempt{r.iteration, "src", {}, {}}};
}

// The run-wide state and one population's lineage, moved on together as the loop moves them.
struct State {
    SearchState run;
    Lineage line;
    State(int history, int window) : line(history, window) {}
    void apply(const IterationRecord& r, const std::optional<StoredAttempt>& e) {
        run.apply(r, e);
        line.apply(r, e);
    }
    bool dropout_due() const { return line.dropout_due(); }
    int since_improvement() const { return line.since_improvement(); }
};

std::vector<int> history_iterations(const State& s) {
    std::vector<int> out;
    for (const auto& a : s.line.history()) out.push_back(a.iteration);
    return out;
}

// Runs `n` iterations live the way the loop does: the dropout flag is set when one is due.
// Iteration 2 improves; 5 has no code; the others are evaluated and rejected.
std::vector<IterationRecord> live_run(State& state, int n, std::vector<int>* dropouts) {
    std::vector<IterationRecord> rows = {row(0, true)};
    state.apply(rows[0], attempt_of(rows[0]));
    for (int it = 1; it <= n; ++it) {
        IterationRecord r = row(it, it == 2, it != 5);
        r.dropout = state.dropout_due();
        if (r.dropout && dropouts) dropouts->push_back(it);
        state.apply(r, attempt_of(r));
        rows.push_back(r);
    }
    return rows;
}

TEST(SearchState, DropoutEveryWindowWithoutImprovement) {
    State state(4, 6);
    std::vector<int> dropouts;
    live_run(state, 16, &dropouts);
    // Improved at 2; 3..8 without improvement: dropout at 9, then at 15.
    EXPECT_EQ(dropouts, (std::vector<int>{9, 15}));
    EXPECT_EQ(state.line.incumbent().attempt.iteration, 2);
    ASSERT_EQ(state.line.incumbents().size(), 2u);
    EXPECT_EQ(state.run.seed().attempt.iteration, 0);
    EXPECT_EQ(history_iterations(state), (std::vector<int>{15, 16}));  // cleared at 15
    EXPECT_EQ(state.since_improvement(), 2);
    EXPECT_EQ(state.run.proposals(), 16);
    EXPECT_EQ(state.run.last_iteration(), 16);
    EXPECT_DOUBLE_EQ(state.run.seconds(), 17 * 0.5);
    EXPECT_TRUE(state.run.seen("hash-16"));
    EXPECT_FALSE(state.run.seen("hash-5")) << "an iteration without code evaluated nothing";
}

TEST(SearchState, ReplayingTheRowsGivesTheLiveState) {
    // Live: 10 iterations, "killed", then the rest; replayed: the same first 10 rows, then live on.
    State live(4, 6);
    std::vector<int> live_dropouts;
    const auto rows = live_run(live, 10, &live_dropouts);
    State resumed(4, 6);
    for (const auto& r : rows) resumed.apply(r, attempt_of(r));
    EXPECT_EQ(resumed.since_improvement(), live.since_improvement());
    EXPECT_EQ(history_iterations(resumed), history_iterations(live));
    EXPECT_EQ(resumed.dropout_due(), live.dropout_due());
    // Without the recorded flag (how rows read before the column existed) the replay would drop
    // out again at once: the reviewer's case, next dropout at 11 instead of 15.
    State unflagged(4, 6);
    for (auto r : rows) {
        r.dropout = false;
        unflagged.apply(r, attempt_of(r));
    }
    EXPECT_EQ(unflagged.since_improvement(), 8);
    EXPECT_TRUE(unflagged.dropout_due());
    EXPECT_FALSE(resumed.dropout_due());
    // The next dropouts come at the same iterations.
    std::vector<int> next_live, next_resumed;
    for (auto [state, out] : {std::pair{&live, &next_live}, std::pair{&resumed, &next_resumed}})
        for (int it = 11; it <= 22; ++it) {
            IterationRecord r = row(it);
            r.dropout = state->dropout_due();
            if (r.dropout) out->push_back(it);
            state->apply(r, attempt_of(r));
        }
    EXPECT_EQ(next_resumed, next_live);
    EXPECT_EQ(next_live, (std::vector<int>{15, 21}));
    EXPECT_EQ(history_iterations(resumed), history_iterations(live));
}

IterationRecord unused_row(int iteration, kevo::IterationStatus status, const std::string& diagnostics,
                           std::optional<int64_t> candidate = std::nullopt) {
    IterationRecord r = row(iteration, false, false);
    r.status = status;
    r.diagnostics = diagnostics;
    r.candidate_id = candidate;
    return r;
}

IterationRecord failed_row(int iteration, kevo::IterationStatus status, const std::string& failure, int http_status,
                           const std::string& diagnostics) {
    IterationRecord r = unused_row(iteration, status, diagnostics);
    r.failure = failure;
    r.http_status = http_status;
    return r;
}

// What the next prompt says about an unused answer, the permanent-failure streak that stops a run
// and the counts of the summary all come from the rows, so a replay stands where the live run stood.
TEST(SearchState, UnusedAnswersFailureStreaksAndCountsFollowTheRows) {
    const std::vector<IterationRecord> rows = {
        row(0, true),
        row(1, true),
        unused_row(2, kevo::IterationStatus::no_code, "no fenced code block"),
        unused_row(3, kevo::IterationStatus::edit_failed, "edit 1 of 1: SEARCH text not found"),
        unused_row(4, kevo::IterationStatus::duplicate, "same as iteration 1", 101),  // iteration 1's candidate id
        // The message differs (a request id), the class and status do not: the same failure.
        failed_row(5, kevo::IterationStatus::permanent_error, "auth", 401, "HTTP 401: bad key (request a1)"),
        failed_row(6, kevo::IterationStatus::permanent_error, "auth", 401, "HTTP 401: bad key (request b2)"),
        // A signal cutting the request is not the proposer's fault: the streaks neither grow nor end.
        failed_row(7, kevo::IterationStatus::proposer_error, "interrupted", 0, "interrupted by SIGTERM"),
        // Another class goes on with the streak of failures, and starts that of alike ones again.
        failed_row(8, kevo::IterationStatus::permanent_error, "not_found", 404, "HTTP 404: no such model"),
        failed_row(9, kevo::IterationStatus::permanent_error, "not_found", 404, "HTTP 404: no such model"),
    };
    std::vector<std::optional<UnusedAnswer>> unused;
    std::vector<int> streaks, alike;
    SearchState live;
    for (const auto& r : rows) {
        live.apply(r, attempt_of(r));
        unused.push_back(live.unused());
        streaks.push_back(live.proposer_failures_in_a_row());
        alike.push_back(live.same_failures_in_a_row());
    }
    EXPECT_EQ(streaks, (std::vector<int>{0, 0, 0, 0, 0, 1, 2, 2, 3, 4}));
    EXPECT_EQ(alike, (std::vector<int>{0, 0, 0, 0, 0, 1, 2, 2, 1, 2}));
    EXPECT_EQ(live.failed_proposals(), 5) << "not counted against --iterations, the interrupted one included";
    EXPECT_FALSE(unused[1].has_value()) << "an evaluated iteration leaves nothing to tell";
    ASSERT_TRUE(unused[2] && unused[3] && unused[4] && unused[9]);
    EXPECT_EQ(unused[2]->kind, UnusedAnswer::Kind::no_code);
    EXPECT_EQ(unused[2]->detail, "no fenced code block");
    EXPECT_EQ(unused[3]->kind, UnusedAnswer::Kind::edit_failed);
    EXPECT_EQ(unused[4]->kind, UnusedAnswer::Kind::duplicate);
    EXPECT_EQ(unused[4]->duplicate_of, 1);
    EXPECT_EQ(unused[9]->kind, UnusedAnswer::Kind::proposer_error);
    EXPECT_EQ(unused[9]->iteration, 9);
    EXPECT_EQ(unused[9]->in_a_row, 8);
    const ProposalCounts& c = live.counts();
    EXPECT_EQ(c.evaluated, 1);
    EXPECT_EQ(c.no_code, 1);
    EXPECT_EQ(c.edit_failed, 1);
    EXPECT_EQ(c.duplicate, 1);
    EXPECT_EQ(c.failed, 5);

    // A failure then a success: the streaks end.
    live.apply(row(10), attempt_of(row(10)));
    EXPECT_EQ(live.proposer_failures_in_a_row(), 0);
    EXPECT_EQ(live.same_failures_in_a_row(), 0);
    EXPECT_FALSE(live.unused().has_value());
    EXPECT_EQ(live.evaluated_at(110), 10);
    EXPECT_EQ(live.evaluated_at(102), -1);
}

}  // namespace
}  // namespace kevo
