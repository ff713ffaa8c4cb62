// The numbers the study report shows, computed from the stored runs: one row per (task, model,
// strategy) with its seeds aggregated (medians of the speed-ups, totals of the counts), the
// best-so-far curves, the verdict mix by iteration, the repair analysis and how much of the
// candidates' correctness the task and the model explain.
#pragma once

#include <compare>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "report/report_data.hpp"

namespace kevo {

struct GroupKey {
    std::string task, model, strategy;
    auto operator<=>(const GroupKey&) const = default;
};

struct GroupRow {
    GroupKey key;
    std::vector<std::string> run_ids;
    // Medians over the runs: the search's best, seed time / its time, in distribution (runs through
    // the gate) and at the held-out size (runs whose best was correct there).
    std::optional<double> speedup, heldout_speedup;
    int speedup_from_search = 0;                 // runs whose in-distribution figure is the search's (RunFigures)
    int heldout_correct = 0, gated = 0;          // runs whose best was correct held out, of those through the gate
    std::map<std::string, int> heldout_verdicts;  // the best's held-out verdict, counted over the runs
    std::map<std::string, int> not_gated;         // runs the gate never judged (interrupted, failed, running), by status
    std::map<std::string, int> candidates;        // evaluated proposals by verdict, summed over the runs
    std::vector<std::optional<double>> best_so_far;  // per iteration: the median incumbent score over the runs
    int tokens = 0;
    double cost_usd = 0;
};

// By key; each group's runs in the order of `data.runs`.
std::vector<GroupRow> group_rows(const ReportData& data);

// How the report names a group's line or point: the model, and the strategy when several are in the report.
std::string series_name(const GroupKey& key, bool with_strategy);
bool several_strategies(const std::vector<GroupRow>& rows);

// Per iteration (1..last) the count of proposals by outcome: their verdict, or "no candidate"
// when nothing was evaluated (no code, failed edits, duplicates, proposer errors); iteration 1 of
// a --from run holds the user's kernel, no proposal, counted as kFromKernelOutcome so that its bar
// is not blank.
extern const char* const kFromKernelOutcome;
struct VerdictMix {
    std::vector<int> iterations;
    std::vector<std::string> outcomes;           // in a fixed order, only those that occur
    std::vector<std::vector<double>> counts;     // [outcome][iteration index]
};
VerdictMix verdict_mix(const ReportData& data);

struct RepairGroup {
    int count = 0;
    std::optional<double> median_speedup;  // over the seed, in distribution
};
struct RepairStats {
    RepairGroup first_try, repaired;
};
RepairStats repair_stats(const ReportData& data);

// Eta squared of the evaluated proposals' correctness (1 correct, 0 not) by a grouping: the
// between-group sum of squares over the total; absent when there is nothing evaluated, when the
// total is zero (all alike), or when the grouping has one group only (one task, one model: its
// share would read 0, which says nothing). The counts say which it was.
struct VarianceExplained {
    int candidates = 0, correct = 0;
    std::vector<std::string> tasks, models;  // those with evaluated proposals, sorted
    std::optional<double> by_task, by_model;
};
VarianceExplained correctness_variance(const ReportData& data);

std::optional<double> median(std::vector<double> values);

}  // namespace kevo
