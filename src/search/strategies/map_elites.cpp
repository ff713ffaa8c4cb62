// The map-elites strategy: an archive keeping the best kernel of each cell of a grid over two
// behaviours the evaluation measured (not guessed from the source):
// - size profile: how the kernel's fraction at the largest in-distribution size (by work) compares
//   with that at the smallest, relative to the seed's: log2 of (its large/small) over (the seed's),
//   binned "small" (relatively strongest at small working sets, below -kSizeBand), "even", "large";
// - work per thread: the cells one thread covers (the product of `per_thread` the evaluation
//   reports for the launch in force), binned x1, x2, x4, x8+. Both backends report it; registers
//   are not (OpenCL has no query for them), so the archive does not use them.
// Each proposal's parent is the elite of a filled cell drawn with a novelty bias (weight
// 1 / (1 + times the cell was drawn)) from (seed, iteration); a candidate is accepted when its own
// cell is empty or it beats that cell's elite. Other cells' elites are shown as inspirations.
//
// Rows record {"parent", "parent_cell"} for proposals and, for every correct kernel,
// {"cell", "descriptors"}; `apply` places and counts what the rows say.
#include <algorithm>
#include <cmath>
#include <map>

#include <fmt/format.h>

#include "core/rng.hpp"
#include "search/strategies/lineage.hpp"
#include "search/strategies/registry.hpp"

namespace kevo {
namespace {

constexpr double kSizeBand = 0.2;  // log2 units: about 15% either way is "even"
constexpr int kMaxInspirations = 3;
constexpr uint64_t kParentStream = 0x6d61702d656c6974ull;  // "map-elit"
constexpr const char* kSizeBins[] = {"small", "even", "large"};
constexpr const char* kWorkBins[] = {"x1", "x2", "x4", "x8+"};
constexpr int kCells = 3 * 4;

struct Cell {
    int size = 1, work = 0;
    auto operator<=>(const Cell&) const = default;
    std::string label() const { return fmt::format("size={} work={}", kSizeBins[size], kWorkBins[work]); }
};

nlohmann::json cell_json(const Cell& c) { return {{"size", kSizeBins[c.size]}, {"work", kWorkBins[c.work]}, {"label", c.label()}}; }

Cell cell_from_json(const nlohmann::json& j) {
    Cell c;
    const auto index = [](const auto& bins, const std::string& name) {
        return static_cast<int>(std::find(std::begin(bins), std::end(bins), name) - std::begin(bins));
    };
    c.size = std::clamp(index(kSizeBins, j.at("size").get<std::string>()), 0, 2);
    c.work = std::clamp(index(kWorkBins, j.at("work").get<std::string>()), 0, 3);
    return c;
}

// The in-distribution timed sizes with the least and the most work.
struct Extremes {
    const SizeResult *small = nullptr, *large = nullptr;
};

Extremes extremes(const EvalResult& r) {
    Extremes e;
    for (const auto& s : r.sizes) {
        if (s.heldout || !s.timed || !(s.fraction > 0) || !(s.work > 0)) continue;
        if (!e.small || s.work < e.small->work) e.small = &s;
        if (!e.large || s.work > e.large->work) e.large = &s;
    }
    return e;
}

const SizeResult* size_named(const EvalResult& r, const std::string& label) {
    for (const auto& s : r.sizes)
        if (s.label == label && s.timed && s.fraction > 0) return &s;
    return nullptr;
}

// log2 of the kernel's large/small fraction ratio over the reference's at the same sizes (0 when
// there is one size only, or the reference lacks them).
double size_profile(const EvalResult& r, const EvalResult& reference) {
    const Extremes e = extremes(r);
    if (!e.small || !e.large || e.small == e.large) return 0;
    const SizeResult *rs = size_named(reference, e.small->label), *rl = size_named(reference, e.large->label);
    if (!rs || !rl) return 0;
    return std::log2((e.large->fraction / e.small->fraction) / (rl->fraction / rs->fraction));
}

uint64_t work_per_thread(const EvalResult& r) {
    uint64_t most = 1;
    for (const auto& k : r.resources) {
        uint64_t cells = 1;
        for (uint64_t n : k.per_thread) cells *= std::max<uint64_t>(1, n);
        most = std::max(most, cells);
    }
    return most;
}

struct Elite {
    StoredAttempt kernel;
    int drawn = 0;  // times its cell was drawn as a parent
};

double score_of(const StoredAttempt& a) { return a.attempt.result.score.value_or(0); }

class MapElites final : public Strategy {
public:
    explicit MapElites(const StrategySettings& s) : line_(s.history, s.stagnation_window), seed_(s.seed) {}

    std::string name() const override { return "map-elites"; }

    Plan plan(int iteration) const override {
        const auto& [cell, elite] = *draw(iteration);
        Plan p;
        p.parent = elite.kernel;
        p.previous = line_.previous();
        p.dropout = line_.dropout_due();
        if (!p.dropout) p.history.assign(line_.history().begin(), line_.history().end());
        for (const Elite* other : ranked())
            if (other->kernel.candidate_id != p.parent.candidate_id && static_cast<int>(p.inspirations.size()) < kMaxInspirations)
                p.inspirations.push_back({fmt::format("the elite of archive cell {}", cell_of_elite(*other).label()),
                                          other->kernel.attempt});
        p.where = "cell " + cell.label();
        p.record = {{"parent", p.parent.attempt.iteration}, {"parent_cell", cell_json(cell)}};
        return p;
    }

    // The candidate's own cell (where the archive files it), beside the parent's cell it was drawn
    // from; an incorrect candidate has no cell, only its parent's.
    std::string placed(const Plan& plan, const nlohmann::json& record) const override {
        const std::string parent = cell_from_json(plan.record["parent_cell"]).label();
        if (!record.is_object() || !record.contains("cell")) return "parent cell " + parent;
        return fmt::format("cell {} (parent cell {})", cell_from_json(record["cell"]).label(), parent);
    }

    std::optional<StoredAttempt> rival(const Plan& plan, const EvalResult& candidate) const override {
        const auto cell = place(candidate);
        if (!cell) return plan.parent;  // not correct: judged (and rejected) against its parent
        const auto it = archive_.find(*cell);
        if (it == archive_.end()) return std::nullopt;
        return it->second.kernel;
    }

    void annotate(nlohmann::json& record, const EvalResult& result) const override {
        const auto cell = place(result);
        if (!cell) return;
        if (!record.is_object()) record = nlohmann::json::object();
        const EvalResult& reference = seed_result_ ? *seed_result_ : result;
        record["cell"] = cell_json(*cell);
        record["descriptors"] = {{"size_profile_log2", size_profile(result, reference)},
                                 {"work_per_thread", work_per_thread(result)}};
    }

    void apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) override {
        line_.apply(record, evaluated);
        if (record.iteration == 0 && evaluated) seed_result_ = evaluated->attempt.result;
        const nlohmann::json& s = record.strategy;
        if (s.is_object() && s.contains("parent_cell")) {
            const auto it = archive_.find(cell_from_json(s["parent_cell"]));
            if (it != archive_.end()) ++it->second.drawn;
        }
        // A --from kernel starts the search in the seed's place: the seed stays the reference the
        // size descriptor is relative to, but is no parent (the tuner cannot tune a kernel that has
        // no knobs, and the user asked to start from theirs).
        if (record.status == IterationStatus::from && evaluated)
            std::erase_if(archive_, [](const auto& entry) { return entry.second.kernel.attempt.iteration == 0; });
        if (record.accepted && evaluated && s.is_object() && s.contains("cell"))
            archive_[cell_from_json(s["cell"])].kernel = *evaluated;
    }

    const StoredAttempt& best() const override { return ranked().front()->kernel; }

    std::vector<StoredAttempt> gate_candidates(int top) const override {
        std::vector<StoredAttempt> out;
        for (const Elite* e : ranked())
            if (static_cast<int>(out.size()) < top) out.push_back(e->kernel);
        return out;
    }

    nlohmann::json population() const override {
        nlohmann::json cells = nlohmann::json::array();
        for (const auto& [cell, elite] : archive_) {
            nlohmann::json c = cell_json(cell);
            c["iteration"] = elite.kernel.attempt.iteration;
            c["candidate_id"] = elite.kernel.candidate_id;
            c["score"] = elite.kernel.attempt.result.score;
            c["drawn"] = elite.drawn;
            cells.push_back(std::move(c));
        }
        return {{"strategy", name()},
                {"descriptors",
                 {{"size", "log2 of (fraction at the largest / at the smallest in-distribution size) over the seed's: "
                           "small below -0.2, large above 0.2"},
                  {"work", "cells per thread (per_thread of the launch in force): x1, x2, x4, x8+"}}},
                {"filled", archive_.size()}, {"cells_total", kCells}, {"cells", cells}};
    }

private:
    Lineage line_;  // the archive's history and dropouts (accepted: it became an elite)
    uint64_t seed_;
    std::optional<EvalResult> seed_result_;
    std::map<Cell, Elite> archive_;

    // The cell of a correct, timed kernel.
    std::optional<Cell> place(const EvalResult& r) const {
        if (r.verdict != Verdict::ok || !r.score) return std::nullopt;
        const double profile = size_profile(r, seed_result_ ? *seed_result_ : r);
        Cell c;
        c.size = profile < -kSizeBand ? 0 : profile > kSizeBand ? 2 : 1;
        c.work = std::min(3, static_cast<int>(std::log2(static_cast<double>(work_per_thread(r)))));
        return c;
    }

    Cell cell_of_elite(const Elite& e) const {
        for (const auto& [cell, elite] : archive_)
            if (&elite == &e) return cell;
        return {};
    }

    // A filled cell, drawn with weight 1 / (1 + times drawn) from (seed, iteration).
    std::map<Cell, Elite>::const_iterator draw(int iteration) const {
        double total = 0;
        for (const auto& [cell, elite] : archive_) total += 1.0 / (1 + elite.drawn);
        double u = rng::uniform(seed_, kParentStream, static_cast<uint64_t>(iteration)) * total;
        for (auto it = archive_.begin(); it != archive_.end(); ++it) {
            u -= 1.0 / (1 + it->second.drawn);
            if (u < 0) return it;
        }
        return std::prev(archive_.end());
    }

    // The elites, best first (ties: the earlier iteration).
    std::vector<const Elite*> ranked() const {
        std::vector<const Elite*> out;
        for (const auto& [cell, elite] : archive_) out.push_back(&elite);
        std::stable_sort(out.begin(), out.end(), [](const Elite* a, const Elite* b) {
            if (score_of(a->kernel) != score_of(b->kernel)) return score_of(a->kernel) > score_of(b->kernel);
            return a->kernel.attempt.iteration < b->kernel.attempt.iteration;
        });
        return out;
    }
};

const bool registered = register_strategy(
    {"map-elites", "an archive of the best kernel per measured behaviour (size profile x work per thread); parents "
                   "drawn from rarely chosen cells", 2,
     [](const StrategySettings& settings) -> std::unique_ptr<Strategy> { return std::make_unique<MapElites>(settings); }});

}  // namespace

}  // namespace kevo
