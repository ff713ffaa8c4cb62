// A search strategy: what the proposer is shown (a parent, its history, inspirations from the rest
// of the population), what a candidate must beat to be accepted, when a population drops out, and
// which kernels the gate examines. Strategies: one-plus-one (one incumbent), islands (K
// populations on a ring), map-elites (an archive over measured behaviour). Each is one file here
// that registers itself in the table of registry.hpp.
//
// A strategy's population is derived by one rule, `apply`, from the iteration rows: the loop calls
// it live after each iteration and on --resume for every stored one. What the strategy decided for
// an iteration (its island, its parent, a migration, its archive cell) is in the row's `strategy`
// JSON, so a resumed run stands exactly where the interrupted one stood. `plan` depends only on the
// population and the iteration's number, never on the clock or on what happened since.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "search/proposer.hpp"
#include "search/search_state.hpp"

namespace kevo {

// Everything a strategy is configured with (RunOptions holds the defaults, search/loop.hpp).
struct StrategySettings {
    int history = 4;             // attempts shown to the proposer
    int stagnation_window = 6;   // a population's iterations without improvement before its dropout (0: never)
    uint64_t seed = 0;           // map-elites: the parent draws
    // The strategy's own options (its registry entry declares them: islands' "islands" and
    // "migration_every"), by name, defaults filled in.
    nlohmann::json options = nlohmann::json::object();
};

// What the strategy shows the proposer for one iteration, and records about it.
struct Plan {
    StoredAttempt parent;                   // shown as the incumbent; the candidate's parent in the store
    std::optional<Attempt> previous;        // the population's last evaluated attempt
    std::vector<Attempt> history;           // its short history (empty at a dropout)
    std::vector<Inspiration> inspirations;  // labelled kernels from the rest of the population
    bool dropout = false;                   // the population stopped improving: ask for a different approach
    std::string where;                      // for the progress line: "island 2", "cell large/x4"; empty for one-plus-one
    nlohmann::json record;                  // the decision as the row stores it (IterationRecord::strategy)
};

class Strategy {
public:
    virtual ~Strategy() = default;
    virtual std::string name() const = 0;

    // The plan for proposal `iteration`.
    virtual Plan plan(int iteration) const = 0;
    // The kernel an evaluated candidate must beat to be accepted; nullopt: it is accepted when it
    // is correct (map-elites: its archive cell is empty).
    virtual std::optional<StoredAttempt> rival(const Plan& plan, const EvalResult& candidate) const {
        (void)candidate;
        return plan.parent;
    }
    // What the row records once a kernel is evaluated, beside the plan (map-elites: its cell and
    // descriptors). Also called for the seed and a --from kernel, with an empty `record`.
    virtual void annotate(nlohmann::json& record, const EvalResult& result) const {
        (void)record;
        (void)result;
    }

    // Where an evaluated iteration stands, for its progress line; `record` is the row's strategy
    // JSON once annotated. Default: the plan's `where` (map-elites: the candidate's own cell).
    virtual std::string placed(const Plan& plan, const nlohmann::json& record) const {
        (void)record;
        return plan.where;
    }

    // The one rule: the effect of an iteration's row on the population.
    virtual void apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) = 0;

    // The population's best (what best.<suffix> holds before the gate).
    virtual const StoredAttempt& best() const = 0;
    // What the gate examines, best first, at most `top` kernels (the seed, the last resort, need
    // not be among them).
    virtual std::vector<StoredAttempt> gate_candidates(int top) const = 0;
    // The population for the run summary and the report (islands: each island's best; map-elites:
    // the archive); null for one-plus-one.
    virtual nlohmann::json population() const { return nullptr; }
};

}  // namespace kevo
