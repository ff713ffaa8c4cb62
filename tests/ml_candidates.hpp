// The ML pack's real kernels through PoCL, shared by the pack's test files: a check-only
// evaluation at the small profile, a deliberately wrong kernel rejected on every input seed, and the
// smallest margin (tolerance / error) a correct kernel is reported with.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "kevo_process.hpp"
#include "task/registry.hpp"

namespace kevo::test {

// `kevo eval TASK PATH --check-only` on the OpenCL device at every small size; the JSON document
// (a failed expectation names stdout and stderr when there is none).
inline nlohmann::json eval_small(const std::string& task, const std::string& path, int seed,
                                 const std::vector<std::string>& more = {}) {
    std::vector<std::string> args = {"eval", task, path, "--backend", "opencl", "--profile", "small", "--sizes", "all",
                                     "--check-only", "--json", "--timeout", "120", "--seed", std::to_string(seed)};
    args.insert(args.end(), more.begin(), more.end());
    const auto r = run_kevo(args);
    auto doc = r.json();
    EXPECT_TRUE(doc.is_object()) << "stdout is not one JSON document:\n" << r.out << "\nstderr:\n" << r.err;
    return doc;
}

// The candidate tests/candidates/STEM.cl is incorrect, with a diagnostic, on input seeds 1 and 2.
inline void expect_incorrect_on_every_seed(const std::string& task, const std::string& stem) {
    for (int seed = 1; seed <= 2; ++seed) {
        const auto doc = eval_small(task, candidate(stem + ".cl"), seed);
        ASSERT_TRUE(doc.is_object());
        ASSERT_EQ(doc["verdict"], "incorrect") << doc.dump(2);
        EXPECT_FALSE(doc["diagnostics"].get<std::string>().empty());
    }
}

// The task's own KERNEL file (seed.cl, best.cl) evaluated as a candidate would be, input seed 1.
inline nlohmann::json eval_task_kernel_small(const std::string& task, const std::string& kernel) {
    const std::string path = ::testing::TempDir() + "ml_kernel_" + task + "_" + kernel;
    std::ofstream(path) << task_file(task, kernel);
    auto doc = eval_small(task, path, 1);
    std::remove(path.c_str());
    return doc;
}

// The smallest tolerance / error over every size and trial of an evaluation (infinite when exact).
inline double smallest_margin(const nlohmann::json& doc) {
    double smallest = std::numeric_limits<double>::infinity();
    for (const auto& size : doc["sizes"])
        for (const auto& t : size["trials"]) {
            const double error = t["error"].get<double>(), tolerance = t["tolerance"].get<double>();
            smallest = std::min(smallest, error == 0 ? std::numeric_limits<double>::infinity() : tolerance / error);
        }
    return smallest;
}

// The task's KERNEL is ok at every small size and at least 50x inside its tolerance (printed for
// docs/ml-checks.md).
inline void expect_ok_with_margin(const std::string& task, const std::string& kernel) {
    const auto doc = eval_task_kernel_small(task, kernel);
    ASSERT_TRUE(doc.is_object());
    ASSERT_EQ(doc["verdict"], "ok") << task << " " << kernel << ": " << doc.dump(2);
    const double smallest = smallest_margin(doc);
    std::printf("%s %s: smallest margin %.3g\n", task.c_str(), kernel.c_str(), smallest);
    EXPECT_GE(smallest, 50) << task << " " << kernel;
}

}  // namespace kevo::test
