// The command-line contract (CLI.md) through the real binary: seeds evaluate ok with a score in
// text and JSON form, exit statuses, `kevo tasks --json`, `kevo show`, `kevo devices --json`.
#include <gtest/gtest.h>

#include <cctype>
#include <cmath>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "temp_dir.hpp"
#include "task/registry.hpp"

using kevo::test::has_device;
using kevo::test::run_kevo;
using kevo::test::ScopedEnv;
using kevo::test::TempDir;

namespace {

std::string seed_file(const std::string& task, const std::string& suffix) {
    const std::string path = ::testing::TempDir() + task + "_seed." + suffix;
    std::ofstream(path) << kevo::task_file(task, "seed." + suffix);
    return path;
}

class SeedEvaluates : public ::testing::TestWithParam<std::string> {};

TEST_P(SeedEvaluates, OkWithScoreAsJson) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string task = GetParam();
    const auto r = run_kevo({"eval", task, seed_file(task, "cl"), "--backend", "opencl", "--profile", "small", "--json",
                             "--warmup", "1", "--repeat", "3"});
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << "\n" << r.err;
    EXPECT_EQ(r.exit_code, 0) << doc.dump(2);
    EXPECT_EQ(doc["verdict"], "ok") << doc["diagnostics"];
    for (const char* key : {"task", "backend", "device", "profile", "verdict", "diagnostics", "score", "sizes"})
        EXPECT_TRUE(doc.contains(key)) << key;
    EXPECT_EQ(doc["task"], task);
    EXPECT_EQ(doc["backend"], "opencl");
    EXPECT_EQ(doc["profile"], "small");
    ASSERT_TRUE(doc["score"].is_number());
    EXPECT_GT(doc["score"].get<double>(), 0.0);
    ASSERT_EQ(doc["sizes"].size(), 3u);
    double log_sum = 0;
    for (const auto& s : doc["sizes"]) {
        EXPECT_TRUE(s["correct"].get<bool>());
        EXPECT_FALSE(s["heldout"].get<bool>());
        for (const char* key : {"label", "error_kind", "error", "tolerance", "seconds", "seconds_min", "seconds_max",
                                "achieved", "unit", "ceiling", "fraction"})
            EXPECT_TRUE(s.contains(key)) << key;
        EXPECT_GT(s["seconds"].get<double>(), 0);
        EXPECT_LE(s["seconds_min"].get<double>(), s["seconds"].get<double>());
        EXPECT_GE(s["seconds_max"].get<double>(), s["seconds"].get<double>());
        EXPECT_NEAR(s["fraction"].get<double>(), s["achieved"].get<double>() / s["ceiling"].get<double>(), 1e-9);
        log_sum += std::log(s["fraction"].get<double>());
    }
    EXPECT_NEAR(doc["score"].get<double>(), std::exp(log_sum / 3), 1e-9) << "score must be the geometric mean";
}

TEST_P(SeedEvaluates, OkAsTextAndHeldOut) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string task = GetParam();
    const auto r = run_kevo({"eval", task, seed_file(task, "cl"), "--backend", "opencl", "--sizes", "all", "--warmup",
                             "1", "--repeat", "3"});
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("verdict: ok"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("score S ="), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("held-out Phi ="), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("(held-out)"), std::string::npos) << r.out;
}

// Every task of the suite: its OpenCL seed passes its own check on PoCL and scores.
INSTANTIATE_TEST_SUITE_P(Tasks, SeedEvaluates, ::testing::ValuesIn(kevo::task_names()));

TEST(CliContract, UsageAndEnvironmentErrorsExitTwo) {
    const auto seed = seed_file("saxpy", "cl");
    const auto unknown_task = run_kevo({"eval", "nosuchtask", seed});
    EXPECT_EQ(unknown_task.exit_code, 2);
    EXPECT_NE(unknown_task.err.find("nosuchtask"), std::string::npos) << unknown_task.err;
    EXPECT_NE(unknown_task.err.find("saxpy"), std::string::npos) << "should list the known tasks: " << unknown_task.err;

    const auto missing_file = run_kevo({"eval", "saxpy", "/nonexistent/kernel.cl"});
    EXPECT_EQ(missing_file.exit_code, 2);
    EXPECT_NE(missing_file.err.find("/nonexistent/kernel.cl"), std::string::npos) << missing_file.err;

    const auto bad_sizes = run_kevo({"eval", "saxpy", seed, "--sizes", "most"});
    EXPECT_EQ(bad_sizes.exit_code, 2);
    const auto bad_backend = run_kevo({"eval", "saxpy", seed, "--backend", "metal"});
    EXPECT_EQ(bad_backend.exit_code, 2);
    const auto bad_define = run_kevo({"eval", "saxpy", seed, "--define", "NOEQUALS"});
    EXPECT_EQ(bad_define.exit_code, 2);
    const auto no_command = run_kevo({});
    EXPECT_EQ(no_command.exit_code, 2);
    const auto bad_device = run_kevo({"eval", "saxpy", seed, "--backend", "opencl", "--device", "99"});
    EXPECT_EQ(bad_device.exit_code, 2);
    EXPECT_NE(bad_device.err.find("out of range"), std::string::npos) << bad_device.err;
    const auto help = run_kevo({"eval", "--help"});
    EXPECT_EQ(help.exit_code, 0);
}

// Issue 10, items 16, 17 and 19: the command line's own mistakes are usage errors (exit 2) that name
// the bad input, never compile errors of a candidate, and --json still prints one document.
TEST(CliContract, MistypedCommandsAndOptionsAreNamed) {
    const auto typo = run_kevo({"evl", "saxpy"});
    EXPECT_EQ(typo.exit_code, 2);
    EXPECT_NE(typo.err.find("unknown command 'evl'"), std::string::npos) << typo.err;
    EXPECT_NE(typo.err.find("Did you mean 'eval'?"), std::string::npos) << typo.err;
    const auto far = run_kevo({"frobnicate"});
    EXPECT_EQ(far.exit_code, 2);
    EXPECT_EQ(far.err.find("Did you mean"), std::string::npos) << far.err;
    EXPECT_NE(far.err.find("eval, run"), std::string::npos) << "should list the commands: " << far.err;

    const auto seed = seed_file("saxpy", "cl");
    for (const char* bad : {"nan", "inf", "-1", "1e9", "soon"}) {
        const auto r = run_kevo({"eval", "saxpy", seed, "--timeout", bad});
        EXPECT_EQ(r.exit_code, 2) << bad << ": " << r.err;
        EXPECT_NE(r.err.find("--timeout"), std::string::npos) << bad << ": " << r.err;
    }
    const auto nan_cv = run_kevo({"eval", "saxpy", seed, "--noise-cv", "nan"});
    EXPECT_EQ(nan_cv.exit_code, 2) << nan_cv.err;
}

TEST(CliContract, JsonErrorPathsPrintOneJsonDocument) {
    const auto missing = run_kevo({"eval", "saxpy", "/nonexistent/kernel.cl", "--json"});
    EXPECT_EQ(missing.exit_code, 2);
    const auto doc = missing.json();
    ASSERT_TRUE(doc.is_object()) << "stdout: " << missing.out;
    EXPECT_EQ(doc["error"]["exit_status"], 2);
    EXPECT_NE(doc["error"]["message"].get<std::string>().find("/nonexistent/kernel.cl"), std::string::npos) << doc.dump();
    const auto parse_error = run_kevo({"eval", "saxpy", "--json", "--repeat", "zero"});
    EXPECT_EQ(parse_error.exit_code, 2);
    EXPECT_TRUE(parse_error.json().is_object()) << "stdout: " << parse_error.out;
    EXPECT_TRUE(run_kevo({"nosuch", "--json"}).json().contains("error"));
}

TEST(CliContract, OneValuePerDefine) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto seed = seed_file("saxpy", "cl");
    // -D before the positionals must not swallow them.
    const auto r = run_kevo({"eval", "-D", "BLOCK=128", "saxpy", seed, "-D", "PT=2", "--check-only", "--json"});
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    EXPECT_EQ(doc["verdict"], "ok") << doc.dump(2);
    EXPECT_EQ(doc["defines"]["BLOCK"], "128");
    EXPECT_EQ(doc["defines"]["PT"], "2");
}

TEST(CliContract, AFileInAnotherBackendsLanguageIsAUsageError) {
    const std::string cu = ::testing::TempDir() + "saxpy_seed_for_backend.cu";
    std::ofstream(cu) << kevo::task_file("saxpy", "seed.cu");
    const auto wrong = run_kevo({"eval", "saxpy", cu, "--backend", "opencl"});
    EXPECT_EQ(wrong.exit_code, 2) << wrong.out << wrong.err;
    EXPECT_NE(wrong.err.find("is a CUDA C++ file (.cu), but --backend opencl compiles OpenCL C"), std::string::npos)
        << wrong.err;
    const auto bad_arch = run_kevo({"eval", "saxpy", cu, "--compile-only", "--arch", "sm_9x"});
    EXPECT_EQ(bad_arch.exit_code, 2) << bad_arch.err;
    EXPECT_NE(bad_arch.err.find("--arch 'sm_9x'"), std::string::npos) << bad_arch.err;
    // A target means compile-only: an evaluation compiles for its device, so --arch alone is refused.
    const auto arch_alone = run_kevo({"eval", "saxpy", cu, "--arch", "sm_80"});
    EXPECT_EQ(arch_alone.exit_code, 2) << arch_alone.err;
    EXPECT_NE(arch_alone.err.find("only --compile-only takes a target"), std::string::npos) << arch_alone.err;
    // Under --backend auto the extension decides: a .cu file is compiled by NVRTC, not as OpenCL.
    const auto nvrtc = run_kevo({"eval", "saxpy", cu, "--compile-only", "--json"});
    if (nvrtc.exit_code == 0) EXPECT_EQ(nvrtc.json()["backend"], "cuda") << nvrtc.out;
    else EXPECT_EQ(nvrtc.exit_code, 2) << "NVRTC absent must be an environment error: " << nvrtc.err;
}

TEST(CliContract, UndeclaredKnobIsARejection) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto r = run_kevo({"eval", "saxpy", seed_file("saxpy", "cl"), "--backend", "opencl", "--define", "NOPE=3", "--json"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.json()["verdict"], "rejected");
    EXPECT_NE(r.json()["diagnostics"].get<std::string>().find("NOPE"), std::string::npos);
}

// The device-reference path (used by large sizes whose CPU reference would be too slow): the task's
// seed, run on the device, is the reference; a correct kernel passes against it, a wrong one fails.
TEST(CliContract, DeviceReferencePathJudgesCandidates) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto good = run_kevo({"eval", "heat2d", seed_file("heat2d", "cl"), "--backend", "opencl", "--reference", "device",
                                "--sizes", "all", "--check-only", "--json", "--seed", "21"});
    EXPECT_EQ(good.exit_code, 0) << good.out << good.err;
    EXPECT_EQ(good.json()["verdict"], "ok");
    const auto bad = run_kevo({"eval", "heat2d", kevo::test::candidate("heat2d_wrong_formula.cl"), "--backend", "opencl",
                               "--reference", "device", "--check-only", "--json", "--seed", "21"});
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_EQ(bad.json()["verdict"], "incorrect") << bad.out;
    const auto hardcoded = run_kevo({"eval", "heat2d", kevo::test::candidate("heat2d_hardcoded_alpha.cl"), "--backend",
                                     "opencl", "--reference", "device", "--check-only", "--json", "--seed", "21"});
    EXPECT_EQ(hardcoded.json()["verdict"], "incorrect") << "the outlier trial must also use the device reference";
}

TEST(CliContract, AGridBeyondTheDeviceIsRejected) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    std::string source(kevo::task_file("heat2d", "seed.cl"));
    source.replace(source.find("// kevo: launch heat_step block=BX,BY"), 37, "// kevo: launch heat_step block=16,16 grid=4000000000");
    const std::string path = ::testing::TempDir() + "heat2d_huge_grid.cl";
    std::ofstream(path) << source;
    const auto r = run_kevo({"eval", "heat2d", path, "--backend", "opencl", "--check-only", "--json"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.json()["verdict"], "rejected") << r.out;
    EXPECT_NE(r.json()["diagnostics"].get<std::string>().find("grid of 4000000000"), std::string::npos) << r.out;
}

TEST(CliContract, TasksJsonListsSizesAndHeldOut) {
    const auto r = run_kevo({"tasks", "--json"});
    ASSERT_EQ(r.exit_code, 0);
    const auto doc = r.json();
    ASSERT_TRUE(doc["tasks"].is_array());
    bool saw_heat2d = false;
    for (const auto& t : doc["tasks"]) {
        for (const char* key : {"name", "regime", "kernels", "bound", "model", "profiles"}) EXPECT_TRUE(t.contains(key)) << key;
        for (const char* profile : {"small", "paper", "large"}) {
            const auto& sizes = t["profiles"][profile]["sizes"];
            ASSERT_EQ(sizes.size(), 4u) << t["name"] << " " << profile;
            int heldout = 0;
            for (const auto& s : sizes) heldout += s["heldout"].get<bool>();
            EXPECT_EQ(heldout, 1);
        }
        if (t["name"] == "heat2d") {
            saw_heat2d = true;
            EXPECT_EQ(t["profiles"]["paper"]["sizes"][0]["params"]["nx"], 256);
            EXPECT_EQ(t["profiles"]["paper"]["sizes"][0]["params"]["steps"], 50);
        }
    }
    EXPECT_TRUE(saw_heat2d);
}

// The text fits a 100-column terminal (review-newcomer defect 23: it was 260 wide): one row per
// task, then its sizes (of the profile --profile picks) and its model on indented lines below it.
TEST(CliContract, TasksTextFitsHundredColumnsAndProfilePicksTheSizes) {
    for (const char* profile : {"paper", "large"}) {
        const auto r = run_kevo({"tasks", "--profile", profile});
        ASSERT_EQ(r.exit_code, 0) << r.err;
        std::istringstream lines(r.out);
        std::string line;
        std::getline(lines, line);
        EXPECT_EQ(line.rfind("task ", 0), 0u) << line;
        std::vector<std::string> rows;  // each task's row with its detail lines, joined by spaces
        while (std::getline(lines, line)) {
            EXPECT_LE(line.size(), 100u) << line;
            if (line.empty() || line.front() == '(') continue;
            if (line.front() != ' ') rows.push_back(line);
            else if (!rows.empty()) rows.back() += " " + line.substr(line.find_first_not_of(' '));
        }
        ASSERT_EQ(rows.size(), kevo::task_names().size()) << r.out;
        for (const auto& row : rows) {
            auto task = kevo::make_task(row.substr(0, row.find(' ')));
            ASSERT_TRUE(task) << row;
            const auto& spec = (*task)->spec();
            EXPECT_NE(row.find(std::string(profile) + " sizes: " + spec.profiles.at(profile).front().label), std::string::npos) << row;
            EXPECT_NE(row.find("model: " + spec.model), std::string::npos) << row;
            EXPECT_NE(row.find(spec.regime), std::string::npos) << row;
        }
    }
    const auto doc = run_kevo({"tasks", "--profile", "small", "--json"}).json();
    ASSERT_TRUE(doc.is_object());
    for (const auto& t : doc["tasks"]) {
        EXPECT_TRUE(t["profiles"].contains("small")) << t.dump();
        EXPECT_EQ(t["profiles"].size(), 1u) << t["name"];
    }
    EXPECT_EQ(run_kevo({"tasks", "--profile", "huge"}).exit_code, 2);
}

// The eval table fits its longest label (a held-out size) and its numbers; under --roofline
// workload the footer says the ceiling column is the workload roofline, and quotes the static
// peaks as static (before, it printed them as "ceilings" under a column that showed other values).
TEST(CliContract, EvalTableLinesUpAndTheFooterAgreesWithTheRoofline) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    // Its own cache: the text and the JSON run below must read the same calibration, which a test
    // running beside it in the shared test cache may re-measure in between.
    TempDir dir;
    ScopedEnv cache("KEVO_CACHE_DIR", dir.file("cache"));
    const auto file = seed_file("heat2d", "cl");
    const std::vector<std::string> args = {"eval", "heat2d", file, "--backend", "opencl", "--profile", "small", "--sizes", "all",
                                           "--warmup", "1", "--repeat", "3", "--seed", "3", "--roofline", "workload"};
    const auto r = run_kevo(args);
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    std::istringstream lines(r.out);
    std::string line, header;
    std::vector<std::string> rows;
    while (std::getline(lines, line)) {
        if (line.starts_with("size ")) header = line;
        else if (!header.empty() && rows.size() < 4) rows.push_back(line);
    }
    ASSERT_FALSE(header.empty()) << r.out;
    ASSERT_EQ(rows.size(), 4u) << r.out;
    const size_t correct_at = header.find("correct"), fraction_end = header.find("fraction") + 8;
    for (const auto& row : rows) {
        EXPECT_EQ(row.find("yes"), correct_at) << "misaligned:\n" << header << "\n" << row;
        // The fraction, right-aligned, ends where its header ends.
        ASSERT_GE(row.size(), fraction_end) << row;
        EXPECT_TRUE(std::isdigit(static_cast<unsigned char>(row[fraction_end - 1])) &&
                    (row.size() == fraction_end || row[fraction_end] == ' '))
            << "misaligned:\n" << header << "\n" << row;
    }
    EXPECT_NE(rows.back().find("(held-out)"), std::string::npos) << rows.back();
    EXPECT_NE(r.out.find("ceiling column: workload roofline"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("; static ceilings: "), std::string::npos) << r.out;
    // Each size's ceiling in the table is the JSON document's (the workload one).
    auto json_args = args;
    json_args.push_back("--json");
    const auto doc = run_kevo(json_args).json();
    ASSERT_TRUE(doc.is_object());
    for (const auto& s : doc["sizes"]) {
        EXPECT_EQ(s["ceiling"], s["ceiling_workload"]);
        EXPECT_NE(r.out.find(fmt::format("{:.1f} GB/s", s["ceiling_workload"].get<double>())), std::string::npos)
            << s["ceiling_workload"] << "\n" << r.out;
    }
    // The default (static) footer is the plain ceilings line.
    auto static_args = args;
    static_args.back() = "static";
    const auto plain = run_kevo(static_args);
    EXPECT_EQ(plain.out.find("ceiling column: workload roofline"), std::string::npos) << plain.out;
    EXPECT_NE(plain.out.find("\nceilings: "), std::string::npos) << plain.out;
}

// `// kevo: <prose>` is an ordinary comment: the kernel evaluates, with a note in its warnings.
TEST(CliContract, AProseKevoCommentDoesNotRejectAKernel) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string path = ::testing::TempDir() + "saxpy_prose_comment.cl";
    std::ofstream(path) << "// kevo: this kernel is naive\n" << kevo::task_file("saxpy", "seed.cl");
    const auto r = run_kevo({"eval", "saxpy", path, "--backend", "opencl", "--profile", "small", "--check-only", "--json"});
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    EXPECT_EQ(doc["verdict"], "ok") << doc.dump(2);
    bool noted = false;
    for (const auto& w : doc["warnings"]) noted |= w.get<std::string>().find("`// kevo: this` is not a directive") != std::string::npos;
    EXPECT_TRUE(noted) << doc["warnings"].dump();
    // A known directive with bad syntax is still a rejection.
    std::ofstream(path) << "// kevo: launch saxpy block=0\n" << kevo::task_file("saxpy", "seed.cl");
    const auto bad = run_kevo({"eval", "saxpy", path, "--backend", "opencl", "--profile", "small", "--check-only", "--json"});
    EXPECT_EQ(bad.json()["verdict"], "rejected") << bad.out;
}

TEST(CliContract, ShowPrintsSeedAndBrief) {
    const auto seed = run_kevo({"show", "heat2d", "--backend", "opencl"});
    EXPECT_EQ(seed.exit_code, 0);
    EXPECT_NE(seed.out.find("__kernel void heat_step"), std::string::npos) << seed.out;
    const auto cuda = run_kevo({"show", "heat2d", "--backend", "cuda"});
    EXPECT_EQ(cuda.exit_code, 0);
    EXPECT_NE(cuda.out.find("extern \"C\" __global__ void heat_step"), std::string::npos) << cuda.out;
    const auto brief = run_kevo({"show", "heat2d", "--brief"});
    EXPECT_EQ(brief.exit_code, 0);
    EXPECT_NE(brief.out.find("heat_step"), std::string::npos);
    EXPECT_EQ(run_kevo({"show", "nosuchtask"}).exit_code, 2);
}

TEST(CliContract, DevicesJsonNamesEveryBackend) {
    const auto r = run_kevo({"devices", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = r.json();
    std::vector<std::string> names;
    for (const auto& b : doc["backends"]) {
        names.push_back(b["name"]);
        if (b["devices"].empty()) EXPECT_FALSE(b["reason"].get<std::string>().empty()) << "zero devices must say why";
    }
    EXPECT_EQ(names, (std::vector<std::string>{"cuda", "opencl"}));
}

}  // namespace
