// The launch contract's ML-pack additions: `smem=` (dynamic shared memory) and `// kevo: target
// sm_90a` parsed with their errors, resolved against the device (capability, OpenCL, the opt-in
// shared-memory limit), and end to end through the real binary: NVRTC compiles a wgmma kernel only
// with the opt-in, mma.h and cuda_fp8.h are includable, and PoCL refuses smem= as a verdict.
#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "directive_support.hpp"
#include "eval/directives.hpp"
#include "eval/static_scan.hpp"
#include "kevo_process.hpp"

using kevo::test::has_device;
using kevo::test::run_kevo;

namespace kevo {
namespace {

using test::parse_error;
using test::parse_ok;

KernelSpec saxpy_kernel() {
    KernelSpec k;
    k.name = "saxpy";
    k.dims = 1;
    k.default_block = {256, 1, 1};
    return k;
}

TEST(LaunchContract, SmemTakesABytesCountOrAKnob) {
    const auto d = parse_ok("// kevo: tune SMEM 65536 98304\n// kevo: launch saxpy block=128 smem=SMEM\n");
    ASSERT_EQ(d.launches.size(), 1u);
    EXPECT_EQ(d.launches[0].smem, "SMEM");
    auto knobs = knob_values(d, {{"SMEM", "98304"}});
    ASSERT_TRUE(knobs);
    auto g = resolve_geometry(d, saxpy_kernel(), *knobs);
    ASSERT_TRUE(g) << g.error().message;
    EXPECT_EQ(g->dynamic_shared_bytes, 98304u);
    EXPECT_EQ(g->block, (Dim3{128, 1, 1}));

    auto plain = resolve_geometry(parse_ok("// kevo: launch saxpy smem=1024\n"), saxpy_kernel(), {});
    ASSERT_TRUE(plain);
    EXPECT_EQ(plain->dynamic_shared_bytes, 1024u);
    auto none = resolve_geometry(parse_ok("// kevo: launch saxpy block=64\n"), saxpy_kernel(), {});
    ASSERT_TRUE(none);
    EXPECT_EQ(none->dynamic_shared_bytes, 0u);
}

TEST(LaunchContract, BadSmemValuesNameTheLineAndWhatIsAccepted) {
    for (const char* bad : {"smem=0", "smem=-4", "smem=", "smem=48K", "smem=1,2"}) {
        const auto error = parse_error(std::string("\n// kevo: launch saxpy ") + bad + "\n");
        EXPECT_NE(error.find("line 2"), std::string::npos) << bad << ": " << error;
        EXPECT_NE(error.find("smem value"), std::string::npos) << bad << ": " << error;
        EXPECT_NE(error.find("smem=98304"), std::string::npos) << bad << ": " << error;
    }
    const auto unknown = parse_error("// kevo: launch saxpy shared=4096\n");
    EXPECT_NE(unknown.find("block, per_thread, grid or smem"), std::string::npos) << unknown;
    // A knob name that is not declared is caught when the geometry is resolved.
    auto g = resolve_geometry(parse_ok("// kevo: launch saxpy smem=SMEMX\n"), saxpy_kernel(), {});
    ASSERT_FALSE(g);
    EXPECT_NE(g.error().message.find("SMEMX"), std::string::npos) << g.error().message;
}

TEST(LaunchContract, TargetParsesOneArchitectureSpecificTarget) {
    const auto d = parse_ok("// kevo: launch saxpy block=128\n// kevo: target sm_90a\n");
    ASSERT_TRUE(d.target);
    EXPECT_EQ(d.target->arch, "sm_90a");
    EXPECT_EQ(d.target->line, 2);
    EXPECT_TRUE(d.notes.empty());
    for (const char* bad : {"// kevo: target sm_90", "// kevo: target", "// kevo: target compute_90a",
                            "// kevo: target sm_90a sm_100a", "// kevo: target sm_a"}) {
        const auto error = parse_error(bad);
        EXPECT_NE(error.find("`// kevo: target sm_90a`"), std::string::npos) << bad << ": " << error;
    }
    const auto twice = parse_error("// kevo: target sm_90a\n// kevo: target sm_90a\n");
    EXPECT_NE(twice.find("line 2"), std::string::npos) << twice;
    EXPECT_NE(twice.find("line 1"), std::string::npos) << twice;
}

TEST(LaunchContract, TargetResolvesOnlyOnADeviceOfThatCapability) {
    const auto d = parse_ok("// kevo: target sm_90a\n");
    auto on_hopper = resolve_target(d, language_named("cuda"), "sm_90");
    ASSERT_TRUE(on_hopper) << on_hopper.error().message;
    EXPECT_EQ(*on_hopper, "sm_90a");
    // An offline compile for sm_90a already is the same capability.
    auto offline = resolve_target(d, language_named("cuda"), "sm_90a");
    ASSERT_TRUE(offline);
    EXPECT_EQ(*offline, "sm_90a");

    auto on_ampere = resolve_target(d, language_named("cuda"), "sm_80");
    ASSERT_FALSE(on_ampere);
    const auto& m = on_ampere.error().message;
    EXPECT_NE(m.find("compute capability 9.0"), std::string::npos) << m;
    EXPECT_NE(m.find("sm_80 (compute capability 8.0)"), std::string::npos) << m;
    EXPECT_NE(m.find("line 1"), std::string::npos) << m;
    EXPECT_FALSE(resolve_target(d, language_named("cuda"), "sm_100"));

    // No target: the device's own architecture (empty = no override).
    auto own = resolve_target(parse_ok("// kevo: launch saxpy block=64\n"), language_named("cuda"), "sm_80");
    ASSERT_TRUE(own);
    EXPECT_EQ(*own, "");
}

TEST(LaunchContract, OpenclRefusesTargetAndSmemWithAMessage) {
    auto target = resolve_target(parse_ok("// kevo: target sm_90a\n"), language_named("opencl"), "OpenCL C 3.0");
    ASSERT_FALSE(target);
    EXPECT_NE(target.error().message.find("CUDA-only"), std::string::npos) << target.error().message;
    auto smem = resolve_target(parse_ok("\n// kevo: launch saxpy smem=4096\n"), language_named("opencl"), "OpenCL C 3.0");
    ASSERT_FALSE(smem);
    EXPECT_NE(smem.error().message.find("line 2"), std::string::npos) << smem.error().message;
    EXPECT_NE(smem.error().message.find("__local"), std::string::npos) << smem.error().message;
    EXPECT_TRUE(resolve_target(parse_ok("// kevo: launch saxpy block=64\n"), language_named("opencl"), "OpenCL C 3.0"));
}

DeviceInfo hopper_like() {
    DeviceInfo device;
    device.backend = "cuda";
    device.max_threads_per_block = 1024;
    device.max_block = {1024, 1024, 64};
    device.shared_mem_per_block = 232448;  // the H200's opt-in limit (227 KiB)
    return device;
}

TEST(LaunchContract, ValidateChecksStaticPlusDynamicSharedAgainstTheOptInLimit) {
    KernelAttributes attributes;
    attributes.max_threads = 1024;
    attributes.shared_bytes = 1024;
    Geometry fits{Dim3{128, 1, 1}, Dim3{}, std::nullopt, 232448 - 1024};
    EXPECT_TRUE(validate_geometry("saxpy", fits, hopper_like(), attributes));
    Geometry over{Dim3{128, 1, 1}, Dim3{}, std::nullopt, 232448 - 1023};
    auto refused = validate_geometry("saxpy", over, hopper_like(), attributes);
    ASSERT_FALSE(refused);
    const auto& m = refused.error().message;
    EXPECT_NE(m.find("smem=231425"), std::string::npos) << m;
    EXPECT_NE(m.find("232449"), std::string::npos) << m;
    EXPECT_NE(m.find("at most 232448 (227 KiB)"), std::string::npos) << m;
}

TEST(LaunchContract, TensorCoreHeadersAreOnTheCudaAllowList) {
    const std::string kernel = "extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }\n";
    for (const char* header : {"mma.h", "cuda_fp8.h", "cuda_fp16.h", "cuda_bf16.h"}) {
        const auto scan = scan_source(std::string("#include <") + header + ">\n" + kernel, language_named("cuda"));
        EXPECT_TRUE(scan.accepted) << header << ": " << scan.reason;
        EXPECT_FALSE(scan_source(std::string("#include <") + header + ">\n" + kernel, language_named("opencl")).accepted) << header;
    }
    EXPECT_FALSE(scan_source("#include <crt/mma.h>\n" + kernel, language_named("cuda")).accepted);
}

// ---- through the real binary, NVRTC compile-only (no GPU needed) ----

bool nvrtc_available() {
    auto cuda = make_backend("cuda");
    return cuda->compile_offline("extern \"C\" __global__ void k(float* x) { x[0] = 1.0f; }", {}, "sm_90").has_value();
}

std::string write_temp(const std::string& name, const std::string& text) {
    const std::string path = ::testing::TempDir() + name;
    std::ofstream(path) << text;
    return path;
}

// saxpy's signature with a body that issues wgmma.fence, an instruction only sm_90a has (ptxas
// refuses it for sm_90).
std::string wgmma_saxpy(bool opt_in) {
    return std::string(opt_in ? "// kevo: target sm_90a\n" : "") +
           "extern \"C\" __global__ void saxpy(const float* __restrict__ x, float* __restrict__ y, float a, unsigned n) {\n"
           "    asm volatile(\"wgmma.fence.sync.aligned;\\n\" ::: \"memory\");\n"
           "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
           "    if (i < n) y[i] = a * x[i] + y[i];\n"
           "}\n";
}

nlohmann::json compile_only(const std::string& path, const std::string& arch) {
    const auto r = run_kevo({"eval", "saxpy", path, "--backend", "cuda", "--compile-only", "--arch", arch, "--json"});
    auto doc = r.json();
    EXPECT_TRUE(doc.is_object()) << r.out << r.err;
    return doc;
}

TEST(LaunchContract, Sm90aKernelCompilesOnlyWithTheOptIn) {
    if (!nvrtc_available()) GTEST_SKIP() << "NVRTC not available";
    const auto with = compile_only(write_temp("wgmma_opt_in.cu", wgmma_saxpy(true)), "sm_90");
    EXPECT_EQ(with["verdict"], "ok") << with.dump(2);
    const auto without = compile_only(write_temp("wgmma_plain.cu", wgmma_saxpy(false)), "sm_90");
    EXPECT_EQ(without["verdict"], "compile_error") << without.dump(2);
    EXPECT_NE(without["diagnostics"].get<std::string>().find("wgmma"), std::string::npos) << without.dump(2);
    const auto elsewhere = compile_only(write_temp("wgmma_on_ampere.cu", wgmma_saxpy(true)), "sm_80");
    EXPECT_EQ(elsewhere["verdict"], "rejected") << elsewhere.dump(2);
    EXPECT_NE(elsewhere["diagnostics"].get<std::string>().find("sm_80 (compute capability 8.0)"), std::string::npos)
        << elsewhere.dump(2);
}

// The arch-specific feature macro is defined only under the opt-in: a kernel that #errors without it.
TEST(LaunchContract, TheOptInDefinesTheArchSpecificFeatureMacro) {
    if (!nvrtc_available()) GTEST_SKIP() << "NVRTC not available";
    const std::string body =
        "#if !defined(__CUDA_ARCH_FEAT_SM90_ALL)\n#error not arch-specific\n#endif\n"
        "extern \"C\" __global__ void saxpy(const float* __restrict__ x, float* __restrict__ y, float a, unsigned n) {\n"
        "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n";
    EXPECT_EQ(compile_only(write_temp("feat_opt_in.cu", "// kevo: target sm_90a\n" + body), "sm_90")["verdict"], "ok");
    EXPECT_EQ(compile_only(write_temp("feat_plain.cu", body), "sm_90")["verdict"], "compile_error");
}

TEST(LaunchContract, MmaAndFp8HeadersCompileThroughNvrtc) {
    if (!nvrtc_available()) GTEST_SKIP() << "NVRTC not available";
    const std::string wmma =
        "#include <mma.h>\n#include <cuda_fp8.h>\n"
        "extern \"C\" __global__ void saxpy(const float* __restrict__ x, float* __restrict__ y, float a, unsigned n) {\n"
        "    using namespace nvcuda;\n"
        "    __shared__ half tile[256];\n"
        "    wmma::fragment<wmma::matrix_a, 16, 16, 16, half, wmma::row_major> fa;\n"
        "    wmma::fragment<wmma::matrix_b, 16, 16, 16, half, wmma::col_major> fb;\n"
        "    wmma::fragment<wmma::accumulator, 16, 16, 16, float> fc;\n"
        "    wmma::fill_fragment(fc, 0.0f);\n"
        "    wmma::load_matrix_sync(fa, tile, 16);\n"
        "    wmma::load_matrix_sync(fb, tile, 16);\n"
        "    wmma::mma_sync(fc, fa, fb, fc);\n"
        "    unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "    __nv_fp8_e4m3 q(x[0]);\n"
        "    if (i < n) y[i] = a * x[i] + y[i] + 0.0f * float(q) + 0.0f * fc.x[0];\n"
        "}\n";
    const auto doc = compile_only(write_temp("mma_fp8.cu", wmma), "sm_90");
    EXPECT_EQ(doc["verdict"], "ok") << doc.dump(2);
}

// ---- OpenCL on PoCL: smem= is refused as a verdict before anything runs ----

TEST(LaunchContract, PoclRefusesSmemAsARejection) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string source =
        "// kevo: launch saxpy block=64 smem=4096\n"
        "__kernel void saxpy(__global const float* x, __global float* y, float a, uint n) {\n"
        "    uint i = get_global_id(0);\n    if (i < n) y[i] = a * x[i] + y[i];\n}\n";
    const auto r = run_kevo({"eval", "saxpy", write_temp("smem_saxpy.cl", source), "--backend", "opencl", "--json",
                             "--warmup", "1", "--repeat", "2"});
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    EXPECT_EQ(doc["verdict"], "rejected") << doc.dump(2);
    EXPECT_NE(doc["diagnostics"].get<std::string>().find("smem= is CUDA-only"), std::string::npos) << doc.dump(2);
}

}  // namespace
}  // namespace kevo
