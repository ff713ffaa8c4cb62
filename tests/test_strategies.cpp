// The strategies' one rule on constructed rows and results (search/strategies/): islands propose in
// turn, migrate each island's best along the ring before every M-th proposal, drop out per island
// and show the other islands' bests as labelled inspirations; map-elites places kernels by the
// behaviour their evaluation measured and draws parents with a novelty bias reproducible by seed;
// every strategy hands the gate its top N; and replaying the rows rebuilds the live population.
#include <gtest/gtest.h>

#include <map>

#include "constructed_results.hpp"
#include "search/prompt.hpp"
#include "search/strategies/registry.hpp"

namespace kevo {
namespace {

// A correct result at two in-distribution sizes: "small" (1e6 of work) and "large" (1e8), with the
// given fractions, launched with `per_thread`; the score is their geometric mean.
EvalResult result(double small_fraction, double large_fraction, std::vector<uint64_t> per_thread = {1}) {
    EvalResult r;
    r.verdict = Verdict::ok;
    for (auto [label, work, fraction] : {std::tuple{"small", 1e6, small_fraction}, std::tuple{"large", 1e8, large_fraction}}) {
        SizeResult s = test::timed_size(label, 1e-3, 0.01, 10);
        s.work = work;
        s.fraction = fraction;
        r.sizes.push_back(s);
    }
    r.score = std::sqrt(small_fraction * large_fraction);
    r.resources.push_back({"k", -1, 0, 0, 256, {256}, per_thread});
    return r;
}

StoredAttempt kernel(int iteration, const EvalResult& r) {
    return StoredAttempt{1000 + iteration, "h" + std::to_string(iteration), Attempt{iteration, "src " + std::to_string(iteration), {}, r}};
}

IterationRecord row(int iteration, bool accepted, const nlohmann::json& strategy = nullptr, IterationStatus status = IterationStatus::evaluated) {
    IterationRecord r;
    r.iteration = iteration;
    r.status = status;
    r.accepted = accepted;
    r.strategy = strategy;
    return r;
}

StrategySettings settings(int islands, int every, int window, uint64_t seed = 1) {
    StrategySettings s;
    s.history = 4;
    s.stagnation_window = window;
    s.options = {{"islands", islands}, {"migration_every", every}};
    s.seed = seed;
    return s;
}

std::unique_ptr<Strategy> make(const std::string& name, const StrategySettings& s) {
    auto made = make_strategy(name, s);
    EXPECT_TRUE(made.has_value());
    return std::move(*made);
}

// One iteration the way the loop runs it: plan, evaluate (here: `r`, or nothing), judge against the
// rival by score, annotate, apply. Returns the stored row.
IterationRecord step(Strategy& s, int iteration, const std::optional<EvalResult>& r) {
    const Plan plan = s.plan(iteration);
    IterationRecord rec = row(iteration, false, plan.record, r ? IterationStatus::evaluated : IterationStatus::no_code);
    rec.dropout = plan.dropout;
    std::optional<StoredAttempt> evaluated;
    if (r) {
        const auto rival = s.rival(plan, *r);
        rec.accepted = r->verdict == Verdict::ok && (!rival || r->score.value_or(0) > rival->attempt.result.score.value_or(0));
        s.annotate(rec.strategy, *r);
        evaluated = kernel(iteration, *r);
    }
    s.apply(rec, evaluated);
    return rec;
}

void start(Strategy& s, const EvalResult& seed_result) {
    IterationRecord seed = row(0, true);
    s.annotate(seed.strategy, seed_result);
    s.apply(seed, kernel(0, seed_result));
}

// Replays stored rows into a fresh strategy, as --resume does.
std::unique_ptr<Strategy> replayed(const std::string& name, const StrategySettings& set,
                                   const std::vector<std::pair<IterationRecord, std::optional<EvalResult>>>& rows) {
    auto s = make(name, set);
    for (const auto& [rec, r] : rows) s->apply(rec, r ? std::optional(kernel(rec.iteration, *r)) : std::nullopt);
    return s;
}

TEST(Strategies, RegistryNamesEveryStrategyAndRefusesOthersByName) {
    // The shipped strategies lead the list (this binary also holds test_option_schema.cpp's own).
    const auto names = strategy_names();
    ASSERT_GE(names.size(), 3u);
    EXPECT_EQ(std::vector<std::string>(names.begin(), names.begin() + 3),
              (std::vector<std::string>{"one-plus-one", "islands", "map-elites"}));
    for (const auto& name : strategy_names()) EXPECT_EQ(make(name, settings(4, 5, 6))->name(), name);
    auto bad = make_strategy("simulated-annealing", settings(4, 5, 6));
    ASSERT_FALSE(bad.has_value());
    EXPECT_EQ(bad.error().message.rfind(
                  "unknown strategy 'simulated-annealing'; expected one of: one-plus-one, islands, map-elites", 0),
              0u)
        << bad.error().message;
}

TEST(Strategies, IslandsTakeTurnsAndMigrateTheBestAlongTheRingEveryM) {
    auto s = make("islands", settings(3, 2, 0));
    const EvalResult seed = result(0.1, 0.1), better = result(0.2, 0.2), worse = result(0.05, 0.05);
    start(*s, seed);
    std::vector<int> islands;
    // 1: island 0 improves; 2: island 1 does not.
    for (int it = 1; it <= 2; ++it) islands.push_back(step(*s, it, it == 1 ? better : worse).strategy["island"]);
    // Before proposal 3 (M = 2 proposals done): island 0's best moves on to island 1, where it is
    // better than the seed; the seed does not move onto itself, nor onto a better kernel.
    const Plan third = s->plan(3);
    EXPECT_EQ(third.record["island"], 2);
    ASSERT_TRUE(third.record.contains("migrations")) << third.record.dump();
    EXPECT_EQ(third.record["migrations"],
              nlohmann::json::parse(R"([{"from":0,"to":1,"iteration":1,"candidate_id":1001}])"));
    EXPECT_EQ(third.parent.attempt.iteration, 0) << "island 2 still starts from the seed";
    ASSERT_EQ(third.inspirations.size(), 1u) << "island 0's best, shown once though island 1 now holds it too";
    EXPECT_EQ(third.inspirations[0].label, "island 0's best");
    EXPECT_EQ(third.inspirations[0].attempt.iteration, 1);
    EXPECT_EQ(third.where, "island 2");
    for (int it = 3; it <= 6; ++it) islands.push_back(step(*s, it, worse).strategy["island"]);
    EXPECT_EQ(islands, (std::vector<int>{0, 1, 2, 0, 1, 2}));
    const auto pop = s->population();
    EXPECT_EQ(pop["islands"][1]["best_iteration"], 1) << pop.dump(2);
    EXPECT_EQ(pop["islands"][2]["best_iteration"], 1) << "moved on before proposal 5: " << pop.dump(2);
    EXPECT_EQ(s->best().attempt.iteration, 1);
}

TEST(Strategies, IslandsDropOutEachOnItsOwnCount) {
    auto s = make("islands", settings(2, 0, 2));
    start(*s, result(0.1, 0.1));
    std::vector<int> dropouts;
    for (int it = 1; it <= 10; ++it) {
        // Island 1 improves at its first proposal (iteration 2); nothing else improves.
        const IterationRecord r = step(*s, it, it == 2 ? result(0.2, 0.2) : result(0.05, 0.05));
        if (r.dropout) dropouts.push_back(it);
    }
    // Island 0 (1, 3, 5, 7, 9): two without improvement, then a dropout at 5 and 9; island 1 (2, 4,
    // 6, 8, 10): improved at 2, then 4 and 6 without, a dropout at 8.
    EXPECT_EQ(dropouts, (std::vector<int>{5, 8, 9}));
}

TEST(Strategies, InspirationsAreShownLabelledWithTheirScores) {
    auto s = make("islands", settings(2, 0, 0));
    start(*s, result(0.1, 0.1));
    step(*s, 1, result(0.3, 0.3));
    const Plan plan = s->plan(2);
    ProposalContext c;
    c.iteration = 2;
    c.incumbent = plan.parent.attempt;
    c.inspirations = plan.inspirations;
    const std::string prompt = build_prompt(c);
    EXPECT_NE(prompt.find("## Inspirations from the rest of the population"), std::string::npos) << prompt;
    EXPECT_NE(prompt.find("### island 0's best (iteration 1): score 0.3000"), std::string::npos) << prompt;
    EXPECT_NE(prompt.find("src 1"), std::string::npos) << prompt;
    c.inspirations.clear();
    EXPECT_EQ(build_prompt(c).find("Inspirations"), std::string::npos) << "one-plus-one shows none";
}

TEST(Strategies, MapElitesPlacesKernelsByTheirMeasuredBehaviour) {
    auto s = make("map-elites", settings(0, 0, 0));
    const EvalResult seed = result(0.5, 0.5);
    nlohmann::json seed_row;
    s->annotate(seed_row, seed);
    EXPECT_EQ(seed_row["cell"]["label"], "size=even work=x1");
    start(*s, seed);
    const auto cell = [&](const EvalResult& r) {
        nlohmann::json j;
        s->annotate(j, r);
        return j.is_null() ? std::string("none") : j["cell"]["label"].get<std::string>();
    };
    // Relatively stronger at the large size than the seed (0.8/0.5 against 0.5/0.5), 4 cells a thread.
    EXPECT_EQ(cell(result(0.5, 0.8, {4})), "size=large work=x4");
    EXPECT_EQ(cell(result(0.8, 0.5, {2, 1})), "size=small work=x2");
    EXPECT_EQ(cell(result(0.55, 0.5, {4, 4})), "size=even work=x8+") << "within 15% is even";
    EXPECT_EQ(cell(result(1.0, 1.0)), "size=even work=x1") << "faster everywhere: the seed's cell";
    EvalResult wrong = result(0.9, 0.9);
    wrong.verdict = Verdict::incorrect;
    EXPECT_EQ(cell(wrong), "none") << "a wrong kernel has no place";
    nlohmann::json d;
    s->annotate(d, result(0.5, 1.0, {2}));
    EXPECT_DOUBLE_EQ(d["descriptors"]["size_profile_log2"].get<double>(), 1.0);
    EXPECT_EQ(d["descriptors"]["work_per_thread"], 2);

    // An empty cell takes any correct kernel; a filled one only what beats its elite.
    const Plan plan = s->plan(1);
    EXPECT_FALSE(s->rival(plan, result(0.1, 0.3, {4})).has_value());
    EXPECT_EQ(step(*s, 1, result(0.1, 0.3, {4})).strategy["cell"]["label"], "size=large work=x4");
    const auto rival = s->rival(s->plan(2), result(0.1, 0.2, {4}));
    ASSERT_TRUE(rival.has_value());
    EXPECT_EQ(rival->attempt.iteration, 1);
    EXPECT_EQ(s->rival(s->plan(2), wrong)->attempt.iteration, s->plan(2).parent.attempt.iteration)
        << "a wrong kernel is judged against its parent";
    const auto pop = s->population();
    EXPECT_EQ(pop["filled"], 2);
    EXPECT_EQ(pop["cells"].size(), 2u);
}

// With --from the user's kernel starts the search: the seed stays the reference of the size
// descriptor but leaves the archive, so no parent is the seed (the tuner cannot move a kernel that
// has no knobs, and on the H200 13 of 15 map-elites runs ended early drawing it).
TEST(Strategies, MapElitesStartsFromTheFromKernelNotTheSeed) {
    auto s = make("map-elites", settings(0, 0, 0));
    start(*s, result(0.5, 0.5));
    IterationRecord from = row(1, true, nullptr, IterationStatus::from);
    const EvalResult from_result = result(0.5, 1.0, {4});
    s->annotate(from.strategy, from_result);
    s->apply(from, kernel(1, from_result));
    EXPECT_EQ(s->population()["filled"], 1);
    for (int it = 2; it < 12; ++it) EXPECT_EQ(s->plan(it).parent.attempt.iteration, 1) << "draw " << it;
    nlohmann::json d;
    s->annotate(d, result(0.5, 1.0, {4}));
    EXPECT_DOUBLE_EQ(d["descriptors"]["size_profile_log2"].get<double>(), 1.0) << "still relative to the seed";
}

// Four filled cells, then 40 parent draws: which cell each draw took.
std::vector<std::string> draws(uint64_t seed, int* most_drawn_first = nullptr) {
    auto s = make("map-elites", settings(0, 0, 0, seed));
    start(*s, result(0.5, 0.5));
    int it = 1;
    for (const auto& r : {result(0.5, 0.5, {2}), result(0.5, 0.5, {4}), result(0.5, 0.5, {8})}) step(*s, it++, r);
    std::vector<std::string> out;
    for (; it <= 43; ++it) out.push_back(step(*s, it, std::nullopt).strategy["parent_cell"]["label"]);
    if (most_drawn_first) {
        *most_drawn_first = 0;
        for (const auto& c : s->population()["cells"]) *most_drawn_first = std::max(*most_drawn_first, c["drawn"].get<int>());
    }
    return out;
}

TEST(Strategies, MapElitesDrawsRarelyChosenCellsReproduciblyBySeed) {
    int most = 0;
    const auto a = draws(11, &most), b = draws(11), c = draws(12);
    EXPECT_EQ(a, b) << "the same seed draws the same parents";
    EXPECT_NE(a, c) << "another seed draws others";
    std::map<std::string, int> count;
    for (const auto& cell : a) ++count[cell];
    ASSERT_EQ(count.size(), 4u);
    // 43 draws over 4 cells (the first three were the fills'): the novelty bias keeps every cell
    // near 43/4; uniform draws would often leave one below 6 or above 16.
    for (const auto& [cell, n] : count) EXPECT_TRUE(n >= 7 && n <= 14) << cell << " drawn " << n;
    EXPECT_LE(most, 14);
}

TEST(Strategies, GateTopNIsThePopulationsBestFirst) {
    // one-plus-one: the newest N incumbents.
    auto one = make("one-plus-one", settings(0, 0, 0));
    start(*one, result(0.1, 0.1));
    for (int it = 1; it <= 4; ++it) step(*one, it, result(0.1 + 0.05 * it, 0.1 + 0.05 * it));
    std::vector<int> picked;
    for (const auto& k : one->gate_candidates(3)) picked.push_back(k.attempt.iteration);
    EXPECT_EQ(picked, (std::vector<int>{4, 3, 2}));

    // islands: each island's incumbent by score, each kernel once.
    auto isl = make("islands", settings(4, 0, 0));
    start(*isl, result(0.1, 0.1));
    const double scores[] = {0.3, 0.5, 0.05, 0.2};  // island 2 keeps the seed
    for (int it = 1; it <= 4; ++it) step(*isl, it, result(scores[it - 1], scores[it - 1]));
    picked.clear();
    for (const auto& k : isl->gate_candidates(3)) picked.push_back(k.attempt.iteration);
    EXPECT_EQ(picked, (std::vector<int>{2, 1, 4}));
    EXPECT_EQ(isl->gate_candidates(9).size(), 4u) << "three islands' kernels and the seed";
    EXPECT_EQ(isl->best().attempt.iteration, 2);

    // map-elites: the elites by score.
    auto me = make("map-elites", settings(0, 0, 0));
    start(*me, result(0.5, 0.5));
    step(*me, 1, result(0.6, 0.6, {2}));
    step(*me, 2, result(0.9, 0.9, {4}));
    picked.clear();
    for (const auto& k : me->gate_candidates(2)) picked.push_back(k.attempt.iteration);
    EXPECT_EQ(picked, (std::vector<int>{2, 1}));
}

TEST(Strategies, ReplayingTheRowsRebuildsTheLivePopulation) {
    for (const std::string name : {"one-plus-one", "islands", "map-elites"}) {
        const auto set = settings(3, 2, 3, 9);
        auto live = make(name, set);
        std::vector<std::pair<IterationRecord, std::optional<EvalResult>>> rows;
        const EvalResult seed = result(0.2, 0.2);
        IterationRecord seed_row = row(0, true);
        live->annotate(seed_row.strategy, seed);
        live->apply(seed_row, kernel(0, seed));
        rows.emplace_back(seed_row, seed);
        for (int it = 1; it <= 12; ++it) {
            std::optional<EvalResult> r;
            if (it % 4 != 0) r = result(0.1 + 0.03 * ((it * 7) % 5), 0.1 + 0.02 * ((it * 3) % 7), {uint64_t(1) << (it % 4)});
            rows.emplace_back(step(*live, it, r), r);
        }
        auto resumed = replayed(name, set, rows);
        EXPECT_EQ(resumed->population(), live->population()) << name;
        EXPECT_EQ(resumed->best().candidate_id, live->best().candidate_id) << name;
        for (int it = 13; it <= 16; ++it) {
            const Plan a = live->plan(it), b = resumed->plan(it);
            EXPECT_EQ(a.record, b.record) << name << " " << it;
            EXPECT_EQ(a.dropout, b.dropout) << name << " " << it;
            EXPECT_EQ(a.history.size(), b.history.size()) << name << " " << it;
            step(*live, it, result(0.3, 0.3));
            step(*resumed, it, result(0.3, 0.3));
        }
    }
}

}  // namespace
}  // namespace kevo
