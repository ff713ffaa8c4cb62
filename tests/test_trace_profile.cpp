// The trace profile (task/trace_profile.hpp): every ML task ships one that parses against its own
// parameters and no scientific task has one; a bad trace file is an error naming the file, the line
// and what is accepted; through the real kevo binary on PoCL, a trace evaluation weights S by the
// shapes' call counts, times the launch-bound shapes as replays of several copies (said so in the
// text) and the others one run at a time, and a kernel that writes only in its first launch is
// incorrect there; `kevo tasks` lists the weights; the profile is refused, naming the profiles
// there are, where a task lacks it (eval, bench).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "core/stats.hpp"
#include "kevo_process.hpp"
#include "task/registry.hpp"
#include "task/trace_profile.hpp"

namespace kevo {
namespace {

std::vector<std::string> param_names(const SizeSpec& s) {
    std::vector<std::string> names;
    for (const auto& [name, value] : s.params) names.push_back(name);
    return names;
}

TEST(TraceProfile, EveryMlTaskHasOneOverItsOwnParametersAndNoScientificTaskDoes) {
    int ml = 0;
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        ASSERT_TRUE(task.has_value()) << name << ": " << task.error().message;
        const TaskSpec& spec = (*task)->spec();
        if (spec.pack != "ml") {
            EXPECT_FALSE(spec.profiles.count(kTraceProfile)) << name;
            continue;
        }
        ++ml;
        ASSERT_TRUE(spec.profiles.count(kTraceProfile)) << name << " ships no trace.toml";
        const auto& trace = spec.profiles.at(kTraceProfile);
        ASSERT_FALSE(trace.empty()) << name;
        int held = 0;
        std::set<std::string> labels;
        for (const auto& s : trace) {
            held += s.heldout;
            EXPECT_TRUE(labels.insert(s.label).second) << name << " " << s.label;
            EXPECT_GE(s.weight, 1) << name << " " << s.label;
            EXPECT_FALSE(s.source.empty()) << name << " " << s.label;
            EXPECT_EQ(param_names(s), param_names(spec.profiles.at("paper").front())) << name << " " << s.label;
        }
        EXPECT_EQ(held, 1) << name;
    }
    EXPECT_GE(ml, 15);
}

TEST(TraceProfile, ACallCountIsTheWeightAndAShapeWithoutOneWeighsOne) {
    auto task = make_task("kv_cache_write");
    ASSERT_TRUE(task.has_value());
    const auto& trace = (*task)->spec().profiles.at(kTraceProfile);
    const auto decode = std::find_if(trace.begin(), trace.end(), [](const SizeSpec& s) { return s.label == "1x4x128"; });
    ASSERT_NE(decode, trace.end());
    EXPECT_EQ(decode->weight, 6580);  // Atrex reshape_and_cache: the decode step's call count
    EXPECT_NE(decode->source.find("reshape_and_cache"), std::string::npos) << decode->source;
    auto qk = make_task("qk_norm_rope_kv");  // its anchor gives no call count
    ASSERT_TRUE(qk.has_value());
    for (const auto& s : (*qk)->spec().profiles.at(kTraceProfile)) {
        EXPECT_EQ(s.weight, 1) << s.label;
        EXPECT_NE(s.source.find("no call count"), std::string::npos) << s.source;
    }
}

// A trace file for silu_and_mul with `shape` as its one [[shape]] (and `more` after it).
std::string silu_trace(const std::string& shape, const std::string& more = "") {
    return "[trace]\nsource = \"test\"\n\n[[shape]]\n" + shape + "\n" + more;
}

std::string parse_error(const std::string& text) {
    auto task = make_task("silu_and_mul");
    EXPECT_TRUE(task.has_value());
    auto parsed = parse_trace_file(text, "trace.toml", (*task)->spec());
    EXPECT_FALSE(parsed.has_value()) << text;
    return parsed ? std::string() : parsed.error().message;
}

TEST(TraceFile, ErrorsNameTheFileTheLineAndWhatIsAccepted) {
    const std::string good = "label = \"8x64\"\nparams = { T = 8, I = 64 }\nanchor = \"a\"\nids = [\"0\"]\nheldout = true";
    auto task = make_task("silu_and_mul");
    ASSERT_TRUE(task.has_value());
    auto ok = parse_trace_file(silu_trace(good), "trace.toml", (*task)->spec());
    ASSERT_TRUE(ok.has_value()) << ok.error().message;
    EXPECT_EQ(ok->sizes.size(), 1u);
    EXPECT_EQ(ok->uncounted, 1);

    const auto misspelt = parse_error(silu_trace(good + "\ncalss = 3"));
    EXPECT_NE(misspelt.find("trace.toml:10:"), std::string::npos) << misspelt;
    EXPECT_NE(misspelt.find("calss is not a key"), std::string::npos) << misspelt;
    EXPECT_NE(misspelt.find("calls"), std::string::npos) << misspelt;

    const auto params = parse_error(silu_trace("label = \"8\"\nparams = { T = 8 }\nanchor = \"a\"\nids = [\"0\"]\nheldout = true"));
    EXPECT_NE(params.find("take exactly T, I"), std::string::npos) << params;

    const auto two_held = parse_error(silu_trace(good, "[[shape]]\nlabel = \"9x64\"\nparams = { T = 9, I = 64 }\n"
                                                       "anchor = \"a\"\nids = [\"1\"]\nheldout = true"));
    EXPECT_NE(two_held.find("exactly one"), std::string::npos) << two_held;

    const auto twice = parse_error(silu_trace(good, "[[shape]]\nlabel = \"8x64\"\nparams = { T = 8, I = 64 }\nanchor = \"a\"\n"
                                                    "ids = [\"1\"]"));
    EXPECT_NE(twice.find("given twice"), std::string::npos) << twice;

    const auto zero = parse_error(silu_trace(good + "\ncalls = 0"));
    EXPECT_NE(zero.find("calls must be a positive integer"), std::string::npos) << zero;

    const auto syntax = parse_error("[trace\n");
    EXPECT_NE(syntax.find("not valid TOML"), std::string::npos) << syntax;
}

TEST(TraceProfile, WeightedGeometricMeanWeighsEachValueByItsWeight) {
    EXPECT_NEAR(weighted_geometric_mean({1, 4}, {3, 1}), std::pow(4.0, 0.25), 1e-12);
    EXPECT_NEAR(weighted_geometric_mean({2, 8}, {1, 1}), geometric_mean({2, 8}), 1e-12);
    EXPECT_EQ(weighted_geometric_mean({2, 0}, {1, 1}), 0);
}

std::string task_kernel_file(const std::string& task, const std::string& kernel) {
    const std::string path = ::testing::TempDir() + "trace_" + task + "_" + kernel;
    std::ofstream(path) << task_file(task, kernel);
    return path;
}

test::ProcessResult eval_trace(const std::string& task, const std::string& path, bool json) {  // on PoCL
    std::vector<std::string> args = {"eval",   task, path, "--backend", "opencl", "--profile", "trace", "--sizes", "all",
                                     "--repeat", "3", "--warmup", "1", "--timeout", "300", "--seed", "1"};
    if (json) args.push_back("--json");
    return test::run_kevo(args);
}

TEST(TraceEval, SWeighsTheCallCountsAndLaunchBoundShapesAreTimedAsReplays) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto r = eval_trace("kv_cache_write", task_kernel_file("kv_cache_write", "seed.cl"), true);
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    ASSERT_EQ(doc["verdict"], "ok") << doc.dump(2);
    std::vector<double> fractions, weights;
    int replayed = 0, single = 0;
    for (const auto& s : doc["sizes"]) {
        const int replays = s["replays"].get<int>();
        if (replays > 0) {
            ++replayed;
            EXPECT_GE(replays, 2) << s.dump();
        } else {
            ++single;
        }
        if (s["label"] == "1x4x128") {
            EXPECT_EQ(s["weight"].get<double>(), 6580);
            EXPECT_GT(replays, 0) << "a one-token decode write is launch-bound on any device";
        }
        if (s["heldout"].get<bool>()) continue;
        fractions.push_back(s["fraction"].get<double>());
        weights.push_back(s["weight"].get<double>());
    }
    EXPECT_GT(replayed, 0);
    EXPECT_GT(single, 0) << "8192x4x128 moves 34 MB: not launch-bound on PoCL";
    const double s = doc["score"].get<double>();
    EXPECT_NEAR(s, weighted_geometric_mean(fractions, weights), 1e-9 * s);
    EXPECT_GT(std::fabs(std::log(s / geometric_mean(fractions))), 1e-6) << "the weights changed nothing";

    const auto text = eval_trace("kv_cache_write", task_kernel_file("kv_cache_write", "seed.cl"), false);
    EXPECT_EQ(text.exit_code, 0) << text.out << text.err;
    EXPECT_NE(text.out.find("1x4x128 [w 6580]"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("launch-bound sizes"), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("(every enqueue, one wait)"), std::string::npos) << text.out;
}

// A kernel keeping a count across launches needs a device global: CUDA's, OpenCL 1.2 has none.
TEST(TraceEval, AKernelThatWritesOnlyInItsFirstLaunchIsIncorrect) {
    if (!test::has_device("cuda")) GTEST_SKIP() << "no CUDA device";
    auto args = std::vector<std::string>{"eval",      "kv_cache_write", test::candidate("kv_cache_write_first_launch_only.cu"),
                                         "--backend", "cuda", "--profile", "trace", "--sizes", "all", "--seed", "1", "--json"};
    const auto r = test::run_kevo(args);
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    EXPECT_EQ(doc["verdict"], "incorrect") << doc.dump(2);
}

TEST(TraceCli, TasksListsTheWeightsAndATaskWithoutTheProfileIsRefused) {
    const auto listed = test::run_kevo({"tasks", "--pack", "ml", "--profile", "trace"});
    ASSERT_EQ(listed.exit_code, 0) << listed.err;
    EXPECT_NE(listed.out.find("1x4x128*6580"), std::string::npos) << listed.out;
    EXPECT_NE(listed.out.find("production call count"), std::string::npos) << listed.out;
    const auto doc = test::run_kevo({"tasks", "--pack", "ml", "--profile", "trace", "--json"}).json();
    ASSERT_TRUE(doc.is_object());
    bool found = false;
    for (const auto& t : doc["tasks"])
        if (t["name"] == "kv_cache_write")
            for (const auto& s : t["profiles"]["trace"]["sizes"])
                if (s["label"] == "1x4x128") found = s["weight"].get<double>() == 6580;
    EXPECT_TRUE(found) << doc.dump(2).substr(0, 2000);

    const auto eval = test::run_kevo({"eval", "saxpy", task_kernel_file("saxpy", "seed.cl"), "--backend", "opencl",
                                      "--profile", "trace"});
    EXPECT_EQ(eval.exit_code, 2) << eval.out << eval.err;
    EXPECT_NE(eval.err.find("task saxpy has no profile 'trace'; its profiles are small, paper, large"), std::string::npos)
        << eval.err;

    const auto bench = test::run_kevo({"bench", "--backend", "opencl", "--profile", "trace", "--tasks", "saxpy"});
    EXPECT_EQ(bench.exit_code, 2) << bench.out << bench.err;
    EXPECT_NE(bench.err.find("saxpy has no trace profile"), std::string::npos) << bench.err;
}

}  // namespace
}  // namespace kevo
