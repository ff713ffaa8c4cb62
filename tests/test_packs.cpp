// Packs, their weights files and the aggregates S and S_agg: the shipped ml weights validated
// against the tasks in the tree, broken files refused with the file, line and key, and S_agg
// computed, renormalised and named where tasks are missing. The CLI tests drive the real binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "kevo_process.hpp"
#include "scripted_evaluator.hpp"
#include "pack/aggregate.hpp"
#include "pack/pack.hpp"
#include "pack/pack_files.hpp"
#include "pack/weights.hpp"
#include "report/run_pack.hpp"
#include "task/registry.hpp"
#include "temp_dir.hpp"

namespace {

using kevo::test::run_kevo;

const std::string kSciWeights = std::string(KEVO_SOURCE_DIR) + "/tests/data/sci-weights.toml";

// The operators of the ml pack: issue 12's twelve and five of issue 28's second round. The shipped
// weights must name exactly these.
const std::vector<std::string> kMlOperators = {"silu_and_mul", "add_rmsnorm", "rope", "kv_cache_write",
                                               "gemm_bf16", "gemm_w8a8", "gemm_w4a16", "gemm_fp8_block",
                                               "fused_moe", "attention_prefill", "attention_decode_paged", "topk_sampling",
                                               "causal_conv1d", "qk_norm_rope_kv", "per_token_group_quant_fp8",
                                               "moe_align", "mla_decode_paged"};
bool contains(const std::vector<std::string>& list, const std::string& s) {
    return std::find(list.begin(), list.end(), s) != list.end();
}

kevo::PackWeights shipped_ml() {
    auto w = kevo::parse_weights(std::string(kevo::pack_file("ml", "weights.toml")), "packs/ml/weights.toml");
    EXPECT_TRUE(w) << w.error().message;
    return w ? *w : kevo::PackWeights{};
}

TEST(Packs, EveryTaskIsInAKnownPackAndTheScientificTwelveAreSci) {
    const auto packs = kevo::pack_names();
    EXPECT_EQ(packs.front(), "sci");
    EXPECT_TRUE(contains(packs, "ml")) << "packs/ml/weights.toml makes the ml pack known before its tasks land";
    const auto sci = kevo::pack_tasks("sci");
    EXPECT_EQ(sci.size(), 12u);
    for (const auto& t : {"saxpy", "heat2d", "nbody", "fft3d"}) EXPECT_TRUE(contains(sci, t)) << t;
    for (const auto& t : kevo::task_names()) EXPECT_TRUE(contains(packs, kevo::task_pack(t))) << t;
    auto unknown = kevo::resolve_pack("mlx", "--pack");
    ASSERT_FALSE(unknown);
    EXPECT_EQ(unknown.error().message.rfind("--pack: unknown pack 'mlx'; the packs are: sci", 0), 0u) << unknown.error().message;
    EXPECT_NE(unknown.error().message.find("ml"), std::string::npos);
}

TEST(PackWeights, TheShippedMlFileIsValidAndWeighsEveryMlTaskOfTheTree) {
    const auto ml_tasks = kevo::pack_tasks("ml");
    // These operators are the pack's tasks, no more and no fewer.
    for (const auto& op : kMlOperators) EXPECT_TRUE(contains(ml_tasks, op)) << op << " is not a task of the ml pack";
    EXPECT_EQ(ml_tasks.size(), kMlOperators.size());
    const auto w = shipped_ml();
    EXPECT_EQ(w.pack, "ml");
    ASSERT_EQ(w.vectors.size(), 2u);
    EXPECT_EQ(w.vectors[0].name, "W_trace");
    EXPECT_EQ(w.vectors[1].name, "W_model");
    for (const auto& v : w.vectors) {
        // Every operator of the pack listed, nothing else, each weight >= 0, summing to 1.
        std::vector<std::string> named;
        double sum = 0;
        for (const auto& op : v.weights) {
            named.push_back(op.task);
            sum += op.weight;
            EXPECT_GE(op.weight, 0) << v.name << " " << op.task;
            if (op.weight == 0) EXPECT_FALSE(op.zero_because.empty()) << v.name << " " << op.task;
        }
        std::sort(named.begin(), named.end());
        auto expected = kMlOperators;
        std::sort(expected.begin(), expected.end());
        EXPECT_EQ(named, expected) << v.name;
        EXPECT_NEAR(sum, 1.0, kevo::kWeightSumTolerance) << v.name;
        EXPECT_FALSE(v.source.empty());
        EXPECT_EQ(v.url.rfind("https://", 0), 0u) << v.url;
    }
    // Against the tree: every ml task weighted in every vector, nothing unknown.
    const auto problems = kevo::weights_mismatches(w, "ml", ml_tasks, {});
    EXPECT_TRUE(problems.empty()) << fmt::format("{}", fmt::join(problems, "\n"));
    // The trace has no dense GEMM: those weights are 0, said so; the layer model has no MoE.
    EXPECT_EQ(w.vectors[0].find("gemm_bf16")->weight, 0);
    EXPECT_NE(w.vectors[0].find("gemm_bf16")->zero_because.find("gap in the trace"), std::string::npos);
    EXPECT_EQ(w.vectors[1].find("fused_moe")->weight, 0);
    EXPECT_GT(w.vectors[0].find("attention_prefill")->weight, 0.4);
}

TEST(PackWeights, AWeightForATaskThePackLacksOrAPackTaskLeftOutIsRefusedWithItsLine) {
    auto w = kevo::read_weights_file(kSciWeights);
    ASSERT_TRUE(w) << w.error().message;
    const auto sci = kevo::pack_tasks("sci");
    EXPECT_TRUE(kevo::weights_mismatches(*w, "sci", sci).empty());
    // The sci file checked as if against a pack missing saxpy and holding one more task.
    std::vector<std::string> other = sci;
    other.erase(std::find(other.begin(), other.end(), "saxpy"));
    other.push_back("newtask");
    const auto problems = kevo::weights_mismatches(*w, "sci", other);
    ASSERT_EQ(problems.size(), 4u) << fmt::format("{}", fmt::join(problems, "\n"));
    EXPECT_NE(problems[0].find("sci-weights.toml:11: vectors.W_test.weights.saxpy: pack sci has no task saxpy"), std::string::npos)
        << problems[0];
    EXPECT_NE(problems[1].find("sci-weights.toml:5: vectors.W_test leaves out task newtask of pack sci"), std::string::npos)
        << problems[1];
    // A pending task is allowed to be absent; a file of another pack is named.
    EXPECT_EQ(kevo::weights_mismatches(*w, "sci", other, {"saxpy"}).size(), 2u);
    EXPECT_NE(kevo::weights_mismatches(*w, "ml", {})[0].find("pack = \"sci\", but it is used for pack ml"), std::string::npos);
}

// Each broken file, and the message it must get (file:line, the key, what is accepted).
TEST(PackWeights, BrokenFilesAreRefusedNamingTheLineAndKey) {
    const std::string head = "pack = \"sci\"\n[vectors.A]\nsource = \"s\"\nurl = \"https://x\"\nmapping = \"m\"\n";
    struct Case {
        std::string text, expected;
    };
    const std::vector<Case> cases = {
        {head + "[vectors.A.weights]\nsaxpy = -0.5\nheat2d = 1.5\n", "w.toml:7: vectors.A.weights.saxpy must be a number >= 0"},
        {head + "[vectors.A.weights]\nsaxpy = \"half\"\n", "w.toml:7: vectors.A.weights.saxpy must be a number >= 0"},
        {head + "[vectors.A.weights]\nsaxpy = 0.5\nheat2d = 0.4\n", "w.toml:2: vectors.A weights sum to 0.9, not 1 (within 1e-06): renormalise"},
        {head + "[vectors.A.weights]\nsaxpy = 0.99999\nheat2d = 0\n[vectors.A.zero_because]\nheat2d = \"x\"\n",
         "weights sum to 0.99999, not 1"},
        {head + "[vectors.A.weights]\nsaxpy = 1\nheat2d = 0\n", "w.toml:8: vectors.A.weights.heat2d is 0: say why in [vectors.A.zero_because]"},
        {head + "[vectors.A.weights]\nsaxpy = 1\n[vectors.A.zero_because]\nsaxpy = \"none\"\n",
         "w.toml:9: vectors.A.zero_because.saxpy gives a reason for a zero weight, but the weight is 1"},
        {head + "[vectors.A.weights]\nsaxpy = 1\n[vectors.A.zero_because]\nnbody = \"none\"\n",
         "vectors.A.zero_because.nbody gives a reason for a task vectors.A.weights does not list"},
        {"pack = \"sci\"\n[vectors.A]\nurl = \"https://x\"\nmapping = \"m\"\n[vectors.A.weights]\nsaxpy = 1\n",
         "w.toml:2: vectors.A needs source = \"...\""},
        {"pack = \"sci\"\n[vectors.A]\nsource = \"\"\n", "w.toml:3: vectors.A.source must be a non-empty string"},
        {"pack = \"sci\"\n[vectors.A]\nsource = \"s\"\nurl = \"ftp://x\"\nmapping = \"m\"\n[vectors.A.weights]\nsaxpy = 1\n",
         "w.toml:4: vectors.A.url must be an http:// or https:// URL"},
        {head + "weight = 3\n", "w.toml:6: vectors.A.weight is not a key of a vector; the keys are: source, url, mapping"},
        {head, "w.toml:2: vectors.A needs a [vectors.A.weights] table"},
        {"packs = \"sci\"\n", "w.toml:1: packs is not a key of a weights file; the keys are: pack, vectors"},
        {"[vectors.A]\nsource = \"s\"\n", "w.toml:1: vectors.A needs url"},  // the incomplete vector first, then the pack
        {"pack = \"sci\"\n", "w.toml: the weights file has no vector: add a [vectors.NAME] table"},
        {"pack = \"sci\"\n[vectors.A\n", "w.toml:2:"},
    };
    for (const auto& c : cases) {
        auto w = kevo::parse_weights(c.text, "w.toml");
        ASSERT_FALSE(w) << c.text;
        EXPECT_NE(w.error().message.find(c.expected), std::string::npos) << "got: " << w.error().message << "\nfor:\n" << c.text;
    }
    // The tolerance from the other side: a sum 1e-8 off is accepted.
    EXPECT_TRUE(kevo::parse_weights(head + "[vectors.A.weights]\nsaxpy = 0.49999999\nheat2d = 0.5\n", "w.toml"));
    auto syntax = kevo::parse_weights("pack = \"sci\"\n[vectors.A\n", "w.toml");
    EXPECT_NE(syntax.error().message.find("not valid TOML"), std::string::npos) << syntax.error().message;
}

kevo::PackWeightsSet sci_weights() {
    kevo::PackWeightsSet set;
    auto w = kevo::read_weights_file(kSciWeights);
    EXPECT_TRUE(w) << w.error().message;
    if (w) set.by_pack["sci"] = *w;
    return set;
}

TEST(PackAggregate, SaggIsTheWeightedSumAndTheGeometricMeanStaysBesideIt) {
    std::map<std::string, double> scores;
    for (const auto& t : kevo::pack_tasks("sci")) scores[t] = 0.5;
    scores["saxpy"] = 0.8;
    scores["heat2d"] = 0.2;
    const auto a = kevo::aggregate_packs(scores, sci_weights());
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].pack, "sci");
    EXPECT_TRUE(a[0].missing.empty());
    EXPECT_NEAR(*a[0].geomean, std::pow(0.8 * 0.2 * std::pow(0.5, 10), 1.0 / 12), 1e-12);
    ASSERT_EQ(a[0].weighted.size(), 2u);
    EXPECT_EQ(a[0].weighted[0].vector, "W_test");
    EXPECT_NEAR(*a[0].weighted[0].value, 0.4 * 0.8 + 0.2 * 0.2 + 0.4 * 0.5, 1e-12);  // weights 0.4 + 0.2 + 0.4 of the rest
    EXPECT_NEAR(a[0].weighted[0].weight_scored, 1, 1e-9);
    EXPECT_NEAR(*a[0].weighted[1].value, (0.8 + 0.2 + 10 * 0.5) / 12, 1e-9);
    const std::string text = kevo::aggregate_text(a[0]);
    EXPECT_NE(text.find("pack sci (12 of 12 tasks): S 0.4"), std::string::npos) << text;
    EXPECT_NE(text.find("S_agg W_test 0.5600, W_flat 0.5000"), std::string::npos) << text;
}

TEST(PackAggregate, AMissingTaskIsNamedAndTheRestRenormalised) {
    const std::map<std::string, double> scores = {{"saxpy", 0.8}, {"heat2d", 0.2}, {"ising", 0.9}};
    const auto a = kevo::aggregate_packs(scores, sci_weights());
    ASSERT_EQ(a.size(), 1u);
    EXPECT_EQ(a[0].scored.size(), 3u);
    EXPECT_EQ(a[0].missing.size(), 9u);
    const auto& w = a[0].weighted[0];
    // ising weighs 0 in W_test: it changes nothing, and only tasks of weight > 0 count as missing.
    EXPECT_NEAR(*w.value, (0.4 * 0.8 + 0.2 * 0.2) / 0.6, 1e-12);
    EXPECT_NEAR(w.weight_scored, 0.6, 1e-12);
    EXPECT_EQ(w.missing.size(), 7u);
    EXPECT_FALSE(contains(w.missing, "ising"));
    EXPECT_TRUE(contains(w.missing, "nbody"));
    const std::string text = kevo::aggregate_text(a[0]);
    EXPECT_NE(text.find("(3 of 12 tasks; missing: "), std::string::npos) << text;
    EXPECT_NE(text.find("renormalised over the 60.0% of its weight scored; missing: nbody"), std::string::npos) << text;
    // A failed task scores 0 and pulls the geometric mean to 0; only weight-0 tasks scored: no S_agg.
    const auto failed = kevo::aggregate_packs({{"saxpy", 0.8}, {"heat2d", 0.0}}, sci_weights());
    EXPECT_EQ(*failed[0].geomean, 0.0);
    EXPECT_NEAR(*failed[0].weighted[0].value, 0.4 * 0.8 / 0.6, 1e-12);
    const auto zero = kevo::aggregate_packs({{"ising", 0.9}, {"lj", 0.3}}, sci_weights());
    EXPECT_FALSE(zero[0].weighted[0].value);
    EXPECT_NE(kevo::aggregate_text(zero[0]).find("W_test - (no scored task has weight in it)"), std::string::npos);
    // Without weights only the geometric mean; no scored task of a pack: no aggregate for it.
    const auto plain = kevo::aggregate_packs(scores, {});
    EXPECT_TRUE(plain[0].weighted.empty());
    EXPECT_TRUE(kevo::aggregate_packs({}, sci_weights()).empty());
}

TEST(PackAggregate, ARunReportsItsTasksWeightAndContributionNotAnSagg) {
    const auto j = kevo::run_pack_json("heat2d", 0.5, sci_weights());
    EXPECT_EQ(j["name"], "sci");
    ASSERT_EQ(j["weights"].size(), 2u);
    EXPECT_EQ(j["weights"][0]["vector"], "W_test");
    EXPECT_DOUBLE_EQ(j["weights"][0]["weight"].get<double>(), 0.2);
    EXPECT_DOUBLE_EQ(j["weights"][0]["contribution"].get<double>(), 0.1);
    const std::string text = kevo::render_run_pack_text(j);
    EXPECT_NE(text.find("pack sci: W_test weight 0.2000, w*S 0.1000; W_flat weight 0.0833"), std::string::npos) << text;
    EXPECT_NE(text.find("one run has no S_agg of its own"), std::string::npos) << text;
    EXPECT_NE(kevo::render_run_pack_text(kevo::run_pack_json("heat2d", 0.5, {})).find("the pack carries no weights"),
              std::string::npos);
}

TEST(PacksCli, TasksListsPackAndCategoryAndFiltersByPack) {
    auto r = run_kevo({"tasks", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    auto doc = r.json();
    for (const auto& t : doc["tasks"]) {
        EXPECT_TRUE(t["pack"].is_string() && !t["pack"].get<std::string>().empty()) << t["name"];
        EXPECT_TRUE(t["category"].is_string()) << t["name"];
    }
    r = run_kevo({"tasks", "--pack", "sci", "--json", "--weights", kSciWeights});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    doc = r.json();
    EXPECT_EQ(doc["tasks"].size(), 12u);
    for (const auto& t : doc["tasks"]) EXPECT_EQ(t["pack"], "sci");
    EXPECT_EQ(doc["tasks"][0]["weights"].size(), 2u) << doc["tasks"][0].dump();
    ASSERT_EQ(doc["packs"].size(), 1u);
    EXPECT_EQ(doc["packs"][0]["weights"]["vectors"][0]["name"], "W_test");
    // Text: the pack's weights table with its sources.
    r = run_kevo({"tasks", "--pack", "sci", "--weights", kSciWeights});
    EXPECT_NE(r.out.find("weights of pack sci ("), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("ising = 0: left out to test a zero weight"), std::string::npos) << r.out;
    // The ml pack: its shipped weights, each operator said to be in this build or pending.
    r = run_kevo({"tasks", "--pack", "ml"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_NE(r.out.find("weights of pack ml (packs/ml/weights.toml)"), std::string::npos) << r.out;
    EXPECT_NE(r.out.find("W_trace: https://github.com/alibaba/atrex-bench/"), std::string::npos) << r.out;
    for (const auto& op : kMlOperators) EXPECT_NE(r.out.find(op), std::string::npos) << op;
    r = run_kevo({"tasks", "--pack", "nosuch"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--pack: unknown pack 'nosuch'; the packs are: sci, "), std::string::npos) << r.err;
}

TEST(PacksCli, ABrokenWeightsFileIsAUsageErrorNamingItsLine) {
    kevo::test::TempDir dir("kevo-weights");
    const std::string path = dir.file("w.toml");
    std::ofstream(path) << "pack = \"sci\"\n[vectors.A]\nsource = \"s\"\nurl = \"https://x\"\nmapping = \"m\"\n"
                           "[vectors.A.weights]\nsaxpy = 1\n";
    for (const char* cmd : {"tasks", "bench"}) {
        const auto r = run_kevo({cmd, "--weights", path});
        EXPECT_EQ(r.exit_code, 2) << cmd;
        EXPECT_NE(r.err.find("kevo: --weights: " + path + ":2: vectors.A leaves out task "), std::string::npos) << cmd << ": " << r.err;
    }
}

TEST(PacksCli, BenchTakesAPackAndRefusesATaskOfAnother) {
    auto r = run_kevo({"bench", "--pack", "nosuch"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--pack: unknown pack 'nosuch'"), std::string::npos) << r.err;
    r = run_kevo({"bench", "--pack", "ml", "--tasks", "saxpy"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--tasks: task 'saxpy' is in pack sci, not in --pack ml"), std::string::npos) << r.err;
}

TEST(PacksCli, SweepRunsOnlyTheStudysTasksOfThePackAndAStudyFileNamesAPack) {
    kevo::test::TempDir dir("kevo-sweep-pack");
    const std::string model = "\n[[models]]\nname = \"t\"\nproposer = \"tune\"\n";
    const std::string two = dir.file("two.toml"), pack = dir.file("pack.toml");
    std::ofstream(two) << "tasks = [\"saxpy\", \"heat2d\"]" << model;
    std::ofstream(pack) << "pack = \"sci\"" << model;
    auto r = run_kevo({"sweep", two, "--dry-run", "--json", "--pack", "sci"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.json()["cells"].size(), 2u);
    r = run_kevo({"sweep", two, "--dry-run", "--pack", "ml"});
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_NE(r.err.find("--pack ml: none of the study's tasks (saxpy, heat2d) is in the pack"), std::string::npos) << r.err;
    r = run_kevo({"sweep", pack, "--dry-run", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.json()["study"]["tasks"], nlohmann::json(kevo::pack_tasks("sci")));
}

// On scripted evaluations whose two best kernels score apart (0.6 and 0.9), so that the geometric
// mean and the weighted mean differ from each other and from either score.
TEST(PacksCli, BenchPrintsTheGeometricMeanAndSaggOfThePack) {
    kevo::test::TempDir dir("packs-bench");
    for (const auto& [task, speed] : {std::pair{"saxpy", "1.2"}, std::pair{"heat2d", "1.8"}})
        std::ofstream(dir.file(std::string(task) + ".cl"))
            << kevo::test::scripted(std::string(kevo::task_file(task, "best.cl")), std::string("speed=") + speed);
    const auto r = kevo::test::run_scripted_kevo({"bench", "--backend", "opencl", "--profile", "small", "--warmup", "1", "--repeat",
                                                  "3", "--json", "--pack", "sci", "--tasks", "saxpy,heat2d", "--check-profiles",
                                                  "none", "--no-peers", "--kernels", dir.path().string(), "--weights", kSciWeights});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = r.json();
    std::map<std::string, double> best;
    for (const auto& t : doc["tasks"]) best[t["task"]] = t["best"]["score"].get<double>();
    ASSERT_EQ(best.size(), 2u);
    EXPECT_NEAR(best["saxpy"], 0.6, 1e-12);
    EXPECT_NEAR(best["heat2d"], 0.9, 1e-12);
    const auto& agg = doc["aggregates"]["best"];
    ASSERT_EQ(agg.size(), 1u) << doc["aggregates"].dump(1);
    EXPECT_EQ(agg[0]["pack"], "sci");
    EXPECT_EQ(agg[0]["scored"].size(), 2u);
    EXPECT_EQ(agg[0]["missing"].size(), 10u);
    EXPECT_NEAR(agg[0]["geomean"].get<double>(), std::sqrt(best["saxpy"] * best["heat2d"]), 1e-12);
    const auto& w = agg[0]["weighted"][0];
    EXPECT_EQ(w["vector"], "W_test");
    EXPECT_NEAR(w["value"].get<double>(), (0.4 * best["saxpy"] + 0.2 * best["heat2d"]) / 0.6, 1e-12);
    EXPECT_NEAR(w["weight_scored"].get<double>(), 0.6, 1e-12);
    EXPECT_NE(r.err.find("  best, measured basis, pack sci (2 of 12 tasks; missing: "), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("S_agg W_test "), std::string::npos) << r.err;
    // The datasheet basis beside it (PoCL's CPU has no datasheet entry: scored on no task).
    EXPECT_EQ(doc["aggregates"]["datasheet"]["basis"], "datasheet");
    EXPECT_TRUE(doc["aggregates"]["datasheet"]["best"].empty()) << doc["aggregates"].dump(1);
}

}  // namespace
