// `kevo report --html` and `kevo export --csv` on a real store: real `kevo run`s on PoCL (the tuner
// on saxpy and heat2d, the replay proposer on saxpy and nbody, small profile), a study row with its cells, and runs
// tagged with the study's cell and model the way `kevo sweep` tags them. The page's table must hold
// the store's numbers, its scatter one point per (model, task), every hostile string escaped; the
// page must load in headless chromium without errors with every figure drawn; the CSV files must
// read back with Python's csv module to what the store holds.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <regex>

#include <fmt/format.h>

#include "headless_browser.hpp"
#include "kevo_process.hpp"
#include "pack/weights.hpp"
#include "report/csv/csv_table.hpp"
#include "report/html/html_sections.hpp"
#include "report/html/markup.hpp"
#include "report/report_data.hpp"
#include "report/report_stats.hpp"
#include "report/run_figures.hpp"
#include "report_page.hpp"
#include "run_support.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

using kevo::test::run_kevo;
using kevo::test::count;
using kevo::test::figure_svg;
using kevo::test::slurp;
using kevo::test::table_cell;

namespace {

namespace fs = std::filesystem;

std::string path(const std::string& name) { return kevo::test::temp_path("kevo_report_html", name); }

// Strings a store can hold that would break a page written without escaping.
const std::string kHostileModel = "model-<b>\"x\"&'y'</b>";
const std::string kHostileStudyText = "name = \"demo\"\n</pre><script>document.title='pwned'</script>\n";
const std::string kHostileFile = "12-a,\"b\" <img src=x onerror=alert(1)>.cl";

struct Cell {
    std::string task, model, run_id;
};

// One store shared by the tests: four runs, a study over them. ctest runs each test in its own
// process, so the store is built once per kevo binary: under a lock, in a folder every process of
// the test run shares, and marked complete with the binary's identity.
class ReportStore : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        const auto device = kevo::test::opencl_cpu_device();
        if (!device) return;
        // One folder per kevo binary: two build trees testing at once must not rebuild each other's store.
        const fs::path dir = fs::path(::testing::TempDir()) /
                             fmt::format("kevo_report_html_fixture_{:016x}", std::hash<std::string>{}(KEVO_BINARY));
        fs::create_directories(dir);
        const int lock = ::open((dir / "lock").c_str(), O_CREAT | O_RDWR, 0644);
        ::flock(lock, LOCK_EX);
        db_ = (dir / "study.db").string();
        const std::string marker = (dir / "complete.json").string(), key = binary_identity();
        const auto done = nlohmann::json::parse(slurp(marker), nullptr, false);
        if (done.is_object() && done.value("binary", "") == key) {
            for (const auto& c : done["cells"])
                cells_.push_back({c["task"].get<std::string>(), c["model"].get<std::string>(), c["run_id"].get<std::string>()});
        } else {
            fs::remove(marker);
            setup_error_ = build_store(*device);
            nlohmann::json cells = nlohmann::json::array();
            for (const auto& c : cells_) cells.push_back({{"task", c.task}, {"model", c.model}, {"run_id", c.run_id}});
            if (setup_error_.empty()) std::ofstream(marker) << nlohmann::json{{"binary", key}, {"cells", cells}}.dump();
        }
        ::flock(lock, LOCK_UN);
        ::close(lock);
    }

    // The kevo binary's size and modification time: a rebuilt kevo builds the store again.
    static std::string binary_identity() {
        const auto size = fs::file_size(KEVO_BINARY);
        const auto time = fs::last_write_time(KEVO_BINARY).time_since_epoch().count();
        return fmt::format("{}:{}", size, time);
    }

    static std::string build_store(int device) {
        for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db_ + suffix);
        cells_.clear();
        // saxpy's replay: a wrong kernel, then a correct one (a repair), then another correct one
        // under a hostile file name. nbody's: a wrong kernel, then one about 6x faster (a repair),
        // then one faster still that is wrong only at the held-out size.
        const std::string seed(kevo::task_file("saxpy", "seed.cl"));
        // (A variant differs in code, not only in a comment: a comment-only copy is the seed's duplicate.)
        const auto variant = [&seed](const std::string& from, const std::string& to) {
            std::string text = seed;
            text.replace(text.find(from), from.size(), to);
            return text;
        };
        const std::string saxpy = replay_dir("saxpy-replay", {{"10-wrong.cl", candidate_text("saxpy_slightly_wrong.cl")},
                                                              {"11-variant.cl", variant("#define PT 1", "#define PT 2")},
                                                              {kHostileFile, variant("#define BLOCK 256", "#define BLOCK 128")}});
        const std::string nbody = replay_dir("nbody-replay", {{"10-wrong.cl", candidate_text("nbody_slightly_wrong.cl")},
                                                              {"11-lanes8.cl", candidate_text("nbody_lanes8.cl")},
                                                              {"12-pow2-mask.cl", candidate_text("nbody_pow2_mask.cl")}});
        for (const auto& [task, proposer, dir] : {std::tuple{"saxpy", "tune", ""}, std::tuple{"saxpy", "replay", saxpy.c_str()},
                                                  std::tuple{"heat2d", "tune", ""}, std::tuple{"nbody", "replay", nbody.c_str()}}) {
            const bool replay = std::string(proposer) == "replay";
            std::vector<std::string> args = {"run", task, "--backend", "opencl", "--device", std::to_string(device),
                                             "--profile", "small", "--proposer", proposer, "--iterations", replay ? "3" : "2",
                                             "--seed", "5", "--warmup", "1", "--repeat", "5", "--gate-rounds", "1",
                                             "--db", db_, "--out", path("out"), "--json"};
            if (replay) args.insert(args.end(), {"--replay", dir});
            const auto r = run_kevo(args);
            const auto s = r.json();
            if (!s.is_object() || !s.contains("run_id"))
                return fmt::format("kevo run {} {} failed ({}): {}", task, proposer, r.exit_code, r.err);
            cells_.push_back({task, replay ? kHostileModel : "model-a", s["run_id"]});
        }
        return tag_study();
    }

    static std::string candidate_text(const std::string& name) { return slurp(kevo::test::candidate(name)); }

    // A replay folder holding these (file name, text) pairs; the proposer replays them in name order.
    static std::string replay_dir(const std::string& name, const std::vector<std::pair<std::string, std::string>>& files) {
        const std::string dir = path(name);
        fs::remove_all(dir);
        fs::create_directories(dir);
        for (const auto& [file, text] : files) std::ofstream(fs::path(dir) / file) << text;
        return dir;
    }

    // The study and its cells, and each run's settings tagged as a sweep tags them.
    static std::string tag_study() {
        auto store = kevo::Store::open(db_);
        if (!store) return store.error().message;
        kevo::StudyRecord study{"s-test-1", "demo.toml", "/studies/demo.toml", kHostileStudyText,
                                {{"tasks", {"saxpy", "heat2d", "nbody"}}}, "", ""};
        if (auto ok = (*store)->create_study(study); !ok) return ok.error().message;
        for (const auto& c : cells_) {
            const std::string cell = fmt::format("{}/{}/one-plus-one/5", c.task, c.model);
            if (auto ok = (*store)->set_study_cell({study.study_id, cell, c.task, c.model, "one-plus-one", 5, c.run_id}); !ok)
                return ok.error().message;
            auto run = (*store)->load_run(c.run_id);
            if (!run) return run.error().message;
            run->settings["study"] = {{"study_id", study.study_id}, {"cell", cell}, {"model", c.model}};
            if (auto ok = (*store)->update_run(*run); !ok) return ok.error().message;
        }
        // A cell not started yet.
        if (auto ok = (*store)->set_study_cell({study.study_id, "saxpy/model-c/one-plus-one/5", "saxpy", "model-c",
                                                "one-plus-one", 5, std::nullopt});
            !ok)
            return ok.error().message;
        return {};
    }

    void SetUp() override {
        if (db_.empty()) GTEST_SKIP() << "no OpenCL CPU device";
        ASSERT_TRUE(setup_error_.empty()) << setup_error_;
    }

    static std::string html(const std::vector<std::string>& scope, const std::string& name) {
        const std::string file = path(name);
        std::vector<std::string> args = {"report"};
        args.insert(args.end(), scope.begin(), scope.end());
        args.insert(args.end(), {"--db", db_, "--html", file});
        const auto r = run_kevo(args);
        EXPECT_EQ(r.exit_code, 0) << r.err;
        return slurp(file);
    }

    static inline std::string db_, setup_error_;
    static inline std::vector<Cell> cells_;
};

TEST(ReportMarkup, CostsBelowACentKeepTwoSignificantDigits) {
    EXPECT_EQ(kevo::cost_text(0), "0");
    EXPECT_EQ(kevo::cost_text(1.23456e-5), "1.2e-05");
    EXPECT_EQ(kevo::cost_text(0.0123456), "0.0123");
    EXPECT_EQ(kevo::cost_text(2.5), "2.5000");
}

// The best-so-far curve is the best accepted score, not the last one accepted: islands and
// map-elites accept into one island or cell kernels that score below another's best.
TEST(RunFiguresOf, BestSoFarIsTheBestAcceptedScore) {
    kevo::RunData run;
    const auto row = [](int iteration, double score, bool accepted) {
        kevo::IterationRecord r;
        r.iteration = iteration;
        r.status = kevo::IterationStatus::evaluated;
        r.score = score;
        r.accepted = accepted;
        return r;
    };
    run.iterations = {row(0, 0.5, true), row(1, 0.8, true), row(2, 0.6, true), row(3, 0.9, false), row(4, 0.85, true)};
    const auto f = kevo::run_figures(run);
    ASSERT_EQ(f.best_so_far.size(), 5u);
    const double want[] = {0.5, 0.8, 0.8, 0.8, 0.85};
    for (size_t i = 0; i < 5; ++i) {
        ASSERT_TRUE(f.best_so_far[i]) << i;
        EXPECT_DOUBLE_EQ(*f.best_so_far[i], want[i]) << "iteration " << i;
    }
}

// What escape_html makes of each metacharacter (spelled out here, so that the page tests below
// do not take the function's word for it).
TEST(ReportMarkup, EscapesEveryMetacharacter) {
    EXPECT_EQ(kevo::escape_html("a<b>&\"c\"'d'"), "a&lt;b&gt;&amp;&quot;c&quot;&#39;d&#39;");
    EXPECT_EQ(kevo::escape_html("plain text 1.5x"), "plain text 1.5x");
}

std::string escaped(const std::string& s) { return kevo::escape_html(s); }

TEST(ReportCsv, QuotesOnlyWhatNeedsIt) {
    EXPECT_EQ(kevo::csv_field("plain"), "plain");
    EXPECT_EQ(kevo::csv_field("a,\"b\"\nc"), "\"a,\"\"b\"\"\nc\"");
    EXPECT_EQ(kevo::csv_number(std::nullopt), "");
    EXPECT_EQ(kevo::csv_number(0.1), "0.1") << "shortest exact form";
}

// A run of `task` by `model` whose proposals 1..n were correct or not as given.
kevo::RunData constructed_run(const std::string& task, const std::string& model, const std::vector<bool>& correct) {
    kevo::RunData d;
    d.run.run_id = task + "-" + model;
    d.run.task = task;
    d.run.strategy = "one-plus-one";
    d.run.seed_score = 1.0;
    d.model = model;
    kevo::IterationRecord seed;
    seed.status = kevo::IterationStatus::evaluated, seed.verdict = "ok", seed.score = 1.0, seed.accepted = true;
    d.iterations.push_back(seed);
    for (size_t i = 0; i < correct.size(); ++i) {
        kevo::IterationRecord it;
        it.iteration = static_cast<int>(i + 1);
        it.status = kevo::IterationStatus::evaluated;
        it.verdict = correct[i] ? "ok" : "incorrect";
        if (correct[i]) it.score = 1.0 + static_cast<double>(i);
        d.iterations.push_back(it);
    }
    return d;
}

TEST(ReportData, AModelIsTheStudysTagElseTheLlmModelElseTheProposer) {
    kevo::RunRecord run;
    run.proposer = "llm";
    run.settings = {{"settings", {{"model", "gpt-x"}}}};
    EXPECT_EQ(kevo::run_model(run), "gpt-x");
    run.settings["study"] = {{"study_id", "s1"}, {"cell", "c"}, {"model", "tagged"}};
    EXPECT_EQ(kevo::run_model(run), "tagged");
    run.settings = {{"study", {{"model", 7}}}};  // a tag of another shape is not a model
    EXPECT_EQ(kevo::run_model(run), "llm");
    run.proposer = "tune";
    run.settings = nlohmann::json::object();
    EXPECT_EQ(kevo::run_model(run), "tune");
}

TEST(ReportStats, CorrectnessFollowingTheTaskIsExplainedByTheTaskNotTheModel) {
    kevo::ReportData data;
    // Task a: always correct; task b: never; each model has as many of both.
    for (const char* model : {"m1", "m2"}) {
        data.runs.push_back(constructed_run("a", model, {true, true}));
        data.runs.push_back(constructed_run("b", model, {false, false}));
    }
    auto v = kevo::correctness_variance(data);
    EXPECT_EQ(v.candidates, 8);
    ASSERT_TRUE(v.by_task && v.by_model);
    EXPECT_DOUBLE_EQ(*v.by_task, 1.0);
    EXPECT_DOUBLE_EQ(*v.by_model, 0.0);
    // The other way round when the model decides.
    data.runs.clear();
    for (const char* task : {"a", "b"}) {
        data.runs.push_back(constructed_run(task, "good", {true, true}));
        data.runs.push_back(constructed_run(task, "bad", {false, true}));
    }
    v = kevo::correctness_variance(data);
    ASSERT_TRUE(v.by_task && v.by_model);
    EXPECT_DOUBLE_EQ(*v.by_task, 0.0);
    EXPECT_GT(*v.by_model, 0.3);
    // All alike: nothing to explain.
    data.runs = {constructed_run("a", "m", {true}), constructed_run("b", "n", {true})};
    EXPECT_FALSE(kevo::correctness_variance(data).by_task);
}

// A best that failed its held-out check: the gate stopped at the check, so its in-distribution
// figure is the search's (score 6 over the seed's 1), marked; it is drawn in the strip, not dropped.
// One that failed in distribution on re-check has no figure and is counted as not drawn.
TEST(ReportStats, ABestWrongHeldOutKeepsTheSearchsSpeedupAndIsDrawnApart) {
    kevo::ReportData data;
    data.runs.push_back(constructed_run("a", "m", {true}));
    auto& best = data.runs.back().iterations.back();
    best.candidate_id = 7, best.score = 6.0;
    data.runs.back().run.summary = {{"outcome", "best_failed_gate"},
                                    {"gate", {{{"iteration", 1}, {"candidate_id", 7}, {"passed", false},
                                               {"reason", "heldout-incorrect"}, {"verdict", "incorrect"}}}}};
    data.runs.push_back(constructed_run("b", "m", {true}));
    data.runs.back().iterations.back().candidate_id = 8;
    data.runs.back().run.summary = {{"outcome", "best_failed_gate"},
                                    {"gate", {{{"iteration", 1}, {"candidate_id", 8}, {"passed", false},
                                               {"reason", "recheck-incorrect"}, {"verdict", "incorrect"}}}}};
    const auto f = kevo::run_figures(data.runs[0]);
    ASSERT_TRUE(f.speedup);
    EXPECT_DOUBLE_EQ(*f.speedup, 6.0);
    EXPECT_TRUE(f.speedup_from_search);
    EXPECT_FALSE(f.heldout_speedup);
    const auto recheck = kevo::run_figures(data.runs[1]);
    EXPECT_FALSE(recheck.speedup) << "a best wrong in distribution has no in-distribution figure";
    EXPECT_FALSE(recheck.speedup_from_search);

    const auto rows = kevo::group_rows(data);
    ASSERT_EQ(rows.size(), 2u);
    EXPECT_EQ(rows[0].speedup_from_search, 1);
    const std::string table = kevo::html::results_table(rows);
    EXPECT_EQ(table_cell(table, "a", "m", "speedup"), "6.000*");
    EXPECT_EQ(table_cell(table, "b", "m", "speedup"), "-");
    const std::string scatter = figure_svg(kevo::html::figures_section(data, rows), "generalisation");
    EXPECT_EQ(count(scatter, "class=\"mark apart\""), 1u) << scatter;
    EXPECT_EQ(count(scatter, "class=\"mark point\""), 0u) << scatter;
}

TEST(ReportStats, ACorrectProposalAfterAWrongOneIsARepair) {
    kevo::ReportData data;
    data.runs.push_back(constructed_run("a", "m", {true, false, true, true}));
    const auto s = kevo::repair_stats(data);
    EXPECT_EQ(s.first_try.count, 2);  // iterations 1 (after the seed) and 4
    EXPECT_EQ(s.repaired.count, 1);   // iteration 3
    ASSERT_TRUE(s.repaired.median_speedup);
    EXPECT_DOUBLE_EQ(*s.repaired.median_speedup, 3.0);  // score 3 over the seed's 1
}

TEST_F(ReportStore, StudyPageHoldsTheStoresNumbers) {
    const std::string page = html({"--study", "s-test-1"}, "study.html");
    auto store = kevo::Store::open(db_, kevo::Store::Access::read_only);
    ASSERT_TRUE(store);
    for (const auto& c : cells_) {
        auto run = (*store)->load_run(c.run_id);
        ASSERT_TRUE(run) << run.error().message;
        const auto& best = run->summary["gate"][0];  // the search's best, side by side with the seed
        ASSERT_TRUE(best.is_object()) << run->summary.dump(1);
        const std::string model = escaped(c.model);
        const auto figure = [](const nlohmann::json& v) { return v.is_number() ? fmt::format("{:.3f}", v.get<double>()) : "-"; };
        const std::string reason = best.value("reason", ""), verdict = reason.rfind("recheck-", 0) == 0 ? reason : best["verdict"].get<std::string>();
        // A best that failed its held-out check was not timed by the gate: the figure is the search's
        // score over the seed's, marked. (Whether nbody's third kernel, as fast as its second but wrong
        // held out, is promoted depends on the timing noise; both ways are checked here.)
        std::string speedup = figure(best["speedup"]);
        if (reason.rfind("heldout-", 0) == 0) {
            ASSERT_TRUE(best["speedup"].is_null()) << best.dump();
            auto its = (*store)->load_iterations(c.run_id);
            ASSERT_TRUE(its && run->seed_score);
            for (const auto& it : *its)
                if (it.candidate_id == best["candidate_id"].get<int64_t>() && it.score)
                    speedup = fmt::format("{:.3f}*", *it.score / *run->seed_score);
        }
        EXPECT_EQ(table_cell(page, c.task, model, "speedup"), speedup) << c.task << " " << c.model << " " << best.dump();
        EXPECT_EQ(table_cell(page, c.task, model, "runs"), "1");
        EXPECT_EQ(table_cell(page, c.task, model, "heldout_verdict"), verdict + " 1");
        if (verdict == "ok")
            EXPECT_EQ(table_cell(page, c.task, model, "heldout_speedup"), figure(best["heldout_speedup"]));
        // Candidates by verdict: the evaluated proposals the store holds.
        auto iterations = (*store)->load_iterations(c.run_id);
        ASSERT_TRUE(iterations);
        std::map<std::string, int> verdicts;
        for (const auto& it : *iterations)
            if (it.iteration > 0 && it.status == kevo::IterationStatus::evaluated) ++verdicts[it.verdict];
        std::string expected;
        for (const auto& [v, n] : verdicts) expected += fmt::format("{}{} {}", expected.empty() ? "" : ", ", v, n);
        EXPECT_EQ(table_cell(page, c.task, model, "candidates"), expected.empty() ? "-" : expected);
        EXPECT_EQ(table_cell(page, c.task, model, "tokens"), "0");
    }
    // nbody's replay has kernels about 6x faster than the seed: the search's best is one of them.
    const std::string nbody = table_cell(page, "nbody", escaped(kHostileModel), "speedup");
    EXPECT_GT(std::atof(nbody.c_str()), 1.5) << nbody;
    // One point per (model, task) in the scatter, in the plot or in the strip apart.
    const std::string scatter = figure_svg(page, "generalisation");
    EXPECT_EQ(count(scatter, "class=\"mark point\"") + count(scatter, "class=\"mark apart\""), cells_.size()) << scatter;
    // One best-so-far figure per task, one line per model.
    for (const auto& [task, lines] : {std::pair{"saxpy", 2u}, std::pair{"heat2d", 1u}, std::pair{"nbody", 1u}}) {
        const std::string fig = figure_svg(page, std::string("best-so-far-") + task);
        EXPECT_EQ(count(fig, "class=\"legend\""), lines) << fig;
    }
    // The replayed wrong kernel, then a correct one: one repair per replay run.
    EXPECT_NE(figure_svg(page, "repairs").find("(n=2)</text>"), std::string::npos) << figure_svg(page, "repairs");
    // The study's cells, the one not started included, and the device's ceilings with their source.
    EXPECT_EQ(count(page, "<tr class=\"cell\">"), cells_.size() + 1);
    EXPECT_NE(page.find("not started"), std::string::npos);
    EXPECT_NE(page.find("ceilings: "), std::string::npos);
    EXPECT_NE(page.find("<td class=\"version\">"), std::string::npos);
    // The same store, the same bytes; --study latest is this study.
    EXPECT_EQ(html({"--study", "latest"}, "latest.html"), page);
}

// Per model: the geometric mean of the tasks' S_i (each the median best score of its runs) and,
// with a weights file, S_agg renormalised over the tasks the study ran; the page shows the same.
TEST_F(ReportStore, StudyAggregatesGiveTheGeometricMeanAndSaggPerModel) {
    const std::string weights_file = std::string(KEVO_SOURCE_DIR) + "/tests/data/sci-weights.toml";
    const auto r = run_kevo({"report", "--study", "s-test-1", "--db", db_, "--json", "--weights", weights_file});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto weights = kevo::read_weights_file(weights_file);
    ASSERT_TRUE(weights) << weights.error().message;
    const auto& w_test = weights->vectors[0];
    auto store = kevo::Store::open(db_, kevo::Store::Access::read_only);
    ASSERT_TRUE(store);
    std::map<std::string, std::map<std::string, double>> best;  // model -> task -> the run's best score
    for (const auto& c : cells_) {
        auto run = (*store)->load_run(c.run_id);
        ASSERT_TRUE(run && run->best_score);
        best[c.model][c.task] = *run->best_score;
    }
    const auto doc = r.json();
    ASSERT_EQ(doc["aggregates"].size(), best.size() + 1) << "and model-c's, whose only cell was not started: " << r.out;
    for (const auto& row : doc["aggregates"]) {
        if (!best.count(row["model"].get<std::string>())) {
            EXPECT_EQ(row["gated"], 0);
            EXPECT_TRUE(row["search"]["best"].empty());
            continue;
        }
        const auto& scores = best.at(row["model"].get<std::string>());
        ASSERT_EQ(row["search"]["best"].size(), 1u);
        const auto& a = row["search"]["best"][0];
        EXPECT_EQ(a["pack"], "sci");
        EXPECT_EQ(a["scored"].size(), scores.size());
        double log_sum = 0, weighted = 0, weight = 0;
        for (const auto& [task, s] : scores) {
            log_sum += std::log(s);
            weighted += w_test.find(task)->weight * s;
            weight += w_test.find(task)->weight;
        }
        EXPECT_NEAR(a["geomean"].get<double>(), std::exp(log_sum / scores.size()), 1e-9) << row.dump();
        EXPECT_NEAR(a["weighted"][0]["value"].get<double>(), weighted / weight, 1e-12) << row.dump();
        EXPECT_EQ(a["missing"].size(), 12 - scores.size());
    }
    const auto text = run_kevo({"report", "--study", "s-test-1", "--db", db_});
    EXPECT_NE(text.out.find("one-plus-one, best (search), pack sci ("), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("speed-up in distribution (gate), pack sci ("), std::string::npos) << text.out;
    const std::string page = html({"--study", "s-test-1", "--weights", weights_file}, "aggregates.html");
    EXPECT_EQ(count(page, "<tr class=\"search-aggregate\""), 2 * best.size());
    EXPECT_EQ(count(page, "<tr class=\"aggregate\""), best.size() + 1) << "one per model, and model-c's cell not started";

    // From the gate: each model's speed-up aggregate is the geometric mean of its rows of the gate
    // table (the Results rows), leaving out a best the gate could not time (marked * there), counted.
    auto data = kevo::collect_report_data(**store, {kevo::ReportScope::Kind::study, "s-test-1"});
    ASSERT_TRUE(data);
    std::map<std::string, std::pair<double, int>> logs;  // model -> (sum of logs, tasks)
    std::map<std::string, int> untimed;
    for (const auto& g : kevo::group_rows(*data)) {
        if (g.speedup_from_search) {
            untimed[g.key.model] += g.speedup_from_search;
            continue;
        }
        ASSERT_TRUE(g.speedup) << g.key.task;
        logs[g.key.model].first += std::log(*g.speedup);
        ++logs[g.key.model].second;
    }
    for (const auto& row : doc["aggregates"]) {
        const std::string model = row["model"];
        EXPECT_EQ(row["untimed"], untimed[model]) << row.dump();
        const auto& gate = row["gate"]["speedup"];
        if (!logs.count(model)) {
            EXPECT_TRUE(gate.empty()) << row.dump();
            continue;
        }
        ASSERT_EQ(gate.size(), 1u) << row.dump();
        EXPECT_NEAR(gate[0]["geomean"].get<double>(), std::exp(logs[model].first / logs[model].second), 1e-12) << row.dump();
    }
    // model-c's cell was never started: left out, named.
    const auto all = run_kevo({"report", "--study", "s-test-1", "--db", db_, "--json"}).json();
    bool named = false;
    for (const auto& row : all["aggregates"])
        for (const auto& c : row["left_out"]) named = named || (c["cell"] == "saxpy/model-c/one-plus-one/5" && c["why"] == "not started");
    EXPECT_TRUE(named) << all.dump(1);
    EXPECT_NE(page.find("<span data-vector=\"W_test\">W_test "), std::string::npos);
}

TEST_F(ReportStore, EveryStoredStringIsEscaped) {
    const std::string page = html({"--study", "s-test-1"}, "escape.html");
    for (const std::string& raw : {kHostileModel, kHostileStudyText, kHostileFile})
        EXPECT_EQ(page.find(raw), std::string::npos) << "unescaped: " << raw;
    EXPECT_NE(page.find(escaped(kHostileModel)), std::string::npos);
    EXPECT_NE(page.find(escaped(kHostileStudyText)), std::string::npos) << "the study file, verbatim";
    EXPECT_NE(page.find(escaped("replay " + kHostileFile)), std::string::npos) << "the replay note";
    EXPECT_EQ(count(page, "<script"), 1u) << "only the page's own self-check";
}

TEST_F(ReportStore, PageLoadsInHeadlessChromiumWithEveryFigureDrawn) {
    const auto chromium = kevo::test::find_chromium();
    if (!chromium) {
        if (kevo::test::running_in_ci()) FAIL() << "chromium is not installed (apt-get install chromium); CI must run this test";
        GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium)";
    }
    const std::string page = html({"--study", "s-test-1"}, "browser.html");
    const std::string scratch = path("chromium");
    fs::create_directories(scratch);
    const auto r = kevo::test::run_chromium(*chromium, path("browser.html"), {"--dump-dom"}, scratch);
    ASSERT_TRUE(r.finished) << "chromium did not finish in time\n" << r.log;
    ASSERT_EQ(r.exit_code, 0) << r.log;
    EXPECT_EQ(r.log.find(":CONSOLE"), std::string::npos) << "the page logged to the console:\n" << r.log;
    const auto attribute = [&](const std::string& name) {
        std::smatch m;
        const std::regex re("<body[^>]*\\s" + name + "=\"([0-9]+)\"");
        return std::regex_search(r.dom, m, re) ? std::stoi(m[1]) : -1;
    };
    const int figures = static_cast<int>(count(page, "<svg class=\"figure\""));
    EXPECT_EQ(figures, 7) << "three best-so-far figures, the scatter, the verdict mix, repairs, variance";
    EXPECT_EQ(attribute("data-errors"), 0) << r.dom.substr(0, 2000);
    EXPECT_EQ(attribute("data-figures"), figures);
    EXPECT_EQ(attribute("data-figures-drawn"), figures);
    EXPECT_GT(attribute("data-marks"), 0);
    EXPECT_EQ(attribute("data-marks-drawn"), attribute("data-marks"));
    // Every figure has marks of its own on screen.
    const std::regex per_figure("<svg class=\"figure\"[^>]*data-marks-drawn=\"([0-9]+)\"");
    int seen = 0;
    for (std::sregex_iterator it(r.dom.begin(), r.dom.end(), per_figure), end; it != end; ++it, ++seen)
        EXPECT_GT(std::stoi((*it)[1]), 0) << (*it)[0];
    EXPECT_EQ(seen, figures);
}

TEST_F(ReportStore, CsvTablesReadBackWithPythonsCsvModule) {
    const std::string dir = path("csv");
    fs::remove_all(dir);
    const auto r = run_kevo({"export", "--csv", dir, "--study", "s-test-1", "--db", db_});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const std::string script = path("read.py");
    std::ofstream(script) << "import csv, json, sys\n"
                             "out = {}\n"
                             "for name in ['runs', 'iterations', 'sizes', 'gate', 'aggregates']:\n"
                             "    with open(sys.argv[1] + '/' + name + '.csv', newline='') as f:\n"
                             "        out[name] = list(csv.DictReader(f))\n"
                             "print(json.dumps(out))\n";
    const std::string json_path = path("csv.json");
    ASSERT_EQ(std::system(fmt::format("python3 '{}' '{}' > '{}'", script, dir, json_path).c_str()), 0);
    const auto doc = nlohmann::json::parse(slurp(json_path), nullptr, false);
    ASSERT_TRUE(doc.is_object()) << slurp(json_path);
    auto store = kevo::Store::open(db_, kevo::Store::Access::read_only);
    ASSERT_TRUE(store);
    ASSERT_EQ(doc["runs"].size(), cells_.size());
    size_t iterations = 0, sizes = 0, gate = 0;
    bool hostile_note = false;
    for (const auto& c : cells_) {
        auto its = (*store)->load_iterations(c.run_id);
        auto held = (*store)->load_heldout(c.run_id);
        ASSERT_TRUE(its && held);
        iterations += its->size();
        gate += held->size();
        for (const auto& it : *its) {
            if (it.result.is_object()) sizes += it.result["sizes"].size();
            for (const auto& row : doc["iterations"])
                if (row["run_id"] == c.run_id && row["iteration"] == std::to_string(it.iteration)) {
                    EXPECT_EQ(row["note"], it.note) << "the note, verbatim";
                    EXPECT_EQ(row["status"], kevo::iteration_status_name(it.status));
                    hostile_note = hostile_note || it.note.rfind("replay " + kHostileFile, 0) == 0;
                }
        }
        bool found = false;
        for (const auto& row : doc["runs"])
            if (row["run_id"] == c.run_id) {
                found = true;
                EXPECT_EQ(row["model"], c.model);
                EXPECT_EQ(row["task"], c.task);
                EXPECT_EQ(row["study_id"], "s-test-1");
            }
        EXPECT_TRUE(found) << c.run_id;
    }
    EXPECT_TRUE(hostile_note) << "a note with a comma, quotes and markup came back whole";
    EXPECT_EQ(doc["iterations"].size(), iterations);
    EXPECT_EQ(doc["sizes"].size(), sizes);
    EXPECT_GT(sizes, iterations) << "several sizes per evaluated iteration";
    EXPECT_EQ(doc["gate"].size(), gate);
    // A size row's seconds is the stored median, exactly.
    const auto& first = doc["sizes"][0];
    auto its = (*store)->load_iterations(first["run_id"]);
    ASSERT_TRUE(its);
    const auto& stored = (*its)[std::stoi(first["iteration"].get<std::string>())].result["sizes"][0];
    EXPECT_EQ(std::stod(first["seconds"].get<std::string>()), stored["seconds"].get<double>());
    EXPECT_EQ(first["label"], stored["label"]);
}

TEST_F(ReportStore, ScopeErrorsNameWhatIsAccepted) {
    const auto none = run_kevo({"report", "--db", db_, "--html", path("x.html")});
    EXPECT_EQ(none.exit_code, 2);
    EXPECT_NE(none.err.find("a RUN id, --study ID (or --study latest), --all"), std::string::npos) << none.err;
    const auto unknown = run_kevo({"report", "--study", "s-nope", "--db", db_, "--html", path("x.html")});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("s-nope"), std::string::npos) << unknown.err;
    const auto both = run_kevo({"export", "--csv", path("x"), "--all", cells_[0].run_id, "--db", db_});
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_NE(both.err.find("not several"), std::string::npos) << both.err;
    // A study without --html is its text form (the aggregates), pointing at the page.
    const auto text = run_kevo({"report", "--study", "s-test-1", "--db", db_});
    EXPECT_EQ(text.exit_code, 0) << text.err;
    EXPECT_NE(text.out.find("(the whole report: --html FILE)"), std::string::npos) << text.out;
    // One run's page: its row, and no study section.
    const std::string one = html({cells_[0].run_id}, "one.html");
    EXPECT_EQ(count(one, "<tr class=\"group\""), 1u);
    EXPECT_EQ(one.find("<section id=\"cells\">"), std::string::npos);
}

}  // namespace
