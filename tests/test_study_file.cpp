// The study file (docs/study.md): both spellings read into the same study; every bad field is an
// error naming the file, the line, the key and what is accepted; unknown keys are errors; the
// matrix is checked (tasks, strategies, replay folders, a countable cost cap) before anything runs;
// `kevo sweep --dry-run` prints the cells and their command lines, storing nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "study/study_file.hpp"

namespace {

namespace fs = std::filesystem;
using kevo::parse_study;
using kevo::test::run_kevo;

const char* kMinimal = R"(
tasks = ["saxpy"]
[[models]]
name = "tuner"
proposer = "tune"
)";

std::string error_of(const std::string& text) {
    auto study = parse_study(text, "dir/study.toml");
    return study ? std::string("(parsed)") : study.error().message;
}

TEST(StudyFile, MinimalStudyTakesTheDefaults) {
    auto study = parse_study(kMinimal, "some/tiny.toml");
    ASSERT_TRUE(study.has_value()) << study.error().message;
    EXPECT_EQ(study->name, "tiny");  // the file's stem
    EXPECT_EQ(study->backend, "auto");
    EXPECT_EQ(study->strategies, std::vector<std::string>{"one-plus-one"});
    EXPECT_EQ(study->seeds, std::vector<int64_t>{1});
    EXPECT_EQ(study->budget.iterations, 20);
    ASSERT_EQ(kevo::study_cells(*study).size(), 1u);
    EXPECT_EQ(kevo::study_cells(*study)[0].key, "saxpy/tuner/one-plus-one/1");
}

TEST(StudyFile, BothSpellingsGiveTheSameStudy) {
    const std::string docs = R"(
name = "demo"
profile = "small"
backend = "opencl"
tasks = ["heat2d", "saxpy"]
strategies = ["one-plus-one"]
seeds = [1, 2]
[budget]
iterations = 8
max_cost_usd = 0.5
max_wall_s = 60
max_tokens = 1000
[[models]]
name = "tuner"
proposer = "tune"
[[models]]
name = "model-a"
proposer = "llm"
base_url = "http://127.0.0.1:4000/v1"
model = "model-a"
price_in = 3.0
price_out = 15
)";
    const std::string cli_md = R"(
[study]
name = "demo"
backend = "opencl"
profile = "small"
tasks = ["heat2d", "saxpy"]
strategies = ["one-plus-one"]
seeds = [1, 2]
iterations = 8
max_cost = 0.5
max_wall = 60
max_tokens = 1000
[[proposer]]
name = "tuner"
kind = "tune"
[[proposer]]
name = "model-a"
kind = "llm"
base_url = "http://127.0.0.1:4000/v1"
model = "model-a"
price_in = 3.0
price_out = 15.0
)";
    auto a = parse_study(docs, "a.toml"), b = parse_study(cli_md, "b.toml");
    ASSERT_TRUE(a.has_value()) << a.error().message;
    ASSERT_TRUE(b.has_value()) << b.error().message;
    EXPECT_EQ(nlohmann::json(*a), nlohmann::json(*b));
    EXPECT_EQ(kevo::study_cells(*a).size(), 2u * 2 * 1 * 2);
    EXPECT_TRUE(kevo::study_differences(nlohmann::json(*a), *b).empty());
}

TEST(StudyFile, EveryBadFieldNamesFileLineKeyAndWhatIsAccepted) {
    struct Case {
        std::string text, expected;
    };
    const std::string model = "\n[[models]]\nname = \"t\"\nproposer = \"tune\"\n";
    const std::vector<Case> cases = {
        {"tasks = [\"saxpy\"]\nprofile = \"huge\"" + model, "dir/study.toml:2: the study file profile must be one of \"small\", \"paper\", \"large\""},
        {"tasks = [\"saxpy\"]\nbackend = \"metal\"" + model, ":2: the study file backend must be one of \"auto\", \"cuda\", \"opencl\""},
        {"tasks = [\"saxpy\"]\ndevice = -1" + model, ":2: the study file device must be an integer from 0 to 2147483647"},
        {"tasks = [\"nosuch\"]" + model, "tasks: unknown task \"nosuch\"; the tasks are: "},
        {"tasks = []" + model, ":1: the study file tasks must be a non-empty array of strings"},
        {"tasks = [\"saxpy\", \"saxpy\"]" + model, "tasks names \"saxpy\" twice"},
        {"pack = \"nosuch\"" + model, "pack must be one of \"sci\""},
        {"tasks = [\"saxpy\"]\npack = \"sci\"" + model, "pack and tasks both choose the tasks"},
        {model, "needs tasks = [\"...\"] or pack = \"NAME\" (one of: sci"},
        {"tasks = [\"saxpy\"]\nstrategies = [\"islandz\"]" + model, "unknown strategy \"islandz\"; the strategies are: one-plus-one"},
        {"tasks = [\"saxpy\"]\nseeds = [1, -2]" + model, ":2: the study file seeds must be a non-empty array of distinct integers"},
        {"tasks = [\"saxpy\"]\nseeds = [3, 3]" + model, "seeds names 3 twice"},
        {"tasks = [\"saxpy\"]\nconcurrency = 0" + model, "concurrency must be an integer from 1 to 64"},
        {"tasks = [\"saxpy\"]\nitertions = 3" + model, ":2: the study file itertions is not a key of the study file; the keys are: "},
        {"tasks = [\"saxpy\"]\n[budget]\niterations = -1" + model, ":3: [budget] iterations must be an integer from 0 to 100000"},
        {"tasks = [\"saxpy\"]\n[budget]\nmax_cost = \"a lot\"" + model, ":3: [budget] max_cost must be a number from 0 to"},
        {"tasks = [\"saxpy\"]\n[budget]\nmax_cost = 1\nmax_cost_usd = 1" + model, "[budget] max_cost is the same key as max_cost_usd"},
        {"tasks = [\"saxpy\"]\n[budget]\nwall = 1" + model, ":3: [budget] wall is not a key of [budget]; the keys are: iterations, max_tokens"},
        {"tasks = [\"saxpy\"]\n[run]\nrepeat = 0" + model, ":3: [run] repeat must be an integer from 1 to 10000"},
        {"tasks = [\"saxpy\"]\n[run]\nnoise_cv = 11" + model, ":3: [run] noise_cv must be a number from 0 to 10"},
        {"tasks = [\"saxpy\"]\n[run]\nroofline = \"dynamic\"" + model, "[run] roofline must be one of \"static\", \"workload\""},
        {"tasks = [\"saxpy\"]\n[run]\nwarm_up = 2" + model, "[run] warm_up is not a key of [run]; the keys are: language, max_proposer_failures, stagnation, knowledge, knowledge_tokens, gate_rounds, gate_top, warmup"},
        {"tasks = [\"saxpy\"]", "the study names no model"},
        {"tasks = [\"saxpy\"]\n[[models]]\nproposer = \"tune\"", "[[models]] #1 name must be given"},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"a/b\"\nproposer = \"tune\"", "[[models]] #1 name must be given, made of letters"},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"gpt\"", ":4: [[models]] #1 proposer must be one of: tune, llm, cmd, replay"},
        {"tasks = [\"saxpy\"]" + model + model, "[[models]] #2: the name \"t\" is taken by another model"},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"tune\"\nbase_url = \"http://h/v1\"", ":5: [[models]] #1 base_url applies to proposer llm, not tune"},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"llm\"\nmodel = \"m\"", "[[models]] #1 (proposer llm) needs base_url = "},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"llm\"\nmodel = \"m\"\nbase_url = \"ftp://h\"", "only http:// and https:// URLs"},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"llm\"\nmodel = \"m\"\nbase_url = \"http://h/v1\"\ntemperature = 3", ":7: [[models]] #1 temperature must be a number from 0 to 2, or \"none\""},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"llm\"\nmodel = \"m\"\nbase_url = \"http://h/v1\"\nstream = \"yes\"", "stream must be true or false"},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"llm\"\nmodel = \"m\"\nbase_url = \"http://h/v1\"\napi_key = \"sk-1\"", "[[models]] #1 api_key is not a key of [[models]] #1"},
        {"tasks = [\"saxpy\"]\n[budget]\nmax_cost = 1\n[[models]]\nname = \"x\"\nproposer = \"llm\"\nmodel = \"m\"\nbase_url = \"http://h/v1\"", "the budget's cost cap (1 USD) needs model x's prices"},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"cmd\"", "[[models]] #1 (proposer cmd) needs command = "},
        {"tasks = [\"saxpy\"]\n[[models]]\nname = \"x\"\nproposer = \"replay\"\nreplay = \"nowhere/{task}\"", "/dir/nowhere/saxpy for task saxpy: no such folder"},
        {"tasks = [\"saxpy\"\n" + model, ": not valid TOML"},
    };
    for (const auto& c : cases) {
        const std::string error = error_of(c.text);
        EXPECT_NE(error.find(c.expected), std::string::npos) << "study:\n" << c.text << "\nerror: " << error;
        EXPECT_EQ(error.rfind("dir/study.toml", 0), 0u) << error;
    }
}

TEST(StudyFile, ReplayFoldersAreRelativeToTheStudyFile) {
    const auto dir = fs::path(kevo::test::temp_path("study_file", "replays"));
    fs::create_directories(dir / "cands" / "saxpy");
    const std::string text = "tasks = [\"saxpy\"]\n[[models]]\nname = \"r\"\nproposer = \"replay\"\nreplay = \"cands/{task}\"\n";
    auto study = parse_study(text, (dir / "s.toml").string());
    ASSERT_TRUE(study.has_value()) << study.error().message;
    EXPECT_EQ(kevo::replay_folder(study->models[0], "saxpy"), (dir / "cands" / "saxpy").string());
    const auto args = kevo::run_arguments(*study, kevo::study_cells(*study)[0], {"k.db", "out", "s1", "r1"});
    auto at = std::find(args.begin(), args.end(), "--replay");
    ASSERT_NE(at, args.end());
    EXPECT_EQ(*(at + 1), (dir / "cands" / "saxpy").string());
}

// [run] from: each task's starting kernel, {task} substituted, relative to the study file, checked
// to exist for every task before anything runs.
TEST(StudyFile, StartKernelsAreRelativeToTheStudyFileAndMustExist) {
    const auto dir = fs::path(kevo::test::temp_path("study_file", "from"));
    fs::create_directories(dir / "kernels");
    std::ofstream(dir / "kernels" / "saxpy.cl") << "// a kernel\n";
    const std::string text = "tasks = [\"saxpy\", \"heat2d\"]\n[run]\nfrom = \"kernels/{task}.cl\"\n"
                             "[[models]]\nname = \"t\"\nproposer = \"tune\"\n";
    auto missing = parse_study(text, (dir / "s.toml").string());
    ASSERT_FALSE(missing.has_value());
    EXPECT_NE(missing.error().message.find("[run] from names " + (dir / "kernels" / "heat2d.cl").string() +
                                           " for task heat2d: no such file"),
              std::string::npos)
        << missing.error().message;
    std::ofstream(dir / "kernels" / "heat2d.cl") << "// a kernel\n";
    auto study = parse_study(text, (dir / "s.toml").string());
    ASSERT_TRUE(study.has_value()) << study.error().message;
    for (const auto& cell : kevo::study_cells(*study)) {
        const auto args = kevo::run_arguments(*study, cell, {"k.db", "out", "s1", "r1"});
        auto at = std::find(args.begin(), args.end(), "--from");
        ASSERT_NE(at, args.end());
        EXPECT_EQ(*(at + 1), (dir / "kernels" / (cell.task + ".cl")).string());
    }
}

TEST(StudyFile, DifferencesNameWhatChangedAndIgnoreConcurrency) {
    auto a = parse_study(std::string("concurrency = 1\n") + kMinimal, "s.toml");
    auto b = parse_study(std::string("concurrency = 3\n") + kMinimal + "[budget]\niterations = 9\n", "s.toml");
    ASSERT_TRUE(a.has_value()) << a.error().message;
    ASSERT_TRUE(b.has_value()) << b.error().message;
    const auto d = kevo::study_differences(nlohmann::json(*a), *b);
    ASSERT_EQ(d.size(), 1u);
    EXPECT_EQ(d[0], "budget.iterations: 20 stored, 9 in the file");
}

TEST(StudyFile, DryRunPrintsTheMatrixAndStoresNothing) {
    const std::string file = kevo::test::temp_path("study_file", "dry.toml"), db = kevo::test::temp_path("study_file", "dry.db");
    std::ofstream(file) << "name = \"dry\"\ntasks = [\"saxpy\", \"heat2d\"]\nseeds = [1, 2]\n[budget]\niterations = 3\n"
                           "[run]\nrepeat = 3\nmax_repeat = 6\nnoise_cv = 0.2\n[[models]]\nname = \"tuner\"\nproposer = \"tune\"\n";
    fs::remove(db);
    const auto r = run_kevo({"sweep", file, "--dry-run", "--db", db, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out;
    ASSERT_EQ(doc["cells"].size(), 4u);
    EXPECT_EQ(doc["cells"][0]["cell"], "saxpy/tuner/one-plus-one/1");
    EXPECT_EQ(doc["cells"][3]["cell"], "heat2d/tuner/one-plus-one/2");
    const auto command = doc["cells"][1]["command"].get<std::vector<std::string>>();
    for (const char* word : {"run", "saxpy", "--seed", "2", "--iterations", "3", "--repeat", "--proposer", "tune", "--study"})
        EXPECT_NE(std::find(command.begin(), command.end(), word), command.end()) << word;
    for (const auto& [flag, value] : {std::pair{"--max-repeat", "6"}, std::pair{"--noise-cv", "0.2"}}) {
        const auto at = std::find(command.begin(), command.end(), flag);
        ASSERT_NE(at, command.end()) << flag;
        EXPECT_EQ(*(at + 1), value) << flag;
    }
    EXPECT_FALSE(fs::exists(db)) << "a dry run stores nothing";
    const auto text = run_kevo({"sweep", file, "--dry-run", "--db", db});
    EXPECT_EQ(text.exit_code, 0);
    EXPECT_NE(text.out.find("study dry: 2 tasks x 1 models x 1 strategies x 2 seeds = 4 cells"), std::string::npos) << text.out;
    const auto bad = run_kevo({"sweep", file + ".missing", "--dry-run"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find(".missing"), std::string::npos) << bad.err;
}

}  // namespace
