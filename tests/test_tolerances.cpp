// Every task's tolerance on both sides, through the real kevo binary and worker on OpenCL (PoCL in
// CI), small profile, correctness only (issue 9): the deliberately slightly-wrong kernel
// (tests/candidates/<task>_slightly_wrong.cl) is rejected on every input seed of several, and the
// seed and the best-known kernel pass with a margin (tolerance / error) of at least 50 in both
// trials at every size, held-out included.
#include <gtest/gtest.h>

#include <cmath>
#include <fstream>
#include <limits>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "task/registry.hpp"

namespace {

using kevo::test::candidate;
using kevo::test::has_device;
using kevo::test::run_kevo;

constexpr double kMinMargin = 50;
constexpr int kSeeds = 4;

nlohmann::json eval_small(const std::string& task, const std::string& path, int seed) {
    const auto r = run_kevo({"eval", task, path, "--backend", "opencl", "--profile", "small", "--sizes", "all",
                             "--check-only", "--json", "--timeout", "120", "--seed", std::to_string(seed)});
    auto doc = r.json();
    EXPECT_TRUE(doc.is_object()) << task << " " << path << ": stdout is not one JSON document:\n" << r.out << "\n" << r.err;
    return doc;
}

class Tolerances : public ::testing::TestWithParam<std::string> {};

TEST_P(Tolerances, SlightlyWrongKernelIsRejectedOnEverySeed) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string& task = GetParam();
    const std::string path = candidate(task + "_slightly_wrong.cl");
    ASSERT_TRUE(std::ifstream(path)) << path;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        const auto doc = eval_small(task, path, seed);
        ASSERT_TRUE(doc.is_object());
        EXPECT_EQ(doc["verdict"], "incorrect") << task << " seed " << seed << ": " << doc.dump(2);
        ASSERT_FALSE(doc["sizes"].empty()) << doc.dump(2);
        // The failing check says by how much: its error exceeds its tolerance.
        const auto& failed = doc["sizes"].back()["trials"].back();
        EXPECT_FALSE(failed["pass"].get<bool>()) << failed.dump();
        ASSERT_TRUE(failed["error"].is_number()) << failed.dump();
        EXPECT_GT(failed["error"].get<double>(), failed["tolerance"].get<double>()) << failed.dump();
        EXPECT_FALSE(doc["diagnostics"].get<std::string>().empty());
    }
}

TEST_P(Tolerances, SeedAndBestKernelsPassWithMargin) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string& task = GetParam();
    for (const char* kernel : {"seed.cl", "best.cl"}) {
        const std::string path = ::testing::TempDir() + "tolerances_" + task + "_" + kernel;
        std::ofstream(path) << kevo::task_file(task, kernel);
        const auto doc = eval_small(task, path, 1);
        std::remove(path.c_str());
        ASSERT_TRUE(doc.is_object());
        ASSERT_EQ(doc["verdict"], "ok") << task << " " << kernel << ": " << doc.dump(2);
        ASSERT_EQ(doc["sizes"].size(), 4u) << doc.dump(2);
        for (const auto& size : doc["sizes"]) {
            ASSERT_EQ(size["trials"].size(), 2u) << size.dump();
            for (const auto& t : size["trials"]) {
                const double error = t["error"].get<double>(), tolerance = t["tolerance"].get<double>();
                const double margin = error == 0 ? std::numeric_limits<double>::infinity() : tolerance / error;
                EXPECT_GE(margin, kMinMargin) << fmt::format("{} {} at {} ({} trial, {}): error {:.3g}, tolerance {:.3g}",
                                                             task, kernel, size["label"].get<std::string>(),
                                                             t["trial"].get<std::string>(), t["kind"].get<std::string>(),
                                                             error, tolerance);
            }
        }
    }
}

// Both languages exist, open with a comment naming the bug, mark the wrong line and keep the
// task's signatures (the .cu ones compile in CudaCompileOnly and run where a GPU is).
TEST_P(Tolerances, SlightlyWrongKernelsExistInBothLanguages) {
    const std::string& task = GetParam();
    auto spec = kevo::make_task(task);
    ASSERT_TRUE(spec.has_value()) << task;
    for (const char* suffix : {".cl", ".cu"}) {
        const std::string file = task + "_slightly_wrong" + suffix;
        const std::string text = kevo::test::slurp(candidate(file));
        ASSERT_FALSE(text.empty()) << file;
        EXPECT_EQ(text.rfind("// " + task + "_slightly_wrong: ", 0), 0u) << file;
        EXPECT_NE(text.find("WRONG"), std::string::npos) << file;
        for (const auto& k : (*spec)->spec().kernels)
            EXPECT_NE(text.find(signature_text(k, kevo::language_for_suffix(std::string_view(suffix).substr(1)))), std::string::npos)
                << file << " " << k.name;
    }
}

INSTANTIATE_TEST_SUITE_P(EveryTask, Tolerances, ::testing::ValuesIn(kevo::task_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
