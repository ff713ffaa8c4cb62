// The CLI contract points of the newcomer review (shared/research/review-newcomer.md, issue 25
// item 8), each against the real kevo binary, a real SQLite store and, where a kernel runs, PoCL.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "search/knob_defaults.hpp"
#include "store/store.hpp"
#include "temp_dir.hpp"

namespace kevo::test {
namespace {

namespace fs = std::filesystem;

// An empty kevo store at `path` (the schema, no runs), closed again: no -wal/-shm stays beside it.
void make_store(const std::string& path) {
    auto store = Store::open(path);
    ASSERT_TRUE(store) << store.error().message;
}

// Defect 5: --html FILE --json prints one JSON document naming the page.
TEST(CliReview, ReportHtmlWithJsonPrintsOneDocument) {
    TempDir dir("review-html");
    const std::string db = dir.file("k.db"), page = dir.file("all.html");
    make_store(db);
    const auto r = run_kevo({"report", "--all", "--html", page, "--json", "--db", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << "stdout: '" << r.out << "'";
    EXPECT_EQ(doc.value("html", ""), page);
    EXPECT_TRUE(fs::is_regular_file(page));
}

// Defect 15: a bad number names the value and what is accepted (no 309-digit bound, no "not in
// range" for a word); a taken --run-id says to resume it; "an OpenCL C file".
TEST(CliReview, ErrorTextsNameTheValueAndWhatIsAccepted) {
    auto r = run_kevo({"run", "saxpy", "--repeat", "abc"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--repeat: 'abc' is not a whole number; accepted: 1 to 10000"), std::string::npos) << r.err;
    r = run_kevo({"report", "x", "--iteration", "-1"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--iteration: -1 is out of range; accepted: 0 or more"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("1797693134862"), std::string::npos) << r.err;
    r = run_kevo({"eval", "saxpy", std::string(KEVO_SOURCE_DIR) + "/tasks/saxpy/seed.cl", "--backend", "cuda", "--compile-only"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("is an OpenCL C file (.cl)"), std::string::npos) << r.err;
}

// Defect 15: a --run-id that exists is refused before anything runs, saying how to continue it.
TEST(CliReview, ExistingRunIdSaysResume) {
    TempDir dir("review-runid");
    const std::string db = dir.file("k.db");
    {
        auto store = Store::open(db);
        ASSERT_TRUE(store) << store.error().message;
        RunRecord run;
        run.run_id = "taken";
        run.task = "saxpy";
        ASSERT_TRUE((*store)->create_run(run));
        auto again = (*store)->create_run(run);
        ASSERT_FALSE(again);
        EXPECT_NE(again.error().message.find("run 'taken' exists already in " + db + "; continue it with kevo run --resume taken"),
                  std::string::npos)
            << again.error().message;
        EXPECT_EQ(again.error().message.find("UNIQUE"), std::string::npos) << again.error().message;
    }
}

// Defect 14: options the run does not use warn by name (before anything runs: here the --out
// folder cannot be written, so the command stops right after its warnings).
TEST(CliReview, InapplicableOptionsWarn) {
    TempDir dir("review-warn");
    const auto r = run_kevo({"run", "saxpy", "--proposer", "tune", "--islands", "3", "--model", "m", "--migration-every", "2",
                             "--db", dir.file("k.db"), "--out", "/proc/kevo-no-such/out", "--json"});
    EXPECT_EQ(r.exit_code, 2) << r.err;  // with --json the warnings are on stderr
    EXPECT_NE(r.err.find("warning: --islands applies to --strategy islands; this run's strategy is one-plus-one"),
              std::string::npos)
        << r.err;
    EXPECT_NE(r.err.find("warning: --migration-every applies to --strategy islands"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("warning: --model applies to --proposer llm; this run's proposer is tune"), std::string::npos) << r.err;
    const auto quiet = run_kevo({"run", "saxpy", "--proposer", "tune", "--strategy", "islands", "--islands", "3", "--db",
                                 dir.file("k.db"), "--out", "/proc/kevo-no-such/out", "--json"});
    EXPECT_EQ(quiet.err.find("warning:"), std::string::npos) << quiet.err;
}

// Defect 14: --weights of a pack no reported task is in says that it changes nothing.
TEST(CliReview, WeightsOfAnotherPackWarn) {
    TempDir dir("review-weights");
    const std::string db = dir.file("k.db");
    {
        auto store = Store::open(db);
        ASSERT_TRUE(store) << store.error().message;
        RunRecord run;
        run.run_id = "sci1";
        run.task = "saxpy";
        run.backend = "opencl";
        run.profile = "small";
        run.proposer = "tune";
        run.strategy = "one-plus-one";
        ASSERT_TRUE((*store)->create_run(run));
    }
    const std::string ml_weights = std::string(KEVO_SOURCE_DIR) + "/packs/ml/weights.toml";
    ASSERT_TRUE(fs::is_regular_file(ml_weights));
    const auto r = run_kevo({"report", "sci1", "--weights", ml_weights, "--db", db});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("warning: --weights " + ml_weights + " holds weights of pack ml, which no task reported here (saxpy)"),
              std::string::npos)
        << r.out;
    // Defect 17: the run's text names its strategy; --all has outcome and strategy columns.
    EXPECT_NE(r.out.find("strategy one-plus-one"), std::string::npos) << r.out;
    const auto all = run_kevo({"report", "--all", "--db", db});
    ASSERT_EQ(all.exit_code, 0) << all.err;
    std::istringstream lines(all.out);
    std::string header, row;
    std::getline(lines, header);
    std::getline(lines, row);
    EXPECT_NE(header.find("outcome"), std::string::npos) << header;
    EXPECT_NE(header.find("strategy"), std::string::npos) << header;
    EXPECT_EQ(row.find("one-plus-one"), header.find("strategy")) << header << "\n" << row;
}

// Defect 9: a store in a folder the reader cannot write (an archived or shared store) is read.
// Run as root, kevo is started as nobody (root may write any folder).
TEST(CliReview, ReadOnlyStoreInReadOnlyFolderIsRead) {
    TempDir dir("review-ro");
    const fs::path folder = dir.path() / "archive";
    fs::create_directories(folder);
    const std::string db = (folder / "shared.db").string();
    make_store(db);
    ASSERT_FALSE(fs::exists(db + "-wal"));
    fs::permissions(db, fs::perms::owner_read | fs::perms::group_read | fs::perms::others_read);
    fs::permissions(folder, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                                fs::perms::others_read | fs::perms::others_exec);
    fs::permissions(dir.path(), fs::perms::others_read | fs::perms::others_exec, fs::perm_options::add);
    ProcessResult r;
    if (::geteuid() == 0) {
        if (!fs::exists("/usr/bin/setpriv")) GTEST_SKIP() << "running as root without setpriv: cannot read as another user";
        const std::string log = dir.file("nobody.log");
        std::vector<std::string> words = {"/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", KEVO_BINARY,
                                          "report", "--all", "--json", "--db", db};
        std::vector<char*> argv;
        for (auto& w : words) argv.push_back(w.data());
        argv.push_back(nullptr);
        const pid_t pid = spawn_in_own_group(words[0].c_str(), argv.data(), environ, log);
        ASSERT_GT(pid, 0);
        int status = 0;
        ::waitpid(pid, &status, 0);
        r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        r.out = slurp(log);
    } else {
        r = run_kevo({"report", "--all", "--json", "--db", db});
    }
    fs::permissions(folder, fs::perms::owner_all);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    EXPECT_NE(r.out.find("\"runs\""), std::string::npos) << r.out << r.err;
    EXPECT_EQ(r.out.find("readonly"), std::string::npos) << r.out;
    EXPECT_FALSE(fs::exists(db + "-wal"));
}

// Defect 21: --compile-only names no profile or correctness seed (nothing ran); OpenCL, which
// reports no register count, says n/a rather than -1.
TEST(CliReview, EvalTextSaysOnlyWhatItMeasured) {
    const std::string seed_cu = std::string(KEVO_SOURCE_DIR) + "/tasks/saxpy/seed.cu";
    auto r = run_kevo({"eval", "saxpy", seed_cu, "--backend", "cuda", "--compile-only"});
    if (r.exit_code == 2) GTEST_SKIP() << "no CUDA compiler: " << r.err;
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("saxpy on "), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("profile"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("seed "), std::string::npos) << r.out;
    EXPECT_NE(r.err.find("compiling " + seed_cu), std::string::npos) << r.err;
    if (!has_device("opencl")) return;
    r = run_kevo({"eval", "saxpy", std::string(KEVO_SOURCE_DIR) + "/tasks/saxpy/seed.cl", "--backend", "opencl", "--profile",
                  "small", "--check-only"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("registers=n/a"), std::string::npos) << r.out;
    EXPECT_EQ(r.out.find("registers=-1"), std::string::npos) << r.out;
}

// Defect 18: runs the gate never judged (interrupted, failed) are named in the HTML's runs count.
TEST(CliReview, HtmlResultsNameRunsTheGateNeverJudged) {
    TempDir dir("review-notgated");
    const std::string db = dir.file("k.db"), page = dir.file("all.html");
    {
        auto store = Store::open(db);
        ASSERT_TRUE(store) << store.error().message;
        for (const auto& [id, status] : {std::pair{"stopped", RunStatus::interrupted}, {"broken", RunStatus::failed}}) {
            RunRecord run;
            run.run_id = id;
            run.task = "saxpy";
            run.backend = "opencl";
            run.profile = "small";
            run.proposer = "tune";
            run.strategy = "one-plus-one";
            run.status = status;
            ASSERT_TRUE((*store)->create_run(run));
        }
    }
    ASSERT_EQ(run_kevo({"report", "--all", "--html", page, "--db", db}).exit_code, 0);
    const std::string html = slurp(page);
    EXPECT_NE(html.find("<td data-col=\"runs\">2 (0 through the gate; failed 1, interrupted 1)</td>"), std::string::npos)
        << html.substr(html.find("<table class=\"results\">"), 1500);
}

// Defect 24, on the function best.cl is written with: the tuned value goes first on the tune line
// and into the #ifndef/#define fallback; other defines stay as they are.
TEST(CliReview, KnobFallbackDefinesTakeTheTunedValues) {
    const std::string source = "// kevo: tune BX 16 32 64\n#ifndef BX\n#define BX 16\n#endif\n#ifndef BY\n#  define BY 8  // rows\n"
                               "#endif\n#define BXX 16\n";
    const std::string out = apply_knob_defaults(source, {{"BX", "64"}, {"BY", "4"}}, "//");
    EXPECT_EQ(out, "// kevo: tune BX 64 16 32\n#ifndef BX\n#define BX 64\n#endif\n#ifndef BY\n#  define BY 4  // rows\n"
                   "#endif\n#define BXX 16\n");
}

// Defect 4 (its pre-run part): a study whose `from` file is not in the backend's language is
// refused before anything runs, naming the file and what to give instead.
TEST(CliReview, StudyFromFileLanguageIsCheckedAgainstItsBackend) {
    TempDir dir("review-study");
    fs::create_directories(dir.path() / "kernels");
    std::ofstream(dir.file("kernels/saxpy.cu")) << "// a CUDA kernel\n";
    std::ofstream(dir.file("kernels/saxpy.cl")) << "// an OpenCL kernel\n";
    auto study = [&](const std::string& name, const std::string& from) {
        const std::string path = dir.file(name);
        std::ofstream(path) << "backend = \"opencl\"\ntasks = [\"saxpy\"]\n[budget]\niterations = 1\n[run]\nfrom = \"" << from
                            << "\"\n[[models]]\nname = \"tuner\"\nproposer = \"tune\"\n";
        return path;
    };
    auto r = run_kevo({"sweep", study("cu.toml", "kernels/{task}.cu"), "--dry-run", "--db", dir.file("s.db")});
    EXPECT_EQ(r.exit_code, 2) << r.out;
    EXPECT_NE(r.err.find("saxpy.cu for task saxpy, a cuda file, but the study's backend is opencl"), std::string::npos) << r.err;
    r = run_kevo({"sweep", study("cl.toml", "kernels/{task}.cl"), "--dry-run", "--db", dir.file("s.db")});
    EXPECT_EQ(r.exit_code, 0) << r.err;
}

// Defect 11: a --from kernel that is not correct ends the command before the seed is evaluated:
// exit 1 with its verdict, and no run in the store.
TEST(CliReview, WrongFromKernelIsRefusedFirstWithExitOne) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("review-from");
    const std::string db = dir.file("k.db");
    const auto r = run_kevo({"run", "saxpy", "--from", candidate("saxpy_slightly_wrong.cl"), "--proposer", "tune", "--iterations", "1",
                             "--backend", "opencl", "--profile", "small", "--db", db, "--out", dir.file("out"), "--seed", "1"});
    EXPECT_EQ(r.exit_code, 1) << r.err;
    EXPECT_NE(r.err.find("--from " + candidate("saxpy_slightly_wrong.cl") + ": the kernel is"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("nothing was run or stored"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("seed: score"), std::string::npos) << "the seed was evaluated first:\n" << r.err;
    auto store = Store::open(db, Store::Access::read_only);
    ASSERT_TRUE(store) << store.error().message;
    auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs);
    EXPECT_TRUE(runs->empty());
}

// The JSON document at the end of a log that holds stderr lines before it.
nlohmann::json last_document(const std::string& log) {
    const size_t at = log.rfind("\n{\n");
    if (at == std::string::npos) return nlohmann::json::parse(log.rfind("{\n", 0) == 0 ? log : "", nullptr, false);
    return nlohmann::json::parse(log.substr(at + 1), nullptr, false);
}

// Defect 6: `kevo eval --json` stopped by Ctrl-C still prints one JSON document and exits 130.
TEST(CliReview, InterruptedEvalJsonPrintsOneDocument) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("review-sigint");
    const std::string log = dir.file("eval.log");
    const pid_t pid = spawn_kevo({"eval", "saxpy", candidate("saxpy_infinite_loop.cl"), "--backend", "opencl", "--profile", "small",
                                  "--timeout", "60", "--json"},
                                 log);
    ASSERT_GT(pid, 0);
    for (int i = 0; i < 600 && slurp(log).find("evaluating") == std::string::npos; ++i) ::usleep(100 * 1000);
    ASSERT_NE(slurp(log).find("evaluating"), std::string::npos) << slurp(log);  // the header, also with --json
    ::usleep(1000 * 1000);
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by the signal itself: " << slurp(log);
    EXPECT_EQ(WEXITSTATUS(status), 130);
    const auto doc = last_document(slurp(log));
    ASSERT_TRUE(doc.is_object()) << slurp(log);
    EXPECT_EQ(doc["error"].value("exit_status", 0), 130) << doc.dump();
    EXPECT_NE(doc["error"].value("message", "").find("interrupted by SIGINT"), std::string::npos) << doc.dump();
}

// Defect 22: a calibration that replaces the cached one of the same device says so, with the old
// and new figures and their difference (new / old - 1), on stderr and in --json. Checked for
// consistency with the printed figures only: the size of the difference is timing noise.
TEST(CliReview, KevoCalibrateReportsTheCalibrationItReplaces) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("review-recalibrate");
    const char* shared = std::getenv("KEVO_CACHE_DIR");
    const std::string previous = shared ? shared : "";
    ::setenv("KEVO_CACHE_DIR", dir.file("cache").c_str(), 1);  // empty: the first calibration replaces nothing
    const auto first = run_kevo({"calibrate", "--backend", "opencl", "--quick", "--json"});
    const auto second = run_kevo({"calibrate", "--backend", "opencl", "--quick", "--json"});
    if (previous.empty()) ::unsetenv("KEVO_CACHE_DIR");
    else ::setenv("KEVO_CACHE_DIR", previous.c_str(), 1);
    ASSERT_EQ(first.exit_code, 0) << first.err;
    ASSERT_EQ(second.exit_code, 0) << second.err;
    const auto a = first.json(), b = second.json();
    ASSERT_TRUE(a.is_object() && b.is_object()) << first.out << second.out;
    EXPECT_TRUE(a["replaced"].is_null()) << a["replaced"].dump();
    EXPECT_EQ(first.err.find("replaced the cached calibration"), std::string::npos) << first.err;
    const auto& replaced = b["replaced"];
    ASSERT_TRUE(replaced.is_object()) << second.out;
    EXPECT_EQ(replaced.value("measured_at", ""), a.value("measured_at", "?"));
    for (const char* figure : {"bandwidth_gbs", "fp32_gflops"}) {
        const auto& f = replaced[figure];
        EXPECT_DOUBLE_EQ(f.value("before", 0.0), a.value(figure, -1.0)) << figure;
        EXPECT_DOUBLE_EQ(f.value("after", 0.0), b.value(figure, -1.0)) << figure;
        EXPECT_NEAR(f.value("difference", 9.0), b.value(figure, 0.0) / a.value(figure, 1.0) - 1, 1e-12) << figure;
        EXPECT_EQ(f.value("beyond_spread", true),
                  std::abs(f.value("difference", 0.0)) > std::max(f.value("spread", 0.0), 0.05)) << f.dump();
    }
    const std::string line = fmt::format("replaced the cached calibration of {}: DRAM {:.1f} -> {:.1f} GB/s ({:+.1f}%",
                                         a.value("measured_at", ""), a.value("bandwidth_gbs", 0.0), b.value("bandwidth_gbs", 0.0),
                                         100 * replaced["bandwidth_gbs"].value("difference", 0.0));
    EXPECT_NE(second.err.find(line), std::string::npos) << line << "\n" << second.err;
    EXPECT_EQ(second.err.find("likely busy") != std::string::npos, replaced.value("beyond_spread", false)) << second.err;
}

// Defect 6 for bench: SIGINT while a kernel is being checked ends the bench with exactly one JSON
// document on stdout (status interrupted, the checks done so far), exit 130, and stderr ending in
// a whole line that says it was interrupted. saxpy's kernel never ends, so the signal lands in it.
TEST(CliReview, InterruptedBenchJsonPrintsOneDocument) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("review-bench-sigint");
    fs::create_directories(dir.path() / "kernels");
    fs::copy_file(candidate("saxpy_infinite_loop.cl"), dir.file("kernels/saxpy.cl"));
    const std::string out = dir.file("bench.out"), err = dir.file("bench.err");
    const pid_t pid = spawn_kevo({"bench", "--tasks", "heat2d,saxpy", "--kernels", dir.file("kernels"), "--backend", "opencl",
                                  "--profile", "small", "--no-peers", "--timeout", "60", "--json"},
                                 out, err);
    ASSERT_GT(pid, 0);
    for (int i = 0; i < 1200 && slurp(err).find("saxpy: checking") == std::string::npos; ++i) ::usleep(100 * 1000);
    ASSERT_NE(slurp(err).find("saxpy: checking"), std::string::npos) << slurp(err);
    ::usleep(1000 * 1000);
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    ASSERT_TRUE(WIFEXITED(status)) << "killed by the signal itself: " << slurp(err);
    EXPECT_EQ(WEXITSTATUS(status), 130);
    const auto doc = nlohmann::json::parse(slurp(out), nullptr, false);  // the whole of stdout: one document
    ASSERT_TRUE(doc.is_object()) << slurp(out);
    EXPECT_EQ(doc.value("status", ""), "interrupted");
    EXPECT_EQ(doc.value("interrupted", ""), "interrupted by SIGINT");
    ASSERT_EQ(doc["tasks"].size(), 2u) << doc.dump();
    ASSERT_EQ(doc["tasks"][0]["checks"].size(), 1u) << doc.dump();  // heat2d's check, done before the signal
    EXPECT_EQ(doc["tasks"][0]["checks"][0].value("verdict", ""), "ok");
    EXPECT_TRUE(doc["tasks"][1]["checks"].empty()) << doc.dump();  // cut short: not reported as a verdict
    const std::string text = slurp(err);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n') << text;
    const size_t last = text.rfind('\n', text.size() - 2);
    const std::string last_line = text.substr(last == std::string::npos ? 0 : last + 1);
    EXPECT_EQ(last_line.rfind("kevo: bench interrupted by SIGINT", 0), 0u) << text;
}

// Defect 21: what the OpenCL compiler prints itself during the build (PoCL: "1 error generated.")
// is part of the kernel's compile message, not a bare line on kevo's stderr; and with --json the
// stderr progress keeps its "evaluating FILE for TASK" header while stdout holds only the document.
TEST(CliReview, CompilerOutputIsAttributedAndJsonKeepsTheProgressHeader) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string file = candidate("saxpy_compile_error.cl");
    const auto r = run_kevo({"eval", "saxpy", file, "--backend", "opencl", "--profile", "small", "--json"});
    ASSERT_EQ(r.exit_code, 1) << r.err;
    const auto doc = r.json();  // the whole of stdout
    ASSERT_TRUE(doc.is_object()) << r.out;
    EXPECT_EQ(doc.value("verdict", ""), "compile_error");
    EXPECT_FALSE(doc["compile_messages"].empty()) << doc.dump();
    EXPECT_NE(r.err.find("evaluating " + file + " for saxpy on "), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find("error generated"), std::string::npos) << r.err;
    const std::string diagnostics = doc.value("diagnostics", "");
    const size_t printed = diagnostics.find("the compiler also printed:\n");
    if (printed != std::string::npos)  // PoCL 3 prints; a compiler that prints nothing adds nothing
        EXPECT_GT(diagnostics.size(), printed + strlen("the compiler also printed:\n")) << diagnostics;
    const auto text = run_kevo({"eval", "saxpy", file, "--backend", "opencl", "--profile", "small"});
    EXPECT_EQ(text.exit_code, 1) << text.err;
    EXPECT_EQ(text.err.find("error generated"), std::string::npos) << text.err;
    EXPECT_NE(text.err.find("evaluating " + file + " for saxpy on "), std::string::npos) << text.err;
    if (printed != std::string::npos) EXPECT_NE(text.out.find("the compiler also printed:"), std::string::npos) << text.out;
}

// Defect 8: the resume hint of an interrupted sweep keeps the study in one folder (--out) and store.
// (On scripted evaluations lasting 300 ms each: the signal always comes before the end.)
TEST(CliReview, InterruptedSweepHintKeepsOutAndDb) {
    TempDir dir("review-sweep");
    const std::string file = dir.file("one.toml"), db = dir.file("s.db"), out = dir.file("sweep-out"), log = dir.file("sweep.log");
    std::ofstream(file) << "backend = \"opencl\"\nprofile = \"small\"\ntasks = [\"saxpy\"]\n[budget]\niterations = 3\n"
                           "[[models]]\nname = \"tuner\"\nproposer = \"tune\"\n";
    const pid_t pid = kevo::test::spawn_scripted_kevo({"sweep", file, "--db", db, "--out", out}, log, 300);
    ASSERT_GT(pid, 0);
    auto started = [&] {
        std::error_code ec;
        if (!fs::is_directory(out, ec)) return false;
        for (const auto& e : fs::directory_iterator(out, ec))
            if (e.path().filename().string().rfind("sweep-", 0) == 0) return true;
        return false;
    };
    for (int i = 0; i < 600 && !started(); ++i) ::usleep(100 * 1000);
    ASSERT_TRUE(started()) << slurp(log);
    ::usleep(500 * 1000);
    ::kill(pid, SIGINT);
    int status = 0;
    ::waitpid(pid, &status, 0);
    const std::string text = slurp(log);
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 130) << text;
    EXPECT_NE(text.find("resume with   kevo sweep " + file + " --db " + db + " --out " + out), std::string::npos) << text;
}

// Defect 16: map-elites' progress line names the candidate's own cell, the one the archive files it
// under (with the parent's cell it was drawn from beside it).
// (On scripted evaluations: the progress line is the loop's, whatever the kernels.)
TEST(CliReview, MapElitesProgressNamesTheCandidatesCell) {
    TempDir dir("review-elites");
    const auto r = kevo::test::run_scripted_kevo({"run", "heat2d", "--proposer", "tune", "--strategy", "map-elites", "--iterations", "4", "--backend",
                             "opencl", "--profile", "small", "--db", dir.file("k.db"), "--out", dir.file("out"), "--seed", "2",
                             "--repeat", "3", "--warmup", "1", "--json"});
    ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1) << r.err;
    const auto summary = r.json();
    ASSERT_TRUE(summary.is_object()) << r.out;
    int checked = 0;
    for (const auto& cell : summary["population"]["cells"]) {
        const int iteration = cell.value("iteration", 0);
        if (iteration < 1) continue;  // the seed has no progress line of a proposal
        const std::string line = fmt::format("[{:>3}/4] cell {} (parent cell ", iteration, cell.value("label", ""));
        EXPECT_NE(r.err.find(line), std::string::npos) << line << "\n" << r.err;
        ++checked;
    }
    EXPECT_GT(checked, 0) << "no proposal entered the archive: " << r.err;
}

std::string unescape_html(std::string s) {
    for (const auto& [from, to] : {std::pair{"&#39;", "'"}, {"&quot;", "\""}, {"&lt;", "<"}, {"&gt;", ">"}, {"&amp;", "&"}}) {
        for (size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + 1)) s.replace(at, strlen(from), to);
    }
    return s;
}

// Defects 7, 17 and 24 on one real run: the HTML's "runs as started" line, pasted, starts a run
// with the very settings of the first (every option, defaults included); `--iteration N` shows the
// candidate's per-size table; every kernel file written has the tuned knob values in its #define
// fallbacks too.
TEST(CliReview, RunsAsStartedReproduceTheRunExactly) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("review-rerun");
    const std::string db = dir.file("k.db"), out = dir.file("out");
    const auto first = run_kevo({"run", "heat2d", "--proposer", "tune", "--iterations", "2", "--backend", "opencl", "--profile",
                                 "small", "--db", db, "--out", out, "--seed", "3", "--repeat", "3", "--warmup", "1",
                                 "--max-repeat", "6", "--gate-rounds", "2", "--stagnation", "4", "--timeout", "30", "--json"});
    ASSERT_TRUE(first.exit_code == 0 || first.exit_code == 1) << first.err;
    const std::string run_id = first.json().value("run_id", "");
    ASSERT_FALSE(run_id.empty()) << first.out;

    const std::string page = dir.file("r.html");
    ASSERT_EQ(run_kevo({"report", run_id, "--html", page, "--db", db}).exit_code, 0);
    const std::string html = slurp(page);
    const size_t at = html.find("<pre class=\"commands\">");
    ASSERT_NE(at, std::string::npos);
    const size_t begin = at + std::string("<pre class=\"commands\">").size();
    const std::string command = unescape_html(html.substr(begin, html.find('\n', begin) - begin));
    ASSERT_EQ(command.rfind("kevo run heat2d ", 0), 0u) << command;
    for (const char* option : {"--repeat 3", "--warmup 1", "--max-repeat 6", "--gate-rounds 2", "--stagnation 4", "--timeout 30"})
        EXPECT_NE(command.find(option), std::string::npos) << option << " missing from: " << command;

    // Pasted (kevo from the build), it starts a second run into the same store.
    const std::string shell = std::string("exec ") + KEVO_BINARY + command.substr(4) + " --json";
    const auto second_log = dir.file("second.log");
    std::vector<std::string> words = {"/bin/sh", "-c", shell};
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    const pid_t pid = spawn_in_own_group("/bin/sh", argv.data(), environ, second_log);
    ASSERT_GT(pid, 0);
    int status = 0;
    ::waitpid(pid, &status, 0);
    auto store = Store::open(db, Store::Access::read_only);
    ASSERT_TRUE(store) << store.error().message;
    auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs);
    ASSERT_EQ(runs->size(), 2u) << slurp(second_log);
    auto settings_of = [](const RunRecord& r) {
        nlohmann::json s = r.settings;
        s.erase("ceilings");  // each run pins the device's calibration when it starts; compared below
        return s;
    };
    EXPECT_EQ(settings_of((*runs)[0]).dump(2), settings_of((*runs)[1]).dump(2));
    EXPECT_EQ((*runs)[0].settings["ceilings"].value("bandwidth_gbs", 0.0), (*runs)[1].settings["ceilings"].value("bandwidth_gbs", 0.0));

    // --iteration N: the candidate's result with its per-size table.
    const auto one = run_kevo({"report", run_id, "--iteration", "0", "--db", db});
    ASSERT_EQ(one.exit_code, 0) << one.err;
    EXPECT_NE(one.out.find("verdict: ok"), std::string::npos) << one.out;
    EXPECT_NE(one.out.find("64x64x10"), std::string::npos) << one.out;  // a size row of heat2d's small profile

    // Every kernel written: its #ifndef/#define fallback says what its `kevo: tune` line puts first.
    int files = 0;
    const std::regex tune(R"(kevo: tune (\w+) (\S+))");
    for (const auto& entry : fs::recursive_directory_iterator(out)) {
        if (entry.path().extension() != ".cl") continue;
        const std::string text = slurp(entry.path().string());
        for (std::sregex_iterator m(text.begin(), text.end(), tune), end; m != end; ++m) {
            const std::string name = (*m)[1], value = (*m)[2];
            EXPECT_NE(text.find("#define " + name + " " + value), std::string::npos) << entry.path() << ":\n" << text;
            ++files;
        }
    }
    EXPECT_GT(files, 0);
}

}  // namespace
}  // namespace kevo::test
