// The (1+1) strategy: one incumbent, shown with the previous attempt and a short history; a
// candidate replaces it when its gain exceeds the noise (promotion.hpp); a dropout after
// --stagnation iterations without improvement; the gate walks back from the newest incumbent.
#include <algorithm>

#include "search/strategies/lineage.hpp"
#include "search/strategies/registry.hpp"

namespace kevo {
namespace {

class OnePlusOne final : public Strategy {
public:
    explicit OnePlusOne(const StrategySettings& s) : line_(s.history, s.stagnation_window) {}

    std::string name() const override { return "one-plus-one"; }

    Plan plan(int) const override {
        Plan p;
        p.parent = line_.incumbent();
        p.previous = line_.previous();
        // Optimisation dropout: the history withheld, a different approach asked for; the incumbent stays.
        p.dropout = line_.dropout_due();
        if (!p.dropout) p.history.assign(line_.history().begin(), line_.history().end());
        p.record = {{"parent", p.parent.attempt.iteration}};
        return p;
    }

    void apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) override {
        line_.apply(record, evaluated);
    }

    const StoredAttempt& best() const override { return line_.incumbent(); }

    std::vector<StoredAttempt> gate_candidates(int top) const override {
        const auto& all = line_.incumbents();
        const size_t n = std::min(all.size(), static_cast<size_t>(std::max(0, top)));
        return {all.rbegin(), all.rbegin() + static_cast<long>(n)};
    }

private:
    Lineage line_;
};

const bool registered = register_strategy(
    {"one-plus-one", "one incumbent; a candidate replaces it when its gain exceeds the noise", 0,
     [](const StrategySettings& settings) -> std::unique_ptr<Strategy> { return std::make_unique<OnePlusOne>(settings); }});

}  // namespace

}  // namespace kevo
