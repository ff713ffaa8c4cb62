// The figures a researcher reads as facts, on constructed inputs (no kernels run): a study's
// aggregates equal the geometric mean of its gate table and leave out, naming and counting, the
// cells that did not get through the gate (a real SQLite store, read back by the real kevo
// binary too); the bench's marks and datasheet basis in its three forms; the datasheet-basis
// arithmetic; and the fp8/int8 ceilings' ratchet (a faster rate raises the record, a slower one does not).
#include <gtest/gtest.h>

#include <cmath>

#include <fmt/format.h>

#include "bench/bench_aggregates.hpp"
#include "bench/bench_render.hpp"
#include "eval/ceiling_ratchet.hpp"
#include "eval/roofline.hpp"
#include "kevo_process.hpp"
#include "report/csv/csv_export.hpp"
#include "report/report_data.hpp"
#include "report/report_stats.hpp"
#include "report/study_aggregates.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

namespace {

using kevo::test::run_kevo;

// ---- study aggregates from the gate ----

struct GateFigures {
    double speedup, heldout_speedup, fraction, seed_fraction, search_best, search_seed;
};

const std::string& id_of(const kevo::RunRecord& run) { return run.run_id; }

// A finished run through the gate: a seed row and the search's best's row, as the loop stores them.
void add_run(kevo::Store& store, const std::string& id, const std::string& task, const std::string& strategy,
             kevo::RunStatus status, const std::optional<GateFigures>& g, const std::string& cell) {
    kevo::RunRecord run;
    run.run_id = id;
    run.task = task;
    run.backend = "opencl";
    run.profile = "small";
    run.proposer = "tune";
    run.strategy = strategy;
    run.status = status;
    run.created_at = run.updated_at = "2026-12-05T12:00:00Z";
    run.settings = {{"seed", 1}, {"study", {{"study_id", "s-fig"}, {"cell", cell}, {"model", "tuner"}}}};
    auto created = store.create_run(run);
    ASSERT_TRUE(created) << created.error().message;
    if (!g) return;
    // The seed's and the best's candidates (the held-out rows name them).
    int64_t ids[2] = {0, 0};
    for (int i = 0; i < 2; ++i) {
        auto id = store.add_candidate({0, id_of(run), fmt::format("{}-{}", id_of(run), i), std::nullopt, "tune",
                                       i ? "// best" : "// seed", {}});
        ASSERT_TRUE(id) << id.error().message;
        ids[i] = *id;
    }
    run.seed_score = g->search_seed;
    run.best_score = g->search_best;
    run.summary = {{"outcome", "improved"}, {"gate", {{{"candidate_id", ids[1]}, {"speedup", g->speedup}}}}};
    auto updated = store.update_run(run);
    ASSERT_TRUE(updated) << updated.error().message;
    if (status != kevo::RunStatus::finished) return;
    kevo::HeldoutRecord seed;
    seed.run_id = id;
    seed.role = "seed";
    seed.candidate_id = ids[0];
    seed.verdict = "ok";
    seed.fraction = g->seed_fraction;
    seed.iteration = 0;
    seed.speedup = seed.heldout_speedup = 1.0;
    ASSERT_TRUE(store.add_heldout(seed));
    kevo::HeldoutRecord best = seed;
    best.role = "best";
    best.candidate_id = ids[1];
    best.iteration = 1;
    best.fraction = g->fraction;
    best.speedup = g->speedup;
    best.heldout_speedup = g->heldout_speedup;
    ASSERT_TRUE(store.add_heldout(best));
}

class StudyFromTheGate : public ::testing::Test {
protected:
    void SetUp() override {
        auto store = kevo::Store::open(db_);
        ASSERT_TRUE(store) << store.error().message;
        kevo::StudyRecord study{"s-fig", "fig.toml", "/fig.toml", "name = \"fig\"\n", nlohmann::json::object(), "", ""};
        ASSERT_TRUE((*store)->create_study(study));
        // one-plus-one: saxpy 2 seeds (median of 1.2 and 0.8 = 1.0), heat2d 0.9; the search's own
        // scores claim +53% (as in the review that found it).
        add_run(**store, "r1", "saxpy", "one-plus-one", kevo::RunStatus::finished, GateFigures{1.2, 1.1, 0.6, 0.5, 0.3, 0.19}, "saxpy/tuner/one-plus-one/1");
        add_run(**store, "r2", "saxpy", "one-plus-one", kevo::RunStatus::finished, GateFigures{0.8, 0.7, 0.4, 0.5, 0.3, 0.19}, "saxpy/tuner/one-plus-one/2");
        add_run(**store, "r3", "heat2d", "one-plus-one", kevo::RunStatus::finished, GateFigures{0.9, 0.95, 0.2, 0.22, 0.29, 0.19}, "heat2d/tuner/one-plus-one/1");
        // Interrupted before its gate, with a search score far above the others: it must not count.
        add_run(**store, "r4", "heat2d", "one-plus-one", kevo::RunStatus::interrupted, GateFigures{9, 9, 9, 9, 9, 0.01}, "heat2d/tuner/one-plus-one/2");
        for (const auto& [cell, run] : std::vector<std::pair<std::string, std::string>>{
                 {"saxpy/tuner/one-plus-one/1", "r1"}, {"saxpy/tuner/one-plus-one/2", "r2"},
                 {"heat2d/tuner/one-plus-one/1", "r3"}, {"heat2d/tuner/one-plus-one/2", "r4"}}) {
            const std::string task = cell.substr(0, cell.find('/'));
            ASSERT_TRUE((*store)->set_study_cell({"s-fig", cell, task, "tuner", "one-plus-one", cell.back() - '0', run}));
        }
        // A cell never started.
        ASSERT_TRUE((*store)->set_study_cell({"s-fig", "nbody/tuner/one-plus-one/1", "nbody", "tuner", "one-plus-one", 1, std::nullopt}));
    }

    kevo::test::TempDir dir_{"figures-study"};
    std::string db_ = dir_.file("study.db");
};

TEST_F(StudyFromTheGate, AggregatesEqualTheGeometricMeanOfTheGateTableAndCountWhatIsLeftOut) {
    auto store = kevo::Store::open(db_, kevo::Store::Access::read_only);
    ASSERT_TRUE(store);
    auto data = kevo::collect_report_data(**store, {kevo::ReportScope::Kind::study, "s-fig"});
    ASSERT_TRUE(data) << data.error().message;
    const auto rows = kevo::study_aggregates(*data);
    ASSERT_EQ(rows.size(), 1u);
    const auto& r = rows[0];
    EXPECT_EQ(r.gated, 3);
    EXPECT_EQ(r.untimed, 0);
    ASSERT_EQ(r.left_out.size(), 2u);
    EXPECT_EQ(r.left_out[0].cell, "heat2d/tuner/one-plus-one/2");
    EXPECT_EQ(r.left_out[0].why, "interrupted");
    EXPECT_EQ(r.left_out[1].cell, "nbody/tuner/one-plus-one/1");
    EXPECT_EQ(r.left_out[1].why, "not started");

    // The gate table (the HTML Results rows): per task the median over its runs.
    double log_sum = 0;
    int tasks = 0;
    for (const auto& g : kevo::group_rows(*data)) {
        if (!g.speedup || g.gated == 0) continue;
        if (g.key.task == "heat2d") EXPECT_EQ(g.run_ids.size(), 2u) << "the table still lists the interrupted run";
        log_sum += std::log(*g.speedup);
        ++tasks;
    }
    ASSERT_EQ(tasks, 2);
    ASSERT_EQ(r.speedup.size(), 1u);
    ASSERT_TRUE(r.speedup[0].geomean);
    EXPECT_NEAR(*r.speedup[0].geomean, std::exp(log_sum / tasks), 1e-12);
    EXPECT_NEAR(*r.speedup[0].geomean, std::sqrt(1.0 * 0.9), 1e-12);
    EXPECT_NEAR(*r.heldout_speedup[0].geomean, std::sqrt(0.9 * 0.95), 1e-12);
    EXPECT_NEAR(*r.heldout_fraction[0].geomean, std::sqrt(0.5 * 0.2), 1e-12);
    EXPECT_NEAR(*r.seed_heldout_fraction[0].geomean, std::sqrt(0.5 * 0.22), 1e-12);
    // The search's own, apart: +53% that the gate does not show.
    EXPECT_NEAR(*r.search_best[0].geomean / *r.search_seed[0].geomean, std::sqrt(0.3 * 0.29) / 0.19, 1e-12);

    // The text, the JSON of `kevo report --study` and the CSV export say the same.
    const std::string text = kevo::render_study_aggregates_text(rows);
    EXPECT_NE(text.find("speed-up in distribution (gate), pack sci (2 of 12 tasks): 0.9487x"), std::string::npos) << text;
    EXPECT_NE(text.find("left out of the aggregates: 2 cells (heat2d/tuner/one-plus-one/2 interrupted; "
                        "nbody/tuner/one-plus-one/1 not started)"), std::string::npos) << text;
    EXPECT_NE(text.find("best (search)"), std::string::npos) << text;
    const auto cli = run_kevo({"report", "--study", "s-fig", "--db", db_, "--json"});
    ASSERT_EQ(cli.exit_code, 0) << cli.err;
    const auto doc = cli.json()["aggregates"][0];
    EXPECT_NEAR(doc["gate"]["speedup"][0]["geomean"].get<double>(), std::sqrt(0.9), 1e-12) << doc.dump();
    EXPECT_EQ(doc["left_out"].size(), 2u);
    EXPECT_EQ(doc["gated"], 3);
    const auto paths = kevo::export_csv(*data, dir_.file("csv"));
    ASSERT_TRUE(paths) << paths.error().message;
    const std::string runs = kevo::test::slurp(dir_.file("csv/runs.csv"));
    EXPECT_NE(runs.find(",interrupted,"), std::string::npos) << "the interrupted run is marked left out\n" << runs;
    const std::string aggregates = kevo::test::slurp(dir_.file("csv/aggregates.csv"));
    EXPECT_NE(aggregates.find("tuner,one-plus-one,gate,speedup,sci,,0.948683"), std::string::npos) << aggregates;
}

TEST_F(StudyFromTheGate, ABestTheGateCouldNotTimeHasNoSpeedupAndIsCounted) {
    {
        auto store = kevo::Store::open(db_);
        ASSERT_TRUE(store);
        // heat2d seed 1's best failed at the held-out size: the gate stops before timing it.
        auto before = (*store)->load_heldout("r3");
        ASSERT_TRUE(before && before->size() == 2u);
        const int64_t seed_id = (*before)[0].candidate_id, best_id = (*before)[1].candidate_id;
        ASSERT_TRUE((*store)->clear_heldout("r3"));
        kevo::HeldoutRecord seed;
        seed.run_id = "r3";
        seed.role = "seed";
        seed.candidate_id = seed_id;
        seed.verdict = "ok";
        seed.fraction = 0.22;
        ASSERT_TRUE((*store)->add_heldout(seed));
        kevo::HeldoutRecord bad = seed;
        bad.role = "rejected-1";
        bad.candidate_id = best_id;
        bad.verdict = "incorrect";
        bad.passed = false;
        bad.reason = "heldout-incorrect";
        bad.fraction = 0.0;
        bad.speedup.reset();
        bad.heldout_speedup.reset();
        ASSERT_TRUE((*store)->add_heldout(bad));
        kevo::HeldoutRecord handed = seed;
        handed.role = "best";
        ASSERT_TRUE((*store)->add_heldout(handed));
    }
    auto store = kevo::Store::open(db_, kevo::Store::Access::read_only);
    auto data = kevo::collect_report_data(**store, {kevo::ReportScope::Kind::study, "s-fig"});
    ASSERT_TRUE(data);
    const auto r = kevo::study_aggregates(*data)[0];
    EXPECT_EQ(r.gated, 3);
    EXPECT_EQ(r.untimed, 1);
    // heat2d has no gate speed-up left: only saxpy's median (1.0) is aggregated, and heat2d is missing.
    ASSERT_EQ(r.speedup.size(), 1u);
    EXPECT_NEAR(*r.speedup[0].geomean, 1.0, 1e-12);
    EXPECT_EQ(r.speedup[0].scored.size(), 1u);
    // Its held-out Phi is the gate's 0.
    EXPECT_NEAR(*r.heldout_fraction[0].geomean, 0.0, 1e-12);
}

// ---- the bench's marks and the datasheet basis ----

kevo::SizeResult timed(const std::string& label, double fraction, bool implausible, bool noisy) {
    kevo::SizeResult s;
    s.label = label;
    s.correct = s.timed = true;
    s.seconds = 1e-3;
    s.unit = "GB/s";
    s.ceiling = s.ceiling_static = s.ceiling_workload = 100;
    s.achieved = fraction * 100;
    s.fraction = fraction;
    s.implausible = implausible;
    s.noisy = noisy;
    s.ceiling_datasheet = 120;
    s.fraction_datasheet = s.achieved / 120;
    return s;
}

kevo::BenchReport constructed_bench() {
    kevo::BenchReport report;
    report.device.name = "NVIDIA H200";
    report.device.backend = "cuda";
    report.profile = "small";
    kevo::Calibration c;
    c.source = "measured";
    c.bandwidth_gbs = 100;
    c.fp32_gflops = 1000;
    c.datasheet = kevo::datasheet_for("NVIDIA H200");
    report.ceilings = c;
    kevo::BenchTask t;
    t.task = "saxpy";
    t.bound = "bandwidth";
    kevo::EvalResult seed, best;
    seed.verdict = best.verdict = kevo::Verdict::ok;
    seed.sizes = {timed("1048576", 0.5, false, true)};
    best.sizes = {timed("1048576", 1.2807, true, false)};
    seed.score = 0.5;
    best.score = 1.2807;
    best.warnings = {"size 1048576: fraction 1.28 is above the static ceiling"};
    t.seed = seed;
    t.best = best;
    kevo::BenchSize s;
    s.label = "1048576";
    s.seed = seed.sizes[0];
    s.best = best.sizes[0];
    t.sizes = {s};
    report.tasks = {t};
    return report;
}

TEST(BenchMarks, ImplausibleAndNoisyShowInTextMarkdownAndJsonAndTheAggregateSaysSo) {
    const auto report = constructed_bench();
    const std::string text = kevo::render_bench_text(report);
    EXPECT_NE(text.find("1.281 !"), std::string::npos) << text;
    EXPECT_NE(text.find("best: warning: size 1048576: fraction 1.28"), std::string::npos) << text;
    EXPECT_NE(text.find("datasheet basis: NVIDIA H200 SXM: 4800 GB/s"), std::string::npos) << text;
    const std::string md = kevo::render_bench_markdown(report, "kevo bench");
    EXPECT_NE(md.find("| 1.281 | ! | 1.281 | 1.067 |"), std::string::npos) << md;
    EXPECT_NE(md.find("## Warnings"), std::string::npos) << md;
    const auto j = kevo::to_json(report);
    const auto& size = j["tasks"][0]["sizes"][0];
    EXPECT_TRUE(size["best"]["implausible"].get<bool>());
    EXPECT_TRUE(size["seed"]["noisy"].get<bool>());
    EXPECT_NEAR(size["best"]["fraction_datasheet"].get<double>(), 128.07 / 120, 1e-12);
    EXPECT_EQ(size["best"]["ceiling_datasheet"], 120.0);
    EXPECT_EQ(j["datasheet"]["basis"], "datasheet");
    EXPECT_EQ(j["tasks"][0]["best"]["warnings"].size(), 1u);

    const auto a = kevo::bench_aggregates(report, {});
    EXPECT_EQ(a.best_implausible, std::vector<std::string>{"saxpy"});
    EXPECT_TRUE(a.seed_implausible.empty());
    const std::string atext = kevo::render_bench_aggregates_text(a);
    EXPECT_NE(atext.find("best, measured basis, pack sci (1 of 12 tasks"), std::string::npos) << atext;
    EXPECT_NE(atext.find("INCLUDES IMPLAUSIBLE fractions, above 1.05 of a ceiling: saxpy !"), std::string::npos) << atext;
    EXPECT_NE(atext.find("best, datasheet basis"), std::string::npos) << atext;
    EXPECT_NE(kevo::render_bench_aggregates_markdown(a).find("INCLUDES IMPLAUSIBLE"), std::string::npos);
    EXPECT_NEAR(kevo::to_json(a)["datasheet"]["best"][0]["geomean"].get<double>(), 128.07 / 120, 1e-12);
}

TEST(DatasheetBasis, AMultiClassSizeIsDividedByTheVendorsFigures) {
    kevo::Calibration c;
    c.source = "measured";
    c.bandwidth_gbs = 4318;
    c.fp32_gflops = 60000;
    c.datasheet = kevo::datasheet_for("NVIDIA H200");
    c.tensor = kevo::datasheet_tensor_ceilings(c.datasheet, "test");
    c.tensor[1].source = kevo::CeilingSource::measured;
    c.tensor[1].gflops = 1456100;  // fp8 as cuBLASLt reached it
    kevo::Case k;
    k.flops_by_class = {{kevo::ComputeClass::tensor_fp8, 2e12}};
    k.roofline_bytes = 1e8;
    k.working_set_bytes = 1e8;
    kevo::SizeResult s;
    s.label = "x";
    s.timed = true;
    s.seconds = 2e-3;
    kevo::score_size(s, kevo::Bound::compute, k, c, kevo::RooflineMode::static_peak);
    EXPECT_NEAR(s.fraction, (2e12 / 1456100e9) / 2e-3, 1e-12);
    // Datasheet basis: 2e12 / 1978.9 TFLOP/s over the time; its ceiling in the size's unit.
    EXPECT_NEAR(s.fraction_datasheet, (2e12 / 1978900e9) / 2e-3, 1e-12);
    EXPECT_NEAR(s.ceiling_datasheet, 1978900, 1e-6);
    EXPECT_NEAR(s.achieved / s.ceiling_datasheet, s.fraction_datasheet, 1e-12);
    EXPECT_EQ(s.tensor_class, "fp8");
    EXPECT_EQ(s.tensor_flops, 2e12);
    // A bandwidth-bound single-bound size: achieved over the datasheet's bandwidth.
    kevo::Case b;
    b.working_set_bytes = 1e9;
    kevo::SizeResult m;
    m.timed = true;
    m.seconds = 1e-3;
    m.work = 3e9;
    kevo::score_size(m, kevo::Bound::bandwidth, b, c, kevo::RooflineMode::static_peak);
    EXPECT_NEAR(m.fraction_datasheet, 3000.0 / 4800.0, 1e-12);
    EXPECT_EQ(m.ceiling_datasheet, 4800);
    EXPECT_TRUE(m.tensor_class.empty());
    kevo::EvalResult r;
    r.sizes = {s, m};
    EXPECT_NEAR(*kevo::datasheet_score(r), std::sqrt(s.fraction_datasheet * m.fraction_datasheet), 1e-12);
    // Without a datasheet entry: no datasheet basis.
    c.datasheet.reset();
    kevo::SizeResult none;
    none.timed = true;
    none.seconds = 1e-3;
    none.work = 3e9;
    kevo::score_size(none, kevo::Bound::bandwidth, b, c, kevo::RooflineMode::static_peak);
    EXPECT_EQ(none.fraction_datasheet, 0);
    r.sizes = {none};
    EXPECT_FALSE(kevo::datasheet_score(r));
}

// ---- ceilings that bound ----

TEST(CeilingRatchet, AFasterRateRaisesTheRecordASlowerOneDoesNot) {
    kevo::test::TempDir dir("figures-ratchet");
    kevo::test::ScopedEnv cache("KEVO_CACHE_DIR", dir.file("cache"));
    const auto sheet = kevo::datasheet_for("NVIDIA H200");
    const std::string model = "NVIDIA H200";
    auto first = kevo::record_class_rate(model, {kevo::ComputeClass::tensor_int8, 1497700, "cuBLASLt int8 8192^3", ""}, sheet);
    ASSERT_TRUE(first) << first.error().message;
    ASSERT_TRUE(*first);
    auto faster = kevo::record_class_rate(model, {kevo::ComputeClass::tensor_int8, 1540000, "gemm_w8a8 peer", ""}, sheet);
    ASSERT_TRUE(faster && *faster);
    EXPECT_DOUBLE_EQ((*faster)->before, 1497700);
    auto slower = kevo::record_class_rate(model, {kevo::ComputeClass::tensor_int8, 1400000, "slow", ""}, sheet);
    ASSERT_TRUE(slower);
    EXPECT_FALSE(*slower);
    // Above 1.05 of the datasheet: a timing fault, never recorded.
    auto beyond = kevo::record_class_rate(model, {kevo::ComputeClass::tensor_int8, 2.2e6, "bogus", ""}, sheet);
    ASSERT_TRUE(beyond);
    EXPECT_FALSE(*beyond);
    // bf16 is not a bounded class.
    auto bf16 = kevo::record_class_rate(model, {kevo::ComputeClass::tensor_bf16, 9e5, "x", ""}, sheet);
    ASSERT_TRUE(bf16);
    EXPECT_FALSE(*bf16);
    const auto record = kevo::load_rate_record(model);
    ASSERT_TRUE(record.find(kevo::ComputeClass::tensor_int8));
    EXPECT_DOUBLE_EQ(record.find(kevo::ComputeClass::tensor_int8)->gflops, 1540000);
    EXPECT_EQ(record.find(kevo::ComputeClass::tensor_int8)->by, "gemm_w8a8 peer");
    EXPECT_TRUE(kevo::load_rate_record("NVIDIA H100").rates.empty()) << "per device model";

    // The ceiling in force: the largest of its measurement, the datasheet and the record.
    kevo::Calibration c;
    c.device_name = model;
    c.datasheet = sheet;
    c.tensor = kevo::datasheet_tensor_ceilings(sheet, "test");
    for (auto& t : c.tensor) t.source = kevo::CeilingSource::measured, t.gflops = 1456100;
    kevo::bound_tensor_ceilings(c, record);
    EXPECT_DOUBLE_EQ(c.peak_gflops(kevo::ComputeClass::tensor_bf16), 1456100) << "bf16 is left as measured";
    EXPECT_DOUBLE_EQ(c.peak_gflops(kevo::ComputeClass::tensor_int8), 1978900) << "the datasheet is above the record";
    EXPECT_EQ(c.tensor_ceiling(kevo::ComputeClass::tensor_int8)->source, kevo::CeilingSource::datasheet);
    // A device model with no datasheet figure for the class: the record bounds it.
    kevo::Calibration bare;
    bare.device_name = model;
    bare.tensor = kevo::datasheet_tensor_ceilings(std::nullopt, "test");
    bare.tensor[2].source = kevo::CeilingSource::measured;
    bare.tensor[2].gflops = 1497700;
    kevo::bound_tensor_ceilings(bare, record);
    EXPECT_DOUBLE_EQ(bare.peak_gflops(kevo::ComputeClass::tensor_int8), 1540000);
    EXPECT_NE(bare.tensor_ceiling(kevo::ComputeClass::tensor_int8)->how.find("gemm_w8a8 peer"), std::string::npos);
    EXPECT_DOUBLE_EQ(bare.peak_gflops(kevo::ComputeClass::tensor_fp8), 0) << "absent stays absent without a figure";
}

}  // namespace
