// `kevo report --html` and `kevo export --csv` on a real store: `kevo run`s on scripted evaluations
// (kevo_scripted: the real commands, loop, gate and SQLite store; the kernels' results scripted, so the
// store is the same every time: the tuner on saxpy and heat2d, the replay proposer on saxpy and nbody,
// small profile), a study row with its cells, and runs tagged with the study's cell and model the way
// `kevo sweep` tags them. The page's table must hold
// the store's numbers, its scatter one point per (model, task), every hostile string escaped; the
// page must load in headless chromium without errors with every figure drawn; the CSV files must
// read back with Python's csv module to what the store holds.
#include <fcntl.h>
#include <sys/file.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
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
#include "scripted_evaluator.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

using kevo::test::run_kevo;
using kevo::test::run_scripted_kevo;
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

// One store shared by the tests: four runs, a study over them, and a --from run outside it. ctest runs each test in its own
// process, so the store is built once per kevo binary: under a lock, in a folder every process of
// the test run shares, and marked complete with the binary's identity.
class ReportStore : public ::testing::Test {
protected:
    static void SetUpTestSuite() {
        // One folder per kevo binary: two build trees testing at once must not rebuild each other's store.
        const fs::path dir = fs::path(::testing::TempDir()) /
                             fmt::format("kevo_report_html_fixture_{:016x}", std::hash<std::string>{}(KEVO_SCRIPTED_BINARY));
        fs::create_directories(dir);
        const int lock = ::open((dir / "lock").c_str(), O_CREAT | O_RDWR, 0644);
        ::flock(lock, LOCK_EX);
        db_ = (dir / "study.db").string();
        const std::string marker = (dir / "complete.json").string(), key = binary_identity();
        const auto done = nlohmann::json::parse(slurp(marker), nullptr, false);
        if (done.is_object() && done.value("binary", "") == key) {
            for (const auto& c : done["cells"])
                cells_.push_back({c["task"].get<std::string>(), c["model"].get<std::string>(), c["run_id"].get<std::string>()});
            from_run_ = done.value("from_run", "");
        } else {
            fs::remove(marker);
            setup_error_ = build_store();
            nlohmann::json cells = nlohmann::json::array();
            for (const auto& c : cells_) cells.push_back({{"task", c.task}, {"model", c.model}, {"run_id", c.run_id}});
            if (setup_error_.empty())
                std::ofstream(marker) << nlohmann::json{{"binary", key}, {"cells", cells}, {"from_run", from_run_}}.dump();
        }
        ::flock(lock, LOCK_UN);
        ::close(lock);
    }

    // The scripted kevo's size and modification time: a rebuilt one builds the store again.
    static std::string binary_identity() {
        const auto size = fs::file_size(KEVO_SCRIPTED_BINARY);
        const auto time = fs::last_write_time(KEVO_SCRIPTED_BINARY).time_since_epoch().count();
        return fmt::format("{}:{}", size, time);
    }

    static std::string build_store() {
        for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(db_ + suffix);
        cells_.clear();
        // saxpy's replay: a wrong kernel, then a correct one (a repair), then another correct one
        // under a hostile file name. nbody's: a wrong kernel, then one 6x faster (a repair), then one
        // faster still that is wrong only at the held-out size (the search's best, which the gate rejects).
        const std::string seed(kevo::task_file("saxpy", "seed.cl")), nbody_seed(kevo::task_file("nbody", "seed.cl"));
        // (A variant differs in code, not only in a comment: a comment-only copy is the seed's duplicate.)
        const auto variant = [&seed](const std::string& from, const std::string& to, const std::string& script) {
            std::string text = seed;
            text.replace(text.find(from), from.size(), to);
            return kevo::test::scripted(text, script);
        };
        const auto nbody_scripted = [&nbody_seed](const std::string& script) { return kevo::test::scripted(nbody_seed, script); };
        const std::string saxpy = replay_dir("saxpy-replay", {{"10-wrong.cl", kevo::test::scripted(seed, "verdict=incorrect")},
                                                              {"11-variant.cl", variant("#define PT 1", "#define PT 2", "speed=1.3")},
                                                              {kHostileFile, variant("#define BLOCK 256", "#define BLOCK 128", "speed=1.1")}});
        const std::string nbody = replay_dir("nbody-replay", {{"10-wrong.cl", nbody_scripted("verdict=incorrect")},
                                                              {"11-lanes8.cl", nbody_scripted("speed=6")},
                                                              {"12-pow2-mask.cl", nbody_scripted("speed=7 heldout=incorrect")}});
        for (const auto& [task, proposer, dir] : {std::tuple{"saxpy", "tune", ""}, std::tuple{"saxpy", "replay", saxpy.c_str()},
                                                  std::tuple{"heat2d", "tune", ""}, std::tuple{"nbody", "replay", nbody.c_str()}}) {
            const bool replay = std::string(proposer) == "replay";
            std::vector<std::string> args = {"run", task, "--backend", "opencl", "--profile", "small", "--proposer", proposer,
                                             "--iterations", replay ? "3" : "2", "--seed", "5", "--warmup", "1", "--repeat", "5",
                                             "--gate-rounds", "1", "--db", db_, "--out", path("out"), "--json"};
            if (replay) args.insert(args.end(), {"--replay", dir});
            const auto r = run_scripted_kevo(args);
            const auto s = r.json();
            if (!s.is_object() || !s.contains("run_id"))
                return fmt::format("kevo run {} {} failed ({}): {}", task, proposer, r.exit_code, r.err);
            cells_.push_back({task, replay ? kHostileModel : "model-a", s["run_id"]});
        }
        if (std::string error = from_run(variant("#define PT 1", "#define PT 4", "speed=1.2")); !error.empty()) return error;
        return tag_study();
    }

    // A run outside the study that starts at the user's own kernel (--from): its iteration 1 is that
    // kernel, no proposal.
    static std::string from_run(const std::string& kernel) {
        const std::string file = path("my_saxpy.cl");
        std::ofstream(file) << kernel;
        const auto r = run_scripted_kevo({"run", "saxpy", "--backend", "opencl", "--profile", "small",
                                 "--proposer", "tune", "--iterations", "1", "--from", file, "--seed", "5", "--warmup", "1",
                                 "--repeat", "5", "--gate-rounds", "1", "--db", db_, "--out", path("out"), "--json"});
        const auto s = r.json();
        if (!s.is_object() || !s.contains("run_id")) return fmt::format("kevo run --from failed ({}): {}", r.exit_code, r.err);
        from_run_ = s["run_id"];
        return {};
    }

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

    static inline std::string db_, setup_error_, from_run_;
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

// A group row through the gate with these medians (correct held out).
kevo::GroupRow gated_row(const std::string& task, const std::string& model, double speedup, double heldout) {
    kevo::GroupRow r;
    r.key = {task, model, "one-plus-one"};
    r.run_ids = {task + "-" + model};
    r.speedup = speedup, r.heldout_speedup = heldout;
    r.gated = r.heldout_correct = 1;
    r.heldout_verdicts["ok"] = 1;
    return r;
}

// The attribute `name` of each scatter mark (in order), and the mark's drawn place.
struct DrawnMark {
    std::string series, tag, x, y, shape, place;
};
std::vector<DrawnMark> scatter_marks(const std::string& svg) {
    const std::regex re("<path class=\"mark point\" data-series=\"([^\"]*)\" data-tag=\"([^\"]*)\" data-label=\"[^\"]*\" "
                        "data-x=\"([^\"]*)\" data-spread=\"[a-z]*\" transform=\"translate\\(([^)]*)\\)\" data-y=\"([^\"]*)\" "
                        "data-shape=\"([^\"]*)\"");
    std::vector<DrawnMark> out;
    for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it)
        out.push_back({(*it)[1], (*it)[2], (*it)[3], (*it)[5], (*it)[6], (*it)[4]});
    return out;
}

// Two models at the same place (1, 1) on one task: both marks are drawn, apart, in their own shape,
// each tied to its task by a visible label and to its group by its tooltip; the caption says so.
TEST(ReportFigures, CoincidentScatterPointsStayVisibleAndLabelled) {
    const std::vector<kevo::GroupRow> rows = {gated_row("heat2d", "m1", 1.0, 1.0), gated_row("heat2d", "m2", 1.0, 1.0),
                                              gated_row("saxpy", "m1", 2.0, 1.5)};
    const std::string scatter = figure_svg(kevo::html::figures_section({}, rows), "generalisation");
    const auto marks = scatter_marks(scatter);
    ASSERT_EQ(marks.size(), 3u) << scatter;
    const auto& a = marks[0];
    const auto& b = marks[1];
    EXPECT_EQ(a.tag, "heat2d");
    EXPECT_EQ(b.tag, "heat2d");
    EXPECT_EQ(a.x, "1");
    EXPECT_EQ(b.x, "1");
    EXPECT_EQ(a.y, b.y);
    EXPECT_NE(a.series, b.series);
    EXPECT_NE(a.place, b.place) << "coincident marks are drawn spread apart";
    EXPECT_NE(a.shape, b.shape) << "and in distinct shapes";
    // Spread far enough that neither covers the other (markers are about 10 pixels wide).
    double ax, ay, bx, by;
    ASSERT_EQ(std::sscanf(a.place.c_str(), "%lf %lf", &ax, &ay), 2);
    ASSERT_EQ(std::sscanf(b.place.c_str(), "%lf %lf", &bx, &by), 2);
    EXPECT_GE(std::hypot(ax - bx, ay - by), 12.0);
    EXPECT_EQ(marks[2].tag, "saxpy");
    EXPECT_NE(scatter.find("data-spread=\"no\""), std::string::npos) << "a mark alone stays where it belongs";
    // Visible labels: one per distinct task of a cluster.
    EXPECT_EQ(count(scatter, ">heat2d</text>"), 1u) << scatter;
    EXPECT_EQ(count(scatter, ">saxpy</text>"), 1u) << scatter;
    EXPECT_NE(scatter.find("<title>heat2d / m1: 1.00x in distribution, 1.00x held out"), std::string::npos) << scatter;
    EXPECT_NE(scatter.find("<title>heat2d / m2: 1.00x in distribution"), std::string::npos) << scatter;
    EXPECT_NE(scatter.find("Points that coincide are drawn spread"), std::string::npos);
    // The legend shows each group's shape.
    EXPECT_EQ(count(scatter, "<g class=\"legend\"><title>m"), 2u);
}

// The variance figure holds the shares that can be computed; where none can, no chart is drawn and
// a sentence says what is missing.
TEST(ReportFigures, VarianceIsDrawnOnlyWhereItCanBeComputed) {
    const auto section = [](const kevo::ReportData& data) { return kevo::html::figures_section(data, kevo::group_rows(data)); };
    kevo::ReportData data;
    for (const char* model : {"m1", "m2"})
        for (const char* task : {"a", "b"}) data.runs.push_back(constructed_run(task, model, {true, false}));
    std::string page = section(data);
    std::string fig = figure_svg(page, "variance");
    EXPECT_EQ(count(fig, "<rect class=\"mark\""), 2u) << fig;
    EXPECT_EQ(page.find("class=\"not-drawn\""), std::string::npos);

    // One model: the model's share is not drawn (it would read 0), and the caption says why.
    data.runs = {constructed_run("a", "m1", {true, false}), constructed_run("b", "m1", {true, true})};
    page = section(data);
    fig = figure_svg(page, "variance");
    EXPECT_EQ(count(fig, "<rect class=\"mark\""), 1u) << fig;
    EXPECT_NE(fig.find("data-series=\"by task\""), std::string::npos) << fig;
    EXPECT_NE(fig.find("Not drawn: by model."), std::string::npos) << fig;
    EXPECT_NE(fig.find("on 2 tasks (a, b) by 1 model (m1)"), std::string::npos) << fig;

    // All correct, one task, one model: no chart, the reason in words.
    data.runs = {constructed_run("a", "m1", {true, true, true})};
    page = section(data);
    EXPECT_EQ(figure_svg(page, "variance"), "");
    EXPECT_EQ(page.find("aria-label=\"Correctness variance explained\""), std::string::npos);
    EXPECT_NE(page.find("<p class=\"not-drawn\" id=\"fig-variance\"><b>Correctness variance explained</b>: not drawn. It "
                        "needs correct and incorrect proposals"),
              std::string::npos)
        << page;
    EXPECT_NE(page.find("in this report all 3 evaluated proposals were correct, on 1 task (a) by 1 model (m1).</p>"),
              std::string::npos)
        << page;
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
        // score over the seed's, marked (nbody's third kernel, the fastest, wrong held out).
        std::string speedup = figure(best["speedup"]);
        if (c.task == "nbody") EXPECT_EQ(reason, "heldout-incorrect") << best.dump();
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
    // Each tied to its task and group: by its tag (drawn beside it) and its tooltip.
    for (const auto& c : cells_) {
        const std::string mark = fmt::format("data-series=\"{}\" data-tag=\"{}\" data-label=\"{} / {}: ", escaped(c.model),
                                             c.task, c.task, escaped(c.model));
        EXPECT_EQ(count(scatter, mark), 1u) << mark << "\n" << scatter;
        EXPECT_NE(scatter.find(fmt::format("<text class=\"point-label\" data-tag=\"{}\"", c.task)), std::string::npos) << c.task;
    }
    // Which figures are the gate's and which the search's own, said where they stand.
    EXPECT_NE(scatter.find(escaped("speed-up of the search's best (gate, x seed)")), std::string::npos);
    EXPECT_NE(figure_svg(page, "best-so-far-saxpy").find(escaped("The search's own scores")), std::string::npos);
    EXPECT_NE(figure_svg(page, "repairs").find(escaped("the search's own in-distribution score")), std::string::npos);
    EXPECT_NE(page.find("gate speed-up "), std::string::npos) << "the runs' summaries";
    // Two models, three tasks, correct and wrong proposals: both shares of the variance are drawn.
    EXPECT_EQ(count(figure_svg(page, "variance"), "<rect class=\"mark\""), 2u) << figure_svg(page, "variance");
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

// Loads the page in chromium and checks that it drew `figures` figures, each with marks on screen.
void expect_drawn_in_chromium(const std::string& chromium, const std::string& file, const std::string& page, int figures) {
    const std::string scratch = path("chromium");
    fs::create_directories(scratch);
    const auto r = kevo::test::run_chromium(chromium, file, {"--dump-dom"}, scratch);
    ASSERT_TRUE(r.finished) << "chromium did not finish in time\n" << r.log;
    ASSERT_EQ(r.exit_code, 0) << r.log;
    EXPECT_EQ(r.log.find(":CONSOLE"), std::string::npos) << "the page logged to the console:\n" << r.log;
    const auto attribute = [&](const std::string& name) {
        std::smatch m;
        const std::regex re("<body[^>]*\\s" + name + "=\"([0-9]+)\"");
        return std::regex_search(r.dom, m, re) ? std::stoi(m[1]) : -1;
    };
    EXPECT_EQ(static_cast<int>(count(page, "<svg class=\"figure\"")), figures) << file;
    EXPECT_EQ(attribute("data-errors"), 0) << r.dom.substr(0, 2000);
    EXPECT_EQ(attribute("data-figures"), figures);
    EXPECT_EQ(attribute("data-figures-drawn"), figures);
    EXPECT_GT(attribute("data-marks"), 0);
    EXPECT_EQ(attribute("data-marks-drawn"), attribute("data-marks"));
    // Every figure has marks of its own on screen: none is an empty chart.
    const std::regex per_figure("<svg class=\"figure\"[^>]*data-marks-drawn=\"([0-9]+)\"");
    int seen = 0;
    for (std::sregex_iterator it(r.dom.begin(), r.dom.end(), per_figure), end; it != end; ++it, ++seen)
        EXPECT_GT(std::stoi((*it)[1]), 0) << (*it)[0];
    EXPECT_EQ(seen, figures);
}

TEST_F(ReportStore, PageLoadsInHeadlessChromiumWithEveryFigureDrawn) {
    const auto chromium = kevo::test::find_chromium();
    if (!chromium) {
        if (kevo::test::running_in_ci()) FAIL() << "chromium is not installed (apt-get install chromium); CI must run this test";
        GTEST_SKIP() << "chromium is not installed (Debian: apt-get install chromium)";
    }
    const std::string page = html({"--study", "s-test-1"}, "browser.html");
    // Three best-so-far figures, the scatter, the verdict mix, repairs, variance (two models, three tasks).
    expect_drawn_in_chromium(*chromium, path("browser.html"), page, 7);
    // One run (one task, one model): the variance cannot be computed, and is said in words, not drawn empty.
    const std::string one = html({from_run_}, "browser-one.html");
    ASSERT_NE(one.find("<p class=\"not-drawn\" id=\"fig-variance\">"), std::string::npos);
    expect_drawn_in_chromium(*chromium, path("browser-one.html"), one, 4);
}

// A --from run: iteration 1 is the user's kernel, not a proposal; its bar in the verdict mix has its
// own colour and legend entry, so that no bar is blank.
TEST_F(ReportStore, TheFromKernelHasItsOwnBarInTheVerdictMix) {
    auto store = kevo::Store::open(db_, kevo::Store::Access::read_only);
    ASSERT_TRUE(store);
    auto its = (*store)->load_iterations(from_run_);
    ASSERT_TRUE(its);
    ASSERT_GE(its->size(), 3u);
    ASSERT_EQ((*its)[1].status, kevo::IterationStatus::from);
    const std::string fig = figure_svg(html({from_run_}, "from.html"), "verdict-mix");
    EXPECT_EQ(count(fig, "data-series=\"the --from kernel\" data-category=\"1\""), 1u) << fig;
    EXPECT_EQ(count(fig, "<g class=\"legend\"><title>the --from kernel</title>"), 1u) << fig;
    EXPECT_NE(fig.find("iteration 1 holds the user&#39;s own kernel"), std::string::npos) << fig;
    for (const auto& it : *its)
        if (it.iteration > 0)
            EXPECT_GE(count(fig, fmt::format("data-category=\"{}\"", it.iteration)), 1u) << "a blank bar at " << it.iteration;
}

// The aggregates name the missing tasks in a collapsed list, a count in the table.
TEST_F(ReportStore, AggregatesCountTheMissingTasksAndCollapseTheirNames) {
    const std::string weights_file = std::string(KEVO_SOURCE_DIR) + "/tests/data/sci-weights.toml";
    const std::string page = html({"--study", "s-test-1", "--weights", weights_file}, "missing.html");
    const size_t at = page.find("<section id=\"aggregates\">");
    ASSERT_NE(at, std::string::npos);
    const std::string section = page.substr(at, page.find("</section>", at) - at);
    EXPECT_EQ(section.find("missing: "), std::string::npos) << "no long inline list";
    // model-a ran saxpy and heat2d: 2 of the pack's 12 tasks, 10 missing, named only when opened.
    const std::regex scored("<tr class=\"aggregate\" data-model=\"model-a\"[^\n]*<td data-col=\"scored\">2 of 12<details "
                            "class=\"names\" title=\"([^\"]*)\"><summary>missing 10</summary>([^<]*)</details>");
    std::smatch m;
    ASSERT_TRUE(std::regex_search(section, m, scored)) << section;
    EXPECT_EQ(m[1], m[2]);
    EXPECT_EQ(std::string(m[1]).find("saxpy"), std::string::npos);
    EXPECT_EQ(count(m[1], ", "), 9u) << m[1];
    EXPECT_NE(section.find("of its weight)<details class=\"names\""), std::string::npos) << section;
    EXPECT_TRUE(std::regex_search(section, std::regex("<summary>missing [0-9]+ tasks? of weight &gt; 0</summary>"))) << section;
    // model-c's one cell was not started: counted, named when opened.
    EXPECT_NE(section.find("<summary>1 cell: not started 1</summary>saxpy/model-c/one-plus-one/5 not started</details>"),
              std::string::npos)
        << section;
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
