// The islands strategy: K populations, each with its own incumbent, history and dropout, proposed
// for in turn (proposal p goes to island (p-1) mod K). Before every M-th proposal after the first
// the best of each island migrates to the next along the ring, where it becomes the incumbent when
// it scores higher. The proposer sees its island's incumbent and history, and the other islands'
// bests as labelled inspirations. The seed and a --from kernel start every island.
//
// The row of each proposal records {"island", "parent"} and, before the proposal that followed a
// migration, "migrations": [{"from", "to", "iteration", "candidate_id"}]; `apply` performs what the
// row says, so a resumed run migrates exactly as the live one did.
#include <algorithm>
#include <cassert>

#include <fmt/format.h>

#include "search/strategies/lineage.hpp"
#include "search/strategies/registry.hpp"

namespace kevo {
namespace {

constexpr int kMaxInspirations = 3;

struct Migration {
    int from = 0, to = 0;
    const StoredAttempt* migrant = nullptr;
};

// The defaults of its options (declared with its registration, below).
constexpr int kIslands = 4;
constexpr int kMigrationEvery = 5;

double score_of(const StoredAttempt& a) { return a.attempt.result.score.value_or(0); }

class Islands final : public Strategy {
public:
    explicit Islands(const StrategySettings& s)
        : islands_(std::max(1, s.options.value("islands", kIslands)), Lineage(s.history, s.stagnation_window)),
          every_(s.options.value("migration_every", kMigrationEvery)) {}

    std::string name() const override { return "islands"; }

    Plan plan(int) const override {
        const int island = proposals_ % count();
        const auto migrations = due_migrations();
        Plan p;
        const Lineage& line = islands_[island];
        const StoredAttempt* arriving = nullptr;
        for (const auto& m : migrations)
            if (m.to == island) arriving = m.migrant;
        p.parent = arriving ? *arriving : line.incumbent();
        p.previous = line.previous();
        p.dropout = !arriving && line.dropout_due();  // a migrant is a new start (Lineage::adopt)
        if (!p.dropout) p.history.assign(line.history().begin(), line.history().end());
        p.inspirations = inspirations(island, p.parent, migrations);
        p.where = fmt::format("island {}", island);
        p.record = {{"island", island}, {"parent", p.parent.attempt.iteration}};
        if (!migrations.empty()) {
            auto& list = p.record["migrations"] = nlohmann::json::array();
            for (const auto& m : migrations)
                list.push_back({{"from", m.from}, {"to", m.to}, {"iteration", m.migrant->attempt.iteration},
                                {"candidate_id", m.migrant->candidate_id}});
        }
        return p;
    }

    void apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) override {
        const bool proposal = record.iteration > 0 && record.status != IterationStatus::from;
        if (!proposal) {
            // The seed and a --from kernel: the starting point of every island.
            for (auto& line : islands_) line.apply(record, evaluated);
            return;
        }
        const nlohmann::json& s = record.strategy;
        if (s.contains("migrations")) migrate(s["migrations"]);
        const int island = s.value("island", proposals_ % count());
        assert(island >= 0 && island < count() && "the row names one of the islands");
        islands_[island].apply(record, evaluated);
        ++proposals_;
    }

    const StoredAttempt& best() const override { return *ranked().front(); }

    std::vector<StoredAttempt> gate_candidates(int top) const override {
        std::vector<StoredAttempt> out;
        for (const StoredAttempt* a : ranked())
            if (static_cast<int>(out.size()) < top) out.push_back(*a);
        return out;
    }

    nlohmann::json population() const override {
        nlohmann::json list = nlohmann::json::array();
        for (int i = 0; i < count(); ++i) {
            const Lineage& line = islands_[i];
            const StoredAttempt& best = line.incumbent();
            list.push_back({{"island", i}, {"best_iteration", best.attempt.iteration},
                            {"best_candidate_id", best.candidate_id}, {"best_score", best.attempt.result.score},
                            {"incumbents", line.incumbents().size()}, {"since_improvement", line.since_improvement()}});
        }
        return {{"strategy", name()}, {"migration_every", every_}, {"islands", list}};
    }

private:
    std::vector<Lineage> islands_;
    int every_;
    int proposals_ = 0;  // proposals applied so far

    int count() const { return static_cast<int>(islands_.size()); }

    // Before proposal number proposals_ + 1: every M-th after the first, each island's best to the
    // next along the ring, where it scores higher than the incumbent. All from the bests before.
    std::vector<Migration> due_migrations() const {
        std::vector<Migration> out;
        if (every_ <= 0 || count() < 2 || proposals_ == 0 || proposals_ % every_ != 0) return out;
        for (int from = 0; from < count(); ++from) {
            const int to = (from + 1) % count();
            const StoredAttempt &migrant = islands_[from].incumbent(), &resident = islands_[to].incumbent();
            if (migrant.candidate_id != resident.candidate_id && score_of(migrant) > score_of(resident))
                out.push_back({from, to, &migrant});
        }
        return out;
    }

    void migrate(const nlohmann::json& recorded) {
        // The migrants are the bests before any of them moved.
        std::vector<std::pair<int, StoredAttempt>> arrivals;
        for (const auto& m : recorded) {
            const StoredAttempt& migrant = islands_.at(m.at("from").get<int>()).incumbent();
            assert(migrant.candidate_id == m.at("candidate_id").get<int64_t>() && "the migrant the row names");
            arrivals.emplace_back(m.at("to").get<int>(), migrant);
        }
        for (const auto& [to, migrant] : arrivals) islands_.at(to).adopt(migrant);
    }

    // The other islands' bests, the nearest along the ring first, each kernel once.
    std::vector<Inspiration> inspirations(int island, const StoredAttempt& parent,
                                          const std::vector<Migration>& migrations) const {
        std::vector<Inspiration> out;
        std::vector<int64_t> shown = {parent.candidate_id};
        for (int step = 1; step < count() && static_cast<int>(out.size()) < kMaxInspirations; ++step) {
            const int other = (island + step) % count();
            const StoredAttempt* best = &islands_[other].incumbent();
            for (const auto& m : migrations)
                if (m.to == other) best = m.migrant;
            if (std::count(shown.begin(), shown.end(), best->candidate_id)) continue;
            shown.push_back(best->candidate_id);
            out.push_back({fmt::format("island {}'s best", other), best->attempt});
        }
        return out;
    }

    // The islands' incumbents, best first (ties: the lower island), each kernel once.
    std::vector<const StoredAttempt*> ranked() const {
        std::vector<const StoredAttempt*> out;
        for (const auto& line : islands_) {
            const StoredAttempt* a = &line.incumbent();
            if (std::none_of(out.begin(), out.end(), [&](const StoredAttempt* b) { return b->candidate_id == a->candidate_id; }))
                out.push_back(a);
        }
        std::stable_sort(out.begin(), out.end(), [](const StoredAttempt* a, const StoredAttempt* b) { return score_of(*a) > score_of(*b); });
        return out;
    }
};

const bool registered = register_strategy(
    {"islands", "--islands K populations, each with its own incumbent and dropout; the best migrates along a ring "
                "every --migration-every proposals", 1,
     [](const StrategySettings& settings) -> std::unique_ptr<Strategy> { return std::make_unique<Islands>(settings); },
     {{.name = "islands", .flag = "--islands", .type = OptionType::integer, .fallback = kIslands, .lo = 1, .hi = 64,
       .help = "populations of the islands strategy", .study = StudyPlace::run_table},
      {.name = "migration_every", .flag = "--migration-every", .type = OptionType::integer, .fallback = kMigrationEvery,
       .lo = 0, .hi = 100000,
       .help = "islands: proposals between migrations of each island's best to the next along the ring (0: never)",
       .study = StudyPlace::run_table}}});

}  // namespace

}  // namespace kevo
