// Fault and attack candidates (tests/candidates/) through the real kevo binary and worker: each
// must get the right verdict and a useful diagnostic while kevo itself exits normally (status 1).
// OpenCL runs on PoCL everywhere; CUDA runs where a GPU exists, else only its compile stage (NVRTC).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include "kevo_process.hpp"

using kevo::test::candidate;
using kevo::test::has_device;
using kevo::test::run_kevo;

namespace {

struct FaultCase {
    const char* task;
    const char* file;          // without suffix
    const char* sizes;         // --sizes
    const char* verdict;       // expected verdict
    const char* diagnostic;    // expected substring of diagnostics (case-sensitive)
    bool timed;                // needs the timing phase (else --check-only)
};

const FaultCase kCases[] = {
    {"saxpy", "saxpy_compile_error", "in", "compile_error", "line 4", false},
    {"saxpy", "saxpy_infinite_loop", "in", "timeout", "deadline", false},
    {"saxpy", "saxpy_oob_write", "in", "runtime_error", "", false},
    {"heat2d", "heat2d_partial", "in", "incorrect", "", false},
    {"heat2d", "heat2d_wrong_formula", "in", "incorrect", "max |err|", false},
    {"heat2d", "heat2d_hardcoded_alpha", "in", "incorrect", "outlier", false},
    {"saxpy", "saxpy_nan", "in", "incorrect", "", false},
    {"saxpy", "saxpy_include", "in", "rejected", "#include", false},
    {"saxpy", "saxpy_tail_drop", "in", "ok", "", false},
    {"saxpy", "saxpy_tail_drop", "heldout", "incorrect", "", false},
    {"nbody", "nbody_hardcoded_dt", "in", "incorrect", "outlier", false},
    {"saxpy", "saxpy_first_call_only", "in", "incorrect", "timed run", true},
    {"saxpy", "saxpy_writes_input", "in", "incorrect", "input buffer 'x' was modified", false},
    {"heat2d", "heat2d_wrong_signature", "in", "compile_error", "kernel 'heat_step' takes", false},
};

std::string case_name(const FaultCase& c) { return fmt::format("{}_{}", c.file, c.sizes); }

// Readable test parameters in ctest's listing.
void PrintTo(const FaultCase& c, std::ostream* os) { *os << case_name(c); }

class FaultCandidates : public ::testing::TestWithParam<std::tuple<std::string, FaultCase>> {};

TEST_P(FaultCandidates, GetTheRightVerdict) {
    const auto& [backend, c] = GetParam();
    const std::string suffix = backend == "cuda" ? "cu" : "cl";
    const std::string path = candidate(fmt::format("{}.{}", c.file, suffix));
    if (!std::ifstream(path)) GTEST_SKIP() << path << " does not exist for this language";
    if (!has_device(backend)) GTEST_SKIP() << "no " << backend << " device (the compile stage is tested by CudaCompileOnly)";
    // Only the hanging candidate gets a short deadline: on a loaded machine (a GPU host's ctest -j16)
    // PoCL's compile alone can take seconds, which must not turn another fault into a timeout.
    const bool hangs = std::string(c.verdict) == "timeout";
    std::vector<std::string> args = {"eval", c.task, path, "--backend", backend, "--profile", "small", "--sizes", c.sizes,
                                     "--json", "--timeout", hangs ? "4" : "60", "--seed", "7"};
    if (c.timed) args.insert(args.end(), {"--warmup", "1", "--repeat", "2"});
    else args.push_back("--check-only");
    const auto r = run_kevo(args);
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << "stdout is not one JSON document:\n" << r.out << "\nstderr:\n" << r.err;
    EXPECT_EQ(doc["verdict"], c.verdict) << doc.dump(2);
    EXPECT_EQ(r.exit_code, std::string(c.verdict) == "ok" ? 0 : 1) << r.err;
    const std::string diagnostics = doc["diagnostics"].get<std::string>();
    EXPECT_NE(diagnostics.find(c.diagnostic), std::string::npos) << "diagnostics lack '" << c.diagnostic << "':\n" << diagnostics;
    EXPECT_FALSE(diagnostics.empty());
    if (hangs) EXPECT_LT(r.seconds, 4 + 8) << "the deadline was not enforced promptly";
    if (std::string(c.file) == "saxpy_compile_error") {
        bool line4 = false;
        for (const auto& m : doc["compile_messages"]) line4 |= m["line"] == 4 && m["severity"] == "error";
        EXPECT_TRUE(line4) << doc["compile_messages"].dump();
        // The log names the candidate's path, not the compiler's temporary file or program name.
        EXPECT_NE(diagnostics.find(path + (backend == "cuda" ? "(4)" : ":4:")), std::string::npos) << diagnostics;
        EXPECT_EQ(diagnostics.find("tempfile"), std::string::npos) << diagnostics;
        EXPECT_EQ(diagnostics.find("<source>"), std::string::npos) << diagnostics;
    }
    if (std::string(c.file) == "saxpy_include") {
        EXPECT_EQ(r.out.find("root:"), std::string::npos) << "file contents leaked into the output";
        EXPECT_EQ(r.err.find("root:"), std::string::npos) << "file contents leaked into the output";
    }
    if (std::string(c.file) == "saxpy_nan" || std::string(c.file) == "heat2d_partial") {
        ASSERT_FALSE(doc["sizes"].empty());
        EXPECT_EQ(doc["sizes"].back()["error_kind"], "nan") << doc.dump(2);
    }
    if (std::string(c.file) == "heat2d_wrong_signature") {
        // Both signatures, the kernel's and the task's (OpenCL: types and names; CUDA: sizes).
        const std::string task_side = backend == "cuda" ? "but the task passes 5: (const float* u_in [8 B]"
                                                        : "but the task passes (global const float* u_in, global float* u_out, "
                                                          "uint nx, uint ny, float alpha)";
        EXPECT_NE(diagnostics.find(task_side), std::string::npos) << diagnostics;
        EXPECT_NE(diagnostics.find(backend == "cuda" ? "takes 2 parameters (8 B, 4 B)" : "takes (global float* u, int nx)"),
                  std::string::npos)
            << diagnostics;
    }
    if (std::string(c.file) == "saxpy_oob_write") {
        const bool named = diagnostics.find("out-of-bounds") != std::string::npos ||
                           diagnostics.find("ILLEGAL_ADDRESS") != std::string::npos ||
                           diagnostics.find("illegal") != std::string::npos;
        EXPECT_TRUE(named) << diagnostics;
    }
}

std::vector<std::tuple<std::string, FaultCase>> all_cases() {
    std::vector<std::tuple<std::string, FaultCase>> out;
    for (const char* backend : {"opencl", "cuda"})
        for (const auto& c : kCases) out.emplace_back(backend, c);
    return out;
}

INSTANTIATE_TEST_SUITE_P(AllBackends, FaultCandidates, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) { return std::get<0>(info.param) + "_" + case_name(std::get<1>(info.param)); });

// The worker survives: after a timeout and a crash-prone candidate, a good kernel still evaluates.
TEST(FaultCandidatesRecovery, WorkerIsReplacedAfterTimeout) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    auto hang = run_kevo({"eval", "saxpy", candidate("saxpy_infinite_loop.cl"), "--backend", "opencl", "--json",
                          "--timeout", "2", "--check-only"});
    EXPECT_EQ(hang.json()["verdict"], "timeout");
    EXPECT_EQ(hang.exit_code, 1);
}

}  // namespace
