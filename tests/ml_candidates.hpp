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

#include "backend/kernel_language.hpp"
#include "kevo_process.hpp"
#include "task/registry.hpp"
#include "task/task.hpp"

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

// A kernel a task's tests must see pass: one of the task's own files ("seed.cl") or the stem of a
// candidate (tests/candidates/STEM.cl), with the margin it must keep.
struct PassingKernel {
    std::string file;
    bool task_file = false;
    double min_margin = 50;
};
inline void PrintTo(const PassingKernel& k, std::ostream* os) { *os << k.file; }
// A test name for it ("seed.cl" -> "seed_cl").
inline std::string passing_kernel_name(const ::testing::TestParamInfo<PassingKernel>& info) {
    std::string n = info.param.file;
    for (auto& ch : n)
        if (ch == '.') ch = '_';
    return n;
}

// The kernel ok at each of the `sizes` small sizes, in both trials, on input seeds 1..`seeds`, each
// evaluation at least its margin inside the tolerance; the smallest margin is printed (docs/ml-checks.md).
inline void expect_ok_on_every_seed(const std::string& task, const PassingKernel& k, int seeds, size_t sizes) {
    std::string path = candidate(k.file + ".cl");
    if (k.task_file) {
        path = ::testing::TempDir() + task + "_" + k.file;
        std::ofstream(path) << task_file(task, k.file);
    }
    ASSERT_TRUE(std::ifstream(path)) << path;
    double smallest = std::numeric_limits<double>::infinity();
    for (int seed = 1; seed <= seeds; ++seed) {
        const auto doc = eval_small(task, path, seed);
        ASSERT_TRUE(doc.is_object());
        ASSERT_EQ(doc["verdict"], "ok") << k.file << " seed " << seed << ": " << doc.dump(2);
        ASSERT_EQ(doc["sizes"].size(), sizes) << doc.dump(2);
        for (const auto& size : doc["sizes"]) ASSERT_EQ(size["trials"].size(), 2u) << size.dump();
        const double margin = smallest_margin(doc);
        EXPECT_GE(margin, k.min_margin) << k.file << " seed " << seed;
        smallest = std::min(smallest, margin);
    }
    std::printf("%s %s: smallest margin over seeds 1-%d %.3g\n", task.c_str(), k.file.c_str(), seeds, smallest);
}

// Every kernel's signature, as each language writes it, is in the brief and verbatim in seed.cu and
// seed.cl; from the kernel's name on in best.cu and best.cl (which put __launch_bounds__ or an
// attribute before the name); and no size label of any profile is in the brief.
inline void expect_signatures_in_task_files(const std::string& task, const TaskSpec& spec) {
    const std::string brief(task_file(task, "brief.md"));
    for (const auto& k : spec.kernels)
        for (const char* language : {"cuda", "opencl"}) {
            const auto text = signature_text(k, language_named(language));
            EXPECT_NE(brief.find(text), std::string::npos) << text;
            const bool cuda = std::string(language) == "cuda";
            const std::string seed = cuda ? "seed.cu" : "seed.cl", best = cuda ? "best.cu" : "best.cl";
            EXPECT_NE(std::string(task_file(task, seed)).find(text), std::string::npos) << seed << ": " << text;
            const auto from_name = text.substr(text.find(k.name + "("));
            EXPECT_NE(std::string(task_file(task, best)).find(from_name), std::string::npos) << best << ": " << from_name;
        }
    for (const auto& [profile, sizes] : spec.profiles)
        for (const auto& s : sizes) EXPECT_EQ(brief.find(s.label), std::string::npos) << s.label;
}

}  // namespace kevo::test
