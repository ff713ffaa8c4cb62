// The CUDA compile stage without a GPU: every CUDA seed and fault candidate goes through the static
// scan and NVRTC (`kevo eval --compile-only --backend cuda`), and gets the right verdict; every
// point of every seed's tune space compiles.
#include <gtest/gtest.h>

#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "eval/builtin_kernels.hpp"
#include "eval/directives.hpp"
#include "kevo_process.hpp"
#include "task/registry.hpp"

using kevo::test::run_kevo;

namespace {

bool nvrtc_available(std::string* why) {
    auto cuda = kevo::make_backend("cuda");
    auto r = cuda->compile_offline("extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }", {}, "sm_90");
    if (!r) *why = r.error().message;
    return r.has_value();
}

std::string write_temp(const std::string& name, std::string_view text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << text;
    return path;
}

TEST(CudaCompileOnly, EverySeedCompiles) {
    std::string why;
    if (!nvrtc_available(&why)) GTEST_SKIP() << "NVRTC not available: " << why;
    for (const auto& task : kevo::task_names()) {
        const auto path = write_temp(task + "_seed.cu", kevo::task_file(task, "seed.cu"));
        const auto r = run_kevo({"eval", task, path, "--backend", "cuda", "--compile-only", "--json"});
        const auto doc = r.json();
        ASSERT_TRUE(doc.is_object()) << r.out << r.err;
        EXPECT_EQ(doc["verdict"], "ok") << task << ": " << doc.dump(2);
        EXPECT_EQ(r.exit_code, 0);
    }
}

// The tuner draws any combination of a seed's knob values; none may be a compile error, or `kevo run
// --proposer tune` would spend iterations on points that cannot run.
TEST(CudaCompileOnly, EveryPointOfEverySeedsTuneSpaceCompiles) {
    std::string why;
    if (!nvrtc_available(&why)) GTEST_SKIP() << "NVRTC not available: " << why;
    auto cuda = kevo::make_backend("cuda");
    int points = 0;
    for (const auto& task : kevo::task_names()) {
        const std::string source(kevo::task_file(task, "seed.cu"));
        auto directives = kevo::parse_directives(source);
        ASSERT_TRUE(directives) << task << ": " << directives.error().message;
        std::vector<size_t> digit(directives->knobs.size(), 0);  // one value index per knob
        for (bool more = true; more; ++points) {
            std::vector<std::string> defines;
            for (size_t k = 0; k < digit.size(); ++k)
                defines.push_back(directives->knobs[k].name + "=" + directives->knobs[k].values[digit[k]]);
            auto outcome = cuda->compile_offline(source, defines, "sm_90");
            ASSERT_TRUE(outcome) << outcome.error().message;
            EXPECT_TRUE(outcome->module.has_value()) << task << " with " << fmt::format("{}", fmt::join(defines, " "))
                                                     << " does not compile:\n" << outcome->log;
            more = false;  // next point: count up like an odometer
            for (size_t k = 0; k < digit.size() && !more; ++k) {
                if (++digit[k] < directives->knobs[k].values.size()) more = true;
                else digit[k] = 0;
            }
        }
    }
    EXPECT_GT(points, 100);  // the suite's seeds have 262 points in all
}

// kevo's own kernels (checksum, cache flush, calibration, the axpy peer) compile for the GPU the
// lead benchmarks on; nothing here runs them.
TEST(CudaCompileOnly, BuiltInKernelsCompile) {
    std::string why;
    if (!nvrtc_available(&why)) GTEST_SKIP() << "NVRTC not available: " << why;
    auto cuda = kevo::make_backend("cuda");
    for (const char* file : {"checksum.cu", "flush.cu", "calibrate.cu", "peer_axpy.cu"}) {
        const std::string source(kevo::builtin_kernel(file));
        ASSERT_FALSE(source.empty()) << file << " is not embedded";
        auto outcome = cuda->compile_offline(source, {}, "sm_90");
        ASSERT_TRUE(outcome) << outcome.error().message;
        EXPECT_TRUE(outcome->module.has_value()) << file << " does not compile:\n" << outcome->log;
    }
}

TEST(CudaCompileOnly, FaultCandidatesGetCompileStageVerdicts) {
    std::string why;
    if (!nvrtc_available(&why)) GTEST_SKIP() << "NVRTC not available: " << why;
    int checked = 0;
    for (const auto& entry : std::filesystem::directory_iterator(KEVO_CANDIDATES_DIR)) {
        if (entry.path().extension() != ".cu") continue;
        const std::string name = entry.path().stem().string();
        // The task is the longest task name the file name starts with: task names may hold '_'.
        std::string task;
        for (const auto& t : kevo::task_names())
            if (name.starts_with(t + "_") && t.size() > task.size()) task = t;
        const auto r = run_kevo({"eval", task, entry.path().string(), "--backend", "cuda", "--compile-only", "--json"});
        const auto doc = r.json();
        ASSERT_TRUE(doc.is_object()) << name << ": " << r.out << r.err;
        std::string expected = "ok";
        if (name.ends_with("_compile_error")) expected = "compile_error";
        if (name.ends_with("_include")) expected = "rejected";
        EXPECT_EQ(doc["verdict"], expected) << name << ": " << doc.dump(2);
        EXPECT_EQ(r.exit_code, expected == "ok" ? 0 : 1) << name;
        if (expected == "compile_error") {
            bool line4 = false;
            for (const auto& m : doc["compile_messages"]) line4 |= m["line"] == 4;
            EXPECT_TRUE(line4) << doc.dump(2);
            // The log names the candidate's own path, not NVRTC's program name.
            const std::string diagnostics = doc["diagnostics"];
            EXPECT_NE(diagnostics.find(entry.path().string() + "(4): error"), std::string::npos) << diagnostics;
            EXPECT_EQ(diagnostics.find("candidate.cu"), std::string::npos) << diagnostics;
        }
        if (expected == "rejected") EXPECT_EQ(r.out.find("root:"), std::string::npos);
        if (name.ends_with("_first_call_only")) {
            bool flagged = false;
            for (const auto& w : doc["warnings"]) flagged |= w.get<std::string>().find("mutable device global") != std::string::npos;
            EXPECT_TRUE(flagged) << "the static scan should flag the device global: " << doc.dump(2);
        }
        ++checked;
    }
    EXPECT_GE(checked, 10);
}

}  // namespace
