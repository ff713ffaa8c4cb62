// A third kernel language that exists only in the tests: "TestCL", OpenCL C under the suffix .tcl,
// compiled by the OpenCL backend. Adding it takes this one file: the descriptor below and its one
// registration line. The tests show that the suffix lookup, the scan, the directives, the answer
// parser's fences, the prompt and the signature rendering pick it up, and that a seed written in it
// compiles and runs on PoCL with its signature checked.
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "backend/registry.hpp"
#include "backends/opencl/opencl_language.hpp"
#include "eval/compile_stage.hpp"
#include "eval/signature_check.hpp"
#include "eval/static_scan.hpp"
#include "search/answer.hpp"
#include "search/prompt.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

// TestCL spells its declarations with OpenCL's unprefixed keywords ("kernel", "global"), so that a
// rendering that is not OpenCL's own shows where the language's descriptor is used.
std::string testcl_signature(std::string_view name, const std::vector<SignatureParam>& params) {
    std::string text = opencl_signature(name, params);
    for (const std::string from : {"__kernel ", "__global "})
        for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at)) text.erase(at, 2);
    return text;
}

KernelLanguage testcl_language() {
    KernelLanguage l = opencl_language();  // OpenCL's compiler, scan rules and signature check
    l.name = "testcl";
    l.display_name = "TestCL";
    l.short_name = "TestCL";
    l.suffix = "tcl";
    l.backend_default = false;  // the OpenCL backend's devices still compile OpenCL C by default
    l.fence_tag = "testcl";
    l.fence_tags = {"testcl", "tcl"};
    l.kernel_markers = {"kernel void"};
    l.scan.include_allow_list = {"testcl_prelude.h"};  // unlike OpenCL C, which may include nothing
    l.render_signature = &testcl_signature;
    return l;
}

const bool registered = register_language(testcl_language());  // the one registration line

Language testcl() { return language_named("testcl"); }

const KernelSpec& saxpy_kernel() {
    static const auto task = make_task("saxpy");
    return (*task)->spec().kernels.front();
}

TEST(TestclLanguage, IsFoundByNameAndSuffixAndCompiledByTheOpenclBackend) {
    ASSERT_TRUE(registered);
    ASSERT_TRUE(testcl());
    EXPECT_EQ(language_for_suffix("tcl"), testcl());
    EXPECT_EQ(backend_for_suffix("tcl"), "opencl");
    // Positive control: the backends keep their own default languages.
    EXPECT_EQ(default_language_of("opencl"), language_named("opencl"));
    EXPECT_EQ(backend_for_suffix("cl"), "opencl");
    EXPECT_FALSE(language_for_suffix("tc"));
    bool listed = false;
    for (const Language l : languages()) listed |= l == testcl();
    EXPECT_TRUE(listed);
}

TEST(TestclLanguage, RendersTheTasksSignatureInItsOwnSpelling) {
    EXPECT_EQ(signature_text(saxpy_kernel(), testcl()),
              "kernel void saxpy(global const float* x, global float* y, float a, uint n)");
    EXPECT_EQ(signature_text(saxpy_kernel(), language_named("opencl")),
              "__kernel void saxpy(__global const float* x, __global float* y, float a, uint n)");
}

TEST(TestclLanguage, TheScanUsesItsOwnIncludeAllowList) {
    const std::string source = "#include <testcl_prelude.h>\nkernel void saxpy(global float* y) {}\n";
    EXPECT_TRUE(scan_source(source, testcl()).accepted) << scan_source(source, testcl()).reason;
    const ScanResult as_opencl = scan_source(source, language_named("opencl"));
    EXPECT_FALSE(as_opencl.accepted);
    EXPECT_NE(as_opencl.reason.find("no header may be included"), std::string::npos) << as_opencl.reason;
    // The rules it took from OpenCL C still hold.
    EXPECT_FALSE(scan_source("kernel void k() { enqueue_kernel(0); }\n", testcl()).accepted);
}

TEST(TestclLanguage, TheAnswerParserReadsItsFences) {
    const std::string kernel = "kernel void saxpy(global const float* x, global float* y, float a, uint n) {}\n";
    const ParsedAnswer fenced = parse_answer("Here:\n```tcl\n" + kernel + "```\n", "", testcl());
    ASSERT_TRUE(fenced.ok) << fenced.reason;
    EXPECT_EQ(fenced.source, kernel);
    // A block of another registered language is named as such.
    const ParsedAnswer cuda = parse_answer("```cuda\nextern \"C\" __global__ void saxpy() {}\n```\n", "", testcl());
    EXPECT_FALSE(cuda.ok);
    EXPECT_EQ(cuda.reason, "the fenced code holds a CUDA kernel but TestCL is required");
    // Positive control: a tag of no language is an illustration, not a candidate.
    EXPECT_FALSE(parse_answer("```json\n" + kernel + "```\n", "", testcl()).ok);
}

TEST(TestclLanguage, ThePromptWritesItsNameFenceAndSignature) {
    auto task = make_task("saxpy");
    ASSERT_TRUE(task);
    ProposalContext context;
    context.spec = &(*task)->spec();
    context.language = testcl();
    context.incumbent.source = "kernel void saxpy() {}\n";
    const std::string prompt = build_prompt(context);
    EXPECT_NE(prompt.find("Write TestCL for this device"), std::string::npos);
    EXPECT_NE(prompt.find("```testcl\nkernel void saxpy(global const float* x"), std::string::npos) << prompt;
    EXPECT_EQ(prompt.find("__kernel void saxpy"), std::string::npos);
}

// The TestCL spelling of saxpy's seed, with a directive and a knob.
constexpr const char* kSeed = R"(// kevo: tune BLOCK 64 128
// kevo: launch saxpy block=BLOCK
kernel void saxpy(global const float* x, global float* y, float a, uint n)
{
    const uint i = (uint)get_global_id(0);
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

TEST(TestclLanguage, ASeedCompilesAndRunsOnTheOpenclBackend) {
    auto backend = make_backend(testcl()->backend);
    ASSERT_TRUE(backend);
    if (backend->probe().empty()) GTEST_SKIP() << "no OpenCL device: " << backend->unavailable_reason();
    auto device = backend->open(0);
    ASSERT_TRUE(device) << device.error().message;
    Device& d = **device;
    auto task = make_task("saxpy");
    ASSERT_TRUE(task);
    const TaskSpec& spec = (*task)->spec();

    ASSERT_TRUE(scan_source(kSeed, testcl()).accepted);
    EvalRequest request;
    request.task = "saxpy";
    request.source = kSeed;
    const CompileFn compile = [&](const std::string& source, const std::vector<std::string>& defines, const std::string&) {
        return d.compile(source, defines);
    };
    auto stage = run_compile_stage(spec, request, testcl(), d.info().arch, compile);
    ASSERT_TRUE(stage) << stage.error().message;
    ASSERT_FALSE(stage->verdict) << stage->diagnostics;
    ASSERT_TRUE(stage->module) << stage->log;
    EXPECT_EQ(stage->knobs.at("BLOCK"), "64");
    ASSERT_EQ(stage->directives.launches.size(), 1u);

    auto kernel = d.kernel(*stage->module, "saxpy");
    ASSERT_TRUE(kernel) << kernel.error().message;
    auto params = d.parameters(*kernel);
    ASSERT_TRUE(params) << params.error().message;
    EXPECT_EQ(signature_mismatch(saxpy_kernel(), testcl(), *params), std::nullopt);
    // Positive control: a task that passes an int where the kernel takes a float pointer is named.
    KernelSpec wrong = saxpy_kernel();
    wrong.params[0] = sig::value("x", ParamType::i32);
    if (params->detailed) {
        EXPECT_NE(signature_mismatch(wrong, testcl(), *params), std::nullopt);
    }

    constexpr uint32_t n = 1000;
    std::vector<float> x(n), y(n);
    for (uint32_t i = 0; i < n; ++i) x[i] = float(i), y[i] = 1.0f;
    auto bx = d.allocate(n * sizeof(float)), by = d.allocate(n * sizeof(float));
    ASSERT_TRUE(bx && by);
    ASSERT_TRUE(d.upload(*bx, 0, x.data(), n * sizeof(float)));
    ASSERT_TRUE(d.upload(*by, 0, y.data(), n * sizeof(float)));
    Launch launch;
    launch.kernel = *kernel;
    launch.block = {64, 1, 1};
    launch.grid = {(n + 63) / 64, 1, 1};
    launch.args = {KernelArg::buf(*bx), KernelArg::buf(*by), KernelArg::f(2.0f), KernelArg::u(n)};
    auto ran = d.run(std::span<const Launch>(&launch, 1));
    ASSERT_TRUE(ran) << ran.error().message;
    ASSERT_TRUE(d.download(*by, 0, y.data(), n * sizeof(float)));
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(y[i], 2.0f * float(i) + 1.0f) << i;
    d.release(*bx);
    d.release(*by);
    d.release_module(*stage->module);
}

}  // namespace
}  // namespace kevo
