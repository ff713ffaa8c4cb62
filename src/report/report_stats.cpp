// See report_stats.hpp.
#include "report/report_stats.hpp"

#include <algorithm>

#include "report/run_figures.hpp"

namespace kevo {

namespace {

const char* const kOutcomeOrder[] = {"ok", "incorrect", "compile_error", "rejected", "runtime_error", "timeout", "crash"};
constexpr const char* kNoCandidate = "no candidate";

// The outcome an iteration of the mix is counted under.
std::string mix_outcome(const IterationRecord& it) {
    if (it.status == IterationStatus::from) return kFromKernelOutcome;
    return is_evaluated_proposal(it) ? it.verdict : kNoCandidate;
}

GroupKey key_of(const RunData& d) { return {d.run.task, d.model, d.run.strategy}; }

void add_run(GroupRow& row, const RunData& d, std::vector<std::vector<double>>& curves, std::vector<double>& speedups,
             std::vector<double>& heldout) {
    const RunFigures f = run_figures(d);
    row.run_ids.push_back(d.run.run_id);
    row.tokens += f.tokens;
    row.cost_usd += f.cost_usd;
    for (const auto& [verdict, n] : f.candidates_by_verdict) row.candidates[verdict] += n;
    if (f.heldout_verdict.empty()) ++row.not_gated[run_status_name(d.run.status)];
    if (!f.heldout_verdict.empty()) {
        ++row.gated;
        ++row.heldout_verdicts[f.heldout_verdict];
        if (f.speedup) speedups.push_back(*f.speedup);
        row.speedup_from_search += f.speedup_from_search;
        if (f.heldout_verdict == "ok") {
            ++row.heldout_correct;
            if (f.heldout_speedup) heldout.push_back(*f.heldout_speedup);
        }
    }
    if (curves.size() < f.best_so_far.size()) curves.resize(f.best_so_far.size());
    for (size_t i = 0; i < f.best_so_far.size(); ++i)
        if (f.best_so_far[i]) curves[i].push_back(*f.best_so_far[i]);
}

// Between-group sum of squares over the total, for 0/1 values keyed by group.
std::optional<double> eta_squared(const std::map<std::string, std::vector<double>>& groups) {
    double sum = 0;
    size_t n = 0;
    for (const auto& [_, ys] : groups) {
        for (double y : ys) sum += y;
        n += ys.size();
    }
    if (n == 0) return std::nullopt;
    const double mean = sum / static_cast<double>(n);
    double total = 0, between = 0;
    for (const auto& [_, ys] : groups) {
        double g = 0;
        for (double y : ys) g += y, total += (y - mean) * (y - mean);
        const double gmean = g / static_cast<double>(ys.size());
        between += static_cast<double>(ys.size()) * (gmean - mean) * (gmean - mean);
    }
    if (total <= 0 || groups.size() < 2) return std::nullopt;
    return between / total;
}

}  // namespace

const char* const kFromKernelOutcome = "the --from kernel";

std::optional<double> median(std::vector<double> v) {
    if (v.empty()) return std::nullopt;
    std::sort(v.begin(), v.end());
    const size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

std::vector<GroupRow> group_rows(const ReportData& data) {
    std::map<GroupKey, std::vector<const RunData*>> groups;
    for (const auto& d : data.runs) groups[key_of(d)].push_back(&d);
    std::vector<GroupRow> rows;
    for (const auto& [key, runs] : groups) {
        GroupRow row;
        row.key = key;
        std::vector<std::vector<double>> curves;
        std::vector<double> speedups, heldout;
        for (const auto* d : runs) add_run(row, *d, curves, speedups, heldout);
        row.speedup = median(speedups);
        row.heldout_speedup = median(heldout);
        for (auto& at : curves) row.best_so_far.push_back(median(at));
        rows.push_back(std::move(row));
    }
    return rows;
}

std::string series_name(const GroupKey& key, bool with_strategy) {
    return with_strategy ? key.model + " / " + key.strategy : key.model;
}

bool several_strategies(const std::vector<GroupRow>& rows) {
    for (const auto& r : rows)
        if (r.key.strategy != rows.front().key.strategy) return true;
    return false;
}

VerdictMix verdict_mix(const ReportData& data) {
    int last = 0;
    std::map<std::string, std::map<int, int>> by_outcome;
    for (const auto& d : data.runs)
        for (const auto& it : d.iterations) {
            if (it.iteration < 1) continue;
            ++by_outcome[mix_outcome(it)][it.iteration];
            last = std::max(last, it.iteration);
        }
    VerdictMix mix;
    for (int i = 1; i <= last; ++i) mix.iterations.push_back(i);
    std::vector<std::string> order(std::begin(kOutcomeOrder), std::end(kOutcomeOrder));
    for (const auto& [name, _] : by_outcome)
        if (std::find(order.begin(), order.end(), name) == order.end() && name != kNoCandidate && name != kFromKernelOutcome)
            order.push_back(name);
    order.push_back(kNoCandidate);
    order.push_back(kFromKernelOutcome);
    for (const auto& name : order) {
        const auto found = by_outcome.find(name);
        if (found == by_outcome.end()) continue;
        mix.outcomes.push_back(name);
        std::vector<double> counts;
        for (int i : mix.iterations) counts.push_back(found->second.count(i) ? found->second.at(i) : 0);
        mix.counts.push_back(std::move(counts));
    }
    return mix;
}

RepairStats repair_stats(const ReportData& data) {
    std::vector<double> first, repaired;
    RepairStats s;
    for (const auto& d : data.runs)
        for (const auto& c : correct_candidates(d)) {
            auto& group = c.kind == RepairKind::repaired ? s.repaired : s.first_try;
            auto& speedups = c.kind == RepairKind::repaired ? repaired : first;
            ++group.count;
            if (c.speedup) speedups.push_back(*c.speedup);
        }
    s.first_try.median_speedup = median(first);
    s.repaired.median_speedup = median(repaired);
    return s;
}

VarianceExplained correctness_variance(const ReportData& data) {
    std::map<std::string, std::vector<double>> by_task, by_model;
    VarianceExplained v;
    for (const auto& d : data.runs)
        for (const auto& it : d.iterations) {
            if (!is_evaluated_proposal(it)) continue;
            const double y = it.verdict == "ok" ? 1 : 0;
            by_task[d.run.task].push_back(y);
            by_model[d.model].push_back(y);
            ++v.candidates;
            v.correct += static_cast<int>(y);
        }
    for (const auto& [task, _] : by_task) v.tasks.push_back(task);
    for (const auto& [model, _] : by_model) v.models.push_back(model);
    v.by_task = eta_squared(by_task);
    v.by_model = eta_squared(by_model);
    return v;
}

}  // namespace kevo
