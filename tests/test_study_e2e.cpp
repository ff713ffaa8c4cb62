// A whole study end to end, as a researcher runs one: 2 tasks x {tune, replay} x the three
// strategies x 2 seeds through `kevo sweep`, killed with SIGKILL mid-way and run again to the end;
// then its HTML report (loaded in headless chromium, every figure drawn) and its CSV tables, checked
// against the store. On scripted evaluations (kevo_scripted; each made to last 30 ms until the kill):
// what is checked is the study's bookkeeping and its figures, not the kernels (a sweep of real kernels
// on PoCL is test_sweep's).
#include <gtest/gtest.h>

#include <sys/wait.h>

#include <algorithm>
#include <cmath>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "headless_browser.hpp"
#include "kevo_process.hpp"
#include "run_support.hpp"
#include "scripted_evaluator.hpp"
#include "store/store.hpp"

namespace {

namespace fs = std::filesystem;
using kevo::test::run_kevo;
using kevo::test::slurp;

std::string temp_path(const std::string& name) { return kevo::test::temp_path("kevo_study_e2e", name); }

const std::vector<std::string> kTasks = {"saxpy", "heat2d"};
const std::vector<std::string> kModels = {"tuner", "replayed"};
const std::vector<std::string> kStrategies = {"one-plus-one", "islands", "map-elites"};
constexpr int kSeeds = 2, kIterations = 2;
constexpr size_t kCells = 2 * 2 * 3 * kSeeds;

// Per task: the best-known kernel, twice the seed's speed, then a variant of the seed as fast as it.
std::string replay_folders() {
    const fs::path root = temp_path("cands");
    fs::remove_all(root);
    for (const auto& task : kTasks) {
        fs::create_directories(root / task);
        const std::string dir = std::string(KEVO_SOURCE_DIR) + "/tasks/" + task;
        std::ofstream(root / task / "01.cl") << kevo::test::scripted(slurp(dir + "/best.cl"), "speed=2");
        std::ofstream(root / task / "02.cl") << kevo::test::scripted(slurp(dir + "/seed.cl"), "speed=1");
    }
    return root.string();
}

std::string write_study(int device) {
    const std::string file = temp_path("study.toml");
    std::ofstream(file) << fmt::format(
        "name = \"matrix\"\nprofile = \"small\"\nbackend = \"opencl\"\ndevice = {}\n"
        "tasks = [\"saxpy\", \"heat2d\"]\nstrategies = [\"one-plus-one\", \"islands\", \"map-elites\"]\n"
        "seeds = [1, 2]\nconcurrency = 1\n[budget]\niterations = {}\n[run]\nwarmup = 1\nrepeat = 3\nmax_repeat = 6\ngate_rounds = 1\n"
        "timeout = 60\n[[models]]\nname = \"tuner\"\nproposer = \"tune\"\n"
        "[[models]]\nname = \"replayed\"\nproposer = \"replay\"\nreplay = \"{}/{{task}}\"\n",
        device, kIterations, replay_folders());
    return file;
}

size_t runs_in(const std::string& db) {
    auto store = kevo::Store::open(db, kevo::Store::Access::read_only);
    if (!store) return 0;
    auto runs = (*store)->list_runs();
    return runs ? runs->size() : 0;
}

int body_attribute(const std::string& dom, const std::string& name) {
    std::smatch m;
    return std::regex_search(dom, m, std::regex("<body[^>]*\\s" + name + "=\"([0-9]+)\"")) ? std::stoi(m[1]) : -1;
}

TEST(StudyEndToEnd, KilledMidwayResumesToTheEndAndItsReportAndTablesAreChecked) {
    const std::string study = write_study(0), db = temp_path("study.db"), out = temp_path("out");
    fs::remove(db);
    const std::vector<std::string> sweep = {"sweep", study, "--db", db, "--out", out};

    // Killed once a few cells have runs: mid-way through the matrix.
    const pid_t pid = kevo::test::spawn_scripted_kevo(sweep, temp_path("killed.log"), 30);
    ASSERT_GT(pid, 0);
    for (int i = 0; i < 6000 && runs_in(db) < 4; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
    ::kill(pid, SIGKILL);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const size_t started = runs_in(db);
    ASSERT_GE(started, 4u) << slurp(temp_path("killed.log"));
    ASSERT_LT(started, kCells) << "the kill came after the end";

    const auto resumed = kevo::test::run_scripted_kevo(sweep);
    ASSERT_EQ(resumed.exit_code, 0) << resumed.out << resumed.err;
    EXPECT_NE(resumed.out.find(fmt::format("{} of {} cells finished, 0 failed", kCells, kCells)), std::string::npos)
        << resumed.out;

    auto store = kevo::Store::open(db, kevo::Store::Access::read_only);
    ASSERT_TRUE(store.has_value());
    auto studies = (*store)->list_studies();
    ASSERT_TRUE(studies && studies->size() == 1u);
    auto cells = (*store)->load_study_cells(studies->front().study_id);
    ASSERT_TRUE(cells.has_value());
    ASSERT_EQ(cells->size(), kCells);
    std::set<std::string> strategies, models;
    for (const auto& c : *cells) {
        ASSERT_TRUE(c.run_id.has_value()) << c.cell;
        auto run = (*store)->load_run(*c.run_id);
        ASSERT_TRUE(run.has_value()) << c.cell;
        EXPECT_EQ(run->status, kevo::RunStatus::finished) << c.cell;
        EXPECT_EQ(run->strategy, c.strategy) << c.cell;
        auto rows = (*store)->load_iterations(*c.run_id);
        ASSERT_TRUE(rows.has_value());
        ASSERT_EQ(rows->size(), static_cast<size_t>(kIterations + 1)) << c.cell << ": the seed and each iteration once";
        for (const auto& row : *rows)
            if (row.iteration > 0 && c.strategy != "one-plus-one")
                EXPECT_TRUE(row.strategy.is_object()) << c.cell << " iteration " << row.iteration << ": no strategy record";
        strategies.insert(c.strategy);
        models.insert(c.model);
    }
    EXPECT_EQ(strategies, std::set<std::string>(kStrategies.begin(), kStrategies.end()));
    EXPECT_EQ(models, std::set<std::string>(kModels.begin(), kModels.end()));
    EXPECT_EQ((*store)->list_runs()->size(), kCells) << "no cell was run twice";

    // The report: one page, a row per (task, model, strategy) of the results table, every figure drawn.
    const std::string page = temp_path("report.html");
    const auto report = run_kevo({"report", "--study", "latest", "--html", page, "--db", db});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const std::string html = slurp(page);
    EXPECT_NE(html.find("name = &quot;matrix&quot;"), std::string::npos) << "the study file, verbatim";
    for (const auto& c : *cells) EXPECT_NE(html.find(*c.run_id), std::string::npos) << c.cell;
    const auto chromium = kevo::test::find_chromium();
    if (chromium) {
        const std::string scratch = temp_path("chromium");
        fs::create_directories(scratch);
        const auto r = kevo::test::run_chromium(*chromium, page, {"--dump-dom"}, scratch);
        ASSERT_TRUE(r.finished) << r.log;
        EXPECT_EQ(r.log.find(":CONSOLE"), std::string::npos) << r.log;
        EXPECT_GT(body_attribute(r.dom, "data-figures"), 0);
        EXPECT_EQ(body_attribute(r.dom, "data-figures-drawn"), body_attribute(r.dom, "data-figures"));
        EXPECT_EQ(body_attribute(r.dom, "data-marks-drawn"), body_attribute(r.dom, "data-marks"));
    } else if (kevo::test::running_in_ci()) {
        ADD_FAILURE() << "chromium is not installed (apt-get install chromium); CI must load the page";
    }

    // The tables: a row per run, and per iteration of every run.
    const std::string dir = temp_path("csv");
    fs::remove_all(dir);
    const auto exported = run_kevo({"export", "--csv", dir, "--study", "latest", "--db", db});
    ASSERT_EQ(exported.exit_code, 0) << exported.err;
    const auto lines = [](const std::string& text) {
        size_t n = 0;
        for (char ch : text) n += ch == '\n';
        return n;
    };
    EXPECT_EQ(lines(slurp(dir + "/runs.csv")), kCells + 1) << "a header and a row per run (no field holds a newline)";
    const std::string runs_csv = slurp(dir + "/runs.csv");
    for (const auto& s : kStrategies) EXPECT_NE(runs_csv.find("," + s + ","), std::string::npos) << s;
    EXPECT_TRUE(fs::exists(dir + "/iterations.csv") && fs::exists(dir + "/sizes.csv") && fs::exists(dir + "/gate.csv"));

    // The aggregates are the gate's: per (model, strategy), the geometric mean over tasks of the
    // median side-by-side speed-up of the runs' first gate examination, computed here from the
    // stored summaries; the page's results table shows each of those medians.
    std::map<std::pair<std::string, std::string>, std::map<std::string, std::vector<double>>> gate_speedups;
    for (const auto& c : *cells) {
        auto run = (*store)->load_run(*c.run_id);
        ASSERT_TRUE(run.has_value());
        const auto& first = run->summary["gate"][0];
        if (first["speedup"].is_number()) gate_speedups[{c.model, c.strategy}][c.task].push_back(first["speedup"]);
    }
    const auto doc = run_kevo({"report", "--study", "latest", "--db", db, "--json"}).json();
    ASSERT_TRUE(doc.is_object() && doc["aggregates"].is_array()) << doc.dump(1);
    size_t checked = 0;
    for (const auto& row : doc["aggregates"]) {
        const auto key = std::pair{row["model"].get<std::string>(), row["strategy"].get<std::string>()};
        ASSERT_TRUE(gate_speedups.count(key)) << row.dump();
        double log_sum = 0;
        for (auto [task, values] : gate_speedups.at(key)) {
            std::sort(values.begin(), values.end());
            const size_t m = values.size() / 2;
            const double median = values.size() % 2 ? values[m] : (values[m - 1] + values[m]) / 2;
            log_sum += std::log(median);
            const std::string row_start = fmt::format("<tr class=\"group\" data-task=\"{}\" data-model=\"{}\" data-strategy=\"{}\"",
                                                      task, key.first, key.second);
            const size_t at = html.find(row_start);
            ASSERT_NE(at, std::string::npos) << row_start;
            const std::string cell = "<td data-col=\"speedup\">" + fmt::format("{:.3f}", median) + "</td>";
            EXPECT_LT(html.find(cell, at), html.find("</tr>", at)) << task << " " << key.first << " " << key.second;
        }
        const auto& gate = row["gate"]["speedup"];
        ASSERT_EQ(gate.size(), 1u) << row.dump();
        EXPECT_NEAR(gate[0]["geomean"].get<double>(), std::exp(log_sum / gate_speedups.at(key).size()), 1e-12) << row.dump();
        ++checked;
    }
    EXPECT_EQ(checked, kModels.size() * kStrategies.size());
}

}  // namespace
