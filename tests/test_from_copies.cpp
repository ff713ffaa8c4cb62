// A `--from` kernel that is the seed, byte for byte or with only a comment changed, is the seed's
// duplicate: on 20 tasks, each kind of copy is run through kevo's run command on scripted
// evaluations (kevo_scripted: the duplicate check is the loop's, not the kernels'), and every run
// ends `no_gain` with iteration 1 a `duplicate` (never evaluated, never `improved`), the seed handed
// out as best and said so in the file's header, the summary and the stored report. A kernel not the
// seed's duplicate, as fast as it or faster, goes through the gate, and every output agrees on what
// it made of it.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <tuple>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "scripted_evaluator.hpp"
#include "task/registry.hpp"

namespace {

namespace fs = std::filesystem;
using kevo::test::run_kevo;
using kevo::test::run_scripted_kevo;
using kevo::test::slurp;

// The twelve scientific tasks and eight of the ML pack.
const std::vector<std::string> kTasks = {"saxpy", "heat2d", "wave3d", "morton", "nbody", "hmc", "lbm",
                                         "ising", "lj", "gradshaf", "fft3d", "adi3d", "silu_and_mul",
                                         "add_rmsnorm", "rope", "kv_cache_write", "topk_sampling",
                                         "attention_decode_paged", "attention_prefill", "gemm_bf16"};

enum class Copy { bytes, comment };

std::string temp_path(const std::string& name) { return kevo::test::temp_path("kevo_from_copies", name); }

// The seed with one comment changed, in one of four ways (by the task's place in the list): a word
// of its first comment, a comment line added at the end, a block comment before the kernel, or a
// trailing comment on every line.
std::string comment_changed(std::string seed, size_t which) {
    switch (which % 4) {
        case 0: {
            const size_t at = seed.find("// ");
            EXPECT_NE(at, std::string::npos);
            seed.insert(at + 3, "hand-checked ");
            return seed;
        }
        case 1: return seed + "\n// tuned by hand, do not touch\n";
        case 2: {
            const size_t at = seed.find("__kernel");
            EXPECT_NE(at, std::string::npos);
            seed.insert(at, "/* the kernel\n   proper */\n");
            return seed;
        }
        default: {  // a trailing comment on every line but the directives (whose text is their meaning)
            std::string out, line;
            for (char c : seed) {
                if (c != '\n') {
                    line += c;
                    continue;
                }
                out += line + (line.find("kevo:") == std::string::npos ? "  // .\n" : "\n");
                line.clear();
            }
            return out + line;
        }
    }
}

class FromCopy : public ::testing::TestWithParam<std::tuple<size_t, Copy>> {};

TEST_P(FromCopy, EndsNoGainWithTheCopyADuplicateOfTheSeed) {
    const auto [index, copy] = GetParam();
    const std::string& task = kTasks[index];
    const std::string seed(kevo::task_file(task, "seed.cl"));
    ASSERT_FALSE(seed.empty()) << task;
    const std::string text = copy == Copy::bytes ? seed : comment_changed(seed, index);
    if (copy == Copy::comment) ASSERT_NE(text, seed) << "the copy must differ from the seed as text";
    const std::string name = fmt::format("{}-{}", task, copy == Copy::bytes ? "bytes" : "comment");
    const std::string from = temp_path(name + ".cl"), db = temp_path(name + ".db"), out = temp_path(name + "-out");
    std::ofstream(from) << text;
    fs::remove(db);

    const auto r = run_scripted_kevo({"run", task, "--backend", "opencl", "--profile", "small", "--from", from,
                                      "--iterations", "0", "--proposer", "tune", "--warmup", "0", "--repeat", "1",
                                      "--gate-rounds", "1", "--seed", "1", "--db", db, "--out", out, "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto s = r.json();
    ASSERT_TRUE(s.is_object()) << r.out;
    EXPECT_EQ(s["outcome"], "no_gain") << s.dump(1);
    EXPECT_TRUE(s["within_noise"].is_null()) << "a duplicate is never evaluated, so never within the noise";

    // The stored iteration: a duplicate, not evaluated; the report agrees with the summary.
    const auto rep = run_kevo({"report", s["run_id"], "--db", db, "--json"}).json();
    ASSERT_TRUE(rep.is_object() && rep["iterations"].size() == 2u) << rep.dump(1);
    EXPECT_EQ(rep["iterations"][1]["status"], "duplicate") << rep["iterations"][1].dump(1);
    EXPECT_EQ(rep["summary"]["outcome"], "no_gain");

    // The handed-out file is the seed, and its header says so.
    const std::string best = slurp(s["best_path"]);
    EXPECT_NE(best.find("the seed of the search"), std::string::npos) << best.substr(0, 400);
    EXPECT_NE(best.find("outcome no_gain"), std::string::npos) << best.substr(0, 400);
    EXPECT_FALSE(fs::exists(fs::path(s["best_path"].get<std::string>()).parent_path() / "candidate-within-noise.cl"));
}

INSTANTIATE_TEST_SUITE_P(AllCopies, FromCopy,
                         ::testing::Combine(::testing::Range<size_t>(0, 20), ::testing::Values(Copy::bytes, Copy::comment)),
                         [](const auto& info) {
                             return fmt::format("{}_{}", kTasks[std::get<0>(info.param)],
                                                std::get<1>(info.param) == Copy::bytes ? "bytes" : "comment");
                         });

}  // namespace

// A kernel not the seed's duplicate (a line of code added), as fast as the seed or 1.5x faster, goes
// through the gate: the handed-out file's header, the summary (--json), the CSV tables and the HTML
// page give the same outcome and the same reason for the search's best, and a best within the noise
// is kept beside the seed under the name that says so.
class FromVariant : public ::testing::TestWithParam<std::tuple<std::string, std::string, std::string>> {};

TEST_P(FromVariant, OutcomeAndGateReasonAgreeInHeaderJsonCsvAndHtml) {
    const auto& [script, expected_outcome, expected_reason] = GetParam();
    const std::string tag = "variant-" + expected_outcome, from = temp_path(tag + ".cl"), db = temp_path(tag + ".db"),
                      out = temp_path(tag + "-out");
    std::ofstream(from) << kevo::test::scripted("#define KEVO_VARIANT 1\n" + std::string(kevo::task_file("saxpy", "seed.cl")),
                                                script);
    fs::remove(db);
    const auto r = run_scripted_kevo({"run", "saxpy", "--backend", "opencl", "--profile", "small", "--from", from,
                                      "--iterations", "0", "--proposer", "tune", "--db", db, "--out", out, "--json"});
    const auto s = r.json();
    ASSERT_TRUE(s.is_object()) << r.err;
    ASSERT_EQ(r.exit_code, kevo::test::run_exit_status(s)) << r.err;
    const std::string outcome = s["outcome"], reason = s["gate"][0].value("reason", "");
    ASSERT_EQ(s["gate"][0]["iteration"], 1) << "the variant is examined first: " << s.dump(1);
    EXPECT_EQ(outcome, expected_outcome) << s.dump(1);
    EXPECT_EQ(reason, expected_reason) << s.dump(1);

    const std::string best = slurp(s["best_path"]);
    EXPECT_NE(best.find("(outcome " + outcome + ")"), std::string::npos) << best.substr(0, 600);
    const fs::path run_dir = fs::path(s["best_path"].get<std::string>()).parent_path();
    EXPECT_EQ(fs::exists(run_dir / "candidate-within-noise.cl"), reason == "within-noise");
    EXPECT_EQ(s["within_noise"].is_object(), reason == "within-noise") << s.dump(1);
    if (reason == "within-noise") {
        EXPECT_EQ(outcome, "no_gain");
        const std::string kept = slurp((run_dir / "candidate-within-noise.cl").string());
        EXPECT_NE(kept.find("NOT handed out: within the noise of the seed"), std::string::npos) << kept.substr(0, 600);
        EXPECT_NE(kept.find("spread"), std::string::npos) << "the note gives the speed-up and the spread";
    }
    if (outcome == "improved") EXPECT_TRUE(reason.empty()) << s.dump(1);

    const std::string csv = temp_path("variant-csv");
    fs::remove_all(csv);
    ASSERT_EQ(run_kevo({"export", "--csv", csv, "--all", "--db", db}).exit_code, 0);
    const std::string runs = slurp(csv + "/runs.csv");
    EXPECT_NE(runs.find("," + outcome + ","), std::string::npos) << runs;
    if (!reason.empty()) EXPECT_NE(runs.find("," + reason + ","), std::string::npos) << runs;
    const std::string page = temp_path("variant.html");
    ASSERT_EQ(run_kevo({"report", "--all", "--db", db, "--html", page}).exit_code, 0);
    const std::string html = slurp(page);
    EXPECT_NE(html.find(", " + outcome + ", 1 iterations"), std::string::npos);
    EXPECT_EQ(html.find("the search's best: " + reason) != std::string::npos, !reason.empty());
}

INSTANTIATE_TEST_SUITE_P(AsFastAndFaster, FromVariant,
                         ::testing::Values(std::tuple{"speed=1", "no_gain", "within-noise"},
                                           std::tuple{"speed=1.5", "improved", ""}),
                         [](const auto& info) { return std::get<1>(info.param); });
