// Tests of the static scan, the cheapest gate: #include in every spelling a preprocessor accepts
// (spaces, splices, digraphs, trigraphs, comments, CR/CRLF line ends), dynamic parallelism, size,
// empty and NUL sources, what must still be accepted, and the timer / device-global warnings.
// The last tests hand every tricky source the scan accepts to the real compilers (NVRTC, PoCL)
// with a canary header, so a spelling the scan misses but a compiler honours is caught.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "backend/registry.hpp"
#include "eval/static_scan.hpp"

namespace kevo {
namespace {

constexpr const char* kCudaKernel = "__global__ void k(float* x) { x[threadIdx.x] = 1.0f; }\n";
constexpr const char* kOpenclKernel = "__kernel void k(__global float* x) { x[get_global_id(0)] = 1.0f; }\n";

// Expects a refusal on `line`, with the reason naming that line.
void expect_refused(const std::string& source, Language language, int line, const std::string& reason_part = "") {
    SCOPED_TRACE(source);
    const ScanResult r = scan_source(source, language);
    EXPECT_FALSE(r.accepted);
    EXPECT_EQ(r.line, line) << r.reason;
    if (line > 0) EXPECT_NE(r.reason.find("line " + std::to_string(line)), std::string::npos) << r.reason;
    if (!reason_part.empty()) EXPECT_NE(r.reason.find(reason_part), std::string::npos) << r.reason;
}

void expect_accepted(const std::string& source, Language language) {
    SCOPED_TRACE(source);
    const ScanResult r = scan_source(source, language);
    EXPECT_TRUE(r.accepted) << r.reason;
}

// ---- includes ----

TEST(StaticScan, RefusesAnIncludeOfAnAbsolutePath) {
    expect_refused(std::string(kCudaKernel) + "#include \"/etc/passwd\"\n", language_named("cuda"), 2, "/etc/passwd");
    expect_refused(std::string(kOpenclKernel) + "\n#include \"/etc/passwd\"\n", language_named("opencl"), 3, "/etc/passwd");
}

TEST(StaticScan, RefusesSystemHeadersInOpencl) {
    expect_refused("#include <stdio.h>\n" + std::string(kOpenclKernel), language_named("opencl"), 1, "stdio.h");
    // The CUDA allow-list does not carry over to OpenCL.
    expect_refused("#include <cuda_fp16.h>\n" + std::string(kOpenclKernel), language_named("opencl"), 1);
    EXPECT_TRUE(include_allow_list(language_named("opencl")).empty());
}

TEST(StaticScan, RefusesSpacedDirectives) {
    expect_refused("# include \"x\"\n", language_named("cuda"), 1, "include");
    expect_refused(std::string(kCudaKernel) + "  #\t include   \"x\"\n", language_named("cuda"), 2, "include");
}

TEST(StaticScan, RefusesALineSplicedDirective) {
    // The refusal names the line of the '#', where the logical line starts.
    expect_refused(std::string(kCudaKernel) + "#\\\ninclude \"x\"\n", language_named("cuda"), 2, "include");
    expect_refused("#inc\\\nlude \"x\"\n" + std::string(kCudaKernel), language_named("cuda"), 1, "include");
    expect_refused("#\\\r\ninclude \"x\"\n", language_named("opencl"), 1, "include");
    // Line numbers after a splice stay right.
    expect_refused("int a = 1 + \\\n 2;\n#include \"x\"\n", language_named("opencl"), 3);
}

TEST(StaticScan, RefusesDigraphAndTrigraphSpellings) {
    expect_refused("%:include \"x\"\n", language_named("cuda"), 1, "include");
    expect_refused(std::string(kOpenclKernel) + "?\?=include \"x\"\n", language_named("opencl"), 2, "include");
}

TEST(StaticScan, RefusesDirectivesBehindComments) {
    expect_refused("/**/#include \"x\"\n", language_named("cuda"), 1, "include");
    expect_refused("#/* hidden */include \"x\"\n", language_named("cuda"), 1, "include");
    expect_refused("/* a comment\n   over two lines */ #include \"x\"\n", language_named("opencl"), 2, "include");
}

TEST(StaticScan, RefusesMacroAndOtherIncludeForms) {
    expect_refused("#define HEADER \"/etc/passwd\"\n#include HEADER\n", language_named("cuda"), 2, "HEADER");
    expect_refused("#include\n", language_named("cuda"), 1);
    expect_refused("#include_next <stdio.h>\n", language_named("cuda"), 1);
    expect_refused("#import \"x\"\n", language_named("cuda"), 1);
    expect_refused("#embed \"/etc/passwd\"\n", language_named("opencl"), 1);
}

TEST(StaticScan, RefusesHasInclude) {
    expect_refused("#if __has_include(\"/etc/passwd\")\n#endif\n", language_named("cuda"), 1, "__has_include");
    expect_refused(std::string(kOpenclKernel) + "#if defined(__has_include)\n#endif\n", language_named("opencl"), 2);
}

// ---- dynamic parallelism ----

TEST(StaticScan, RefusesCudaDynamicParallelism) {
    const std::string source =
        "__global__ void child(float* x) { x[0] = 1.0f; }\n"
        "__global__ void parent(float* x) {\n"
        "    child<<<1, 32>>>(x);\n"
        "}\n";
    expect_refused(source, language_named("cuda"), 3, "<<<");
    expect_refused("__global__ void k() { cudaDeviceSynchronize(); }\n", language_named("cuda"), 1);
}

TEST(StaticScan, RefusesOpenclDeviceSideEnqueue) {
    const std::string source =
        "__kernel void parent(__global float* x) {\n"
        "    enqueue_kernel(get_default_queue(), CLK_ENQUEUE_FLAGS_NO_WAIT, ndrange_1D(1),\n"
        "                   ^{ x[0] = 1.0f; });\n"
        "}\n";
    expect_refused(source, language_named("opencl"), 2, "enqueue_kernel");
}

// ---- size and content ----

TEST(StaticScan, RefusesASourceOverTheSizeLimit) {
    std::string source = kCudaKernel;
    while (source.size() <= kMaxSourceBytes) source += "// padding padding padding padding padding padding padding\n";
    const ScanResult r = scan_source(source, language_named("cuda"));
    EXPECT_FALSE(r.accepted);
    EXPECT_NE(r.reason.find(std::to_string(kMaxSourceBytes)), std::string::npos) << r.reason;
    EXPECT_NE(r.reason.find(std::to_string(source.size())), std::string::npos) << r.reason;

    // Exactly at the limit is still accepted.
    source.resize(kMaxSourceBytes - 1);
    source += "\n";
    EXPECT_TRUE(scan_source(source, language_named("cuda")).accepted);
}

TEST(StaticScan, RefusesEmptyAndNulSources) {
    EXPECT_FALSE(scan_source("", language_named("cuda")).accepted);
    EXPECT_FALSE(scan_source(" \n\t\n", language_named("opencl")).accepted);
    const ScanResult empty = scan_source("", language_named("opencl"));
    EXPECT_NE(empty.reason.find("empty"), std::string::npos) << empty.reason;

    std::string with_nul = kCudaKernel;
    with_nul.insert(10, 1, '\0');
    const ScanResult nul = scan_source(with_nul, language_named("cuda"));
    EXPECT_FALSE(nul.accepted);
    EXPECT_NE(nul.reason.find("NUL"), std::string::npos) << nul.reason;
}

// ---- what must pass ----

TEST(StaticScan, AcceptsAllowedHeadersAndOrdinaryDirectives) {
    expect_accepted("#include <cuda_fp16.h>\n#include \"cuda_bf16.h\"  // half types\n" + std::string(kCudaKernel),
                    language_named("cuda"));
    expect_accepted(
        "#define TILE 16\n"
        "#ifndef TILE\n#error TILE must be set\n#endif\n"
        "__global__ void k(float* x) {\n"
        "#pragma unroll\n"
        "    for (int i = 0; i < TILE; ++i) x[i] = i << 2;\n"
        "}\n",
        language_named("cuda"));
    expect_accepted("#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n#define N 4\n" + std::string(kOpenclKernel),
                    language_named("opencl"));
}

// Policy: an include directive is refused wherever its text appears, comments and strings included,
// so that no disagreement between the scan's lexer and the compiler's can hide a real one.
TEST(StaticScan, RefusesIncludeTextEvenInCommentsAndStrings) {
    expect_refused("// #include \"/etc/passwd\"\n" + std::string(kCudaKernel), language_named("cuda"), 1, "comments and strings");
    expect_refused("/*\n#include \"/etc/passwd\"\n#include <stdio.h>\n*/\n" + std::string(kOpenclKernel),
                   language_named("opencl"), 2);
    expect_refused("__global__ void k() { printf(\"#include <stdio.h>\\n\"); }\n", language_named("cuda"), 1);
    // Dynamic-parallelism syntax inside a comment is not a launch.
    expect_accepted("// child<<<1, 1>>>(x) was the old way\n" + std::string(kCudaKernel), language_named("cuda"));
    // A "/*" inside a string is not a comment start that could hide what follows.
    expect_refused("__global__ void k() { const char* s = \"/*\"; }\n#include \"x\"\n// */\n", language_named("cuda"), 2);
}

// ---- warnings ----

TEST(StaticScan, WarnsAboutTimerReads) {
    const std::string source =
        "__global__ void k(long long* t) {\n"
        "    t[0] = clock64();\n"
        "    asm volatile(\"mov.u64 %0, %%globaltimer;\" : \"=l\"(t[1]));\n"
        "}\n";
    const ScanResult r = scan_source(source, language_named("cuda"));
    EXPECT_TRUE(r.accepted) << r.reason;
    ASSERT_EQ(r.warnings.size(), 2u);
    EXPECT_NE(r.warnings[0].find("line 2"), std::string::npos) << r.warnings[0];
    EXPECT_NE(r.warnings[0].find("clock64"), std::string::npos) << r.warnings[0];
    EXPECT_NE(r.warnings[1].find("line 3"), std::string::npos) << r.warnings[1];
    EXPECT_NE(r.warnings[1].find("globaltimer"), std::string::npos) << r.warnings[1];

    // In a comment it is not a read.
    EXPECT_TRUE(scan_source("// clock64() is not used\n" + std::string(kCudaKernel), language_named("cuda")).warnings.empty());
}

TEST(StaticScan, WarnsAboutMutableDeviceGlobalsOnly) {
    const ScanResult r = scan_source(
        "__device__ int counter;\n"
        "__device__ float helper(float x) { return 2.0f * x; }\n"
        "__constant__ float k[4];\n"
        "__device__ const float table[2] = {1.0f, 2.0f};\n"
        "__global__ void kern(float* x) { x[0] = helper(k[0]) + table[1]; atomicAdd(&counter, 1); }\n",
        language_named("cuda"));
    EXPECT_TRUE(r.accepted) << r.reason;
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("line 1"), std::string::npos) << r.warnings[0];
    EXPECT_NE(r.warnings[0].find("counter"), std::string::npos) << r.warnings[0];

    const ScanResult initialised = scan_source("__device__ unsigned int calls = 0;\n" + std::string(kCudaKernel),
                                               language_named("cuda"));
    EXPECT_EQ(initialised.warnings.size(), 1u);
    const ScanResult array = scan_source("__device__ float scratch[256];\n" + std::string(kCudaKernel), language_named("cuda"));
    EXPECT_EQ(array.warnings.size(), 1u);
}

TEST(StaticScan, WarnsAboutOpenclProgramScopeGlobals) {
    const ScanResult r = scan_source(
        "global int counter = 0;\n"
        "__kernel void k(__global float* x) {\n"
        "    x[0] = 1.0f;\n"
        "}\n",
        language_named("opencl"));
    EXPECT_TRUE(r.accepted) << r.reason;
    ASSERT_EQ(r.warnings.size(), 1u);
    EXPECT_NE(r.warnings[0].find("line 1"), std::string::npos) << r.warnings[0];
    // A kernel parameter list is not a program-scope variable.
    EXPECT_TRUE(scan_source(kOpenclKernel, language_named("opencl")).warnings.empty());
}

// ---- spellings the compilers honour but the scan must see too ----

TEST(StaticScan, RefusesAnIncludeWithCrlfLineEnds) {
    // exposes: directive regex in static_scan.cpp does not match a line ending in '\r', so CRLF sources bypass the include check
    expect_refused(std::string("int a;\r\n#include \"/etc/passwd\"\r\n") + kCudaKernel, language_named("cuda"), 2);
    expect_refused(std::string("int a;\r\n#include \"/etc/passwd\"\r\n") + kOpenclKernel, language_named("opencl"), 2);
}

TEST(StaticScan, RefusesAnIncludeAfterALoneCarriageReturn) {
    // exposes: clang (PoCL) treats a lone '\r' as a line end, the scan does not
    const ScanResult r = scan_source(std::string("int a;\r#include \"/etc/passwd\"\r") + kOpenclKernel,
                                     language_named("opencl"));
    EXPECT_FALSE(r.accepted);
}

TEST(StaticScan, RefusesASpliceWithTrailingWhitespace) {
    // exposes: clang (PoCL) splices "\\ <newline>" (backslash, spaces, newline); normalise() only splices "\\<newline>"
    const ScanResult r = scan_source("#\\  \ninclude \"/etc/passwd\"\n" + std::string(kOpenclKernel), language_named("opencl"));
    EXPECT_FALSE(r.accepted);
}

TEST(StaticScan, RefusesATrigraphSplice) {
    // exposes: PoCL's clang honours trigraphs; normalise() maps ??= but not ??/ (a backslash, so a line splice)
    const ScanResult r = scan_source("#?\?/\ninclude \"/etc/passwd\"\n" + std::string(kOpenclKernel), language_named("opencl"));
    EXPECT_FALSE(r.accepted);
}

TEST(StaticScan, RefusesAnIncludeHiddenByATrigraphInAString) {
    // exposes: "??/" ends a string for normalise() but escapes the quote for clang, so a later /* hides lines from the scan only
    const ScanResult r = scan_source(
        "constant char s[] = \"?\?/\" /*\";\n#include \"/etc/passwd\"\n// */\n" + std::string(kOpenclKernel),
        language_named("opencl"));
    EXPECT_FALSE(r.accepted);
}

TEST(StaticScan, RefusesAnIncludeHiddenByARawString) {
    // exposes: normalise() does not know C++ raw strings: R"(" /*)" opens a block comment for the scan only
    const ScanResult r = scan_source(
        "__global__ void q() { const char* s = R\"(\" /*)\"; (void)s; }\n#include \"/etc/passwd\"\n// */\n" +
            std::string(kCudaKernel),
        language_named("cuda"));
    EXPECT_FALSE(r.accepted);
}

TEST(StaticScan, RefusesAnIncludeHiddenByADigitSeparator) {
    // exposes: normalise() reads the C++14 digit separator in 1'0 as a character literal, desynchronising from the compiler
    const ScanResult r = scan_source(
        "__global__ void q() { int a = 1'0; const char* s = \"'/*\"; (void)s; (void)a; }\n"
        "#include \"/etc/passwd\"\n// */\n" +
            std::string(kCudaKernel),
        language_named("cuda"));
    EXPECT_FALSE(r.accepted);
}

TEST(StaticScan, ScansALongLogicalLineWithoutCrashing) {
    // exposes: std::regex recursion in scan_source overflows the stack on a long line (~50 KB), killing the evaluator
    // An unrolled macro body, spliced over many physical lines: one logical line of ~80 KB,
    // well under the size limit. Run in a child process so a crash fails this test only.
    std::string source = "#define BODY \\\n";
    for (int i = 0; i < 2500; ++i) source += "    acc += x[i + " + std::to_string(i) + "] * w; \\\n";
    source += "\n__global__ void k(const float* x, float w, float* out) { int i = 0; float acc = 0; BODY out[0] = acc; }\n";
    ASSERT_LT(source.size(), kMaxSourceBytes);
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(std::exit(scan_source(source, language_named("cuda")).accepted ? 0 : 1), ::testing::ExitedWithCode(0), "");

    const std::string device_global = "__device__ float t" + std::string(60000, 'a') + ";\n" + kCudaKernel;
    EXPECT_EXIT(std::exit(scan_source(device_global, language_named("cuda")).accepted ? 0 : 1), ::testing::ExitedWithCode(0),
                "");
}

// ---- the scan against the real compilers ----

// Sources that try to include a canary header; whatever the scan accepts goes to the real
// compiler, and the compiler must then never have read the canary.
std::vector<std::pair<std::string, std::string>> include_attempts(const std::string& inc) {
    return {
        {"plain", "#" + inc + "\n"},
        {"spaced", "#  " + inc + "\n"},
        {"splice", "#\\\n" + inc + "\n"},
        {"splice with space", "#\\ \n" + inc + "\n"},
        {"crlf", "int a;\r\n#" + inc + "\r\n"},
        {"cr only", "int a;\r#" + inc + "\r"},
        {"digraph", "%:" + inc + "\n"},
        {"trigraph", "?\?=" + inc + "\n"},
        {"trigraph splice", "#?\?/\n" + inc + "\n"},
        {"comment", "/**/#" + inc + "\n"},
        {"comment over lines", "#/*\n*/" + inc + "\n"},
        {"splice in the name", "#inc\\\nlude" + inc.substr(7) + "\n"},
        {"vertical tab and form feed", "#\v\f" + inc + "\n"},
        {"no-break space", "#\xc2\xa0" + inc + "\n"},
        {"ideographic space", "#\xe3\x80\x80" + inc + "\n"},
        {"universal character name", "#\\u0069" + inc.substr(1) + "\n"},
        {"trigraph string", "constant char s[] = \"?\?/\" /*\";\n#" + inc + "\n// */\n"},
        {"raw string", "__global__ void q() { const char* s = R\"(\" /*)\"; (void)s; }\n#" + inc + "\n// */\n"},
        {"digit separator",
         "__global__ void q() { int a = 1'0; const char* s = \"'/*\"; (void)s; (void)a; }\n#" + inc + "\n// */\n"},
    };
}

class CanaryHeader {
public:
    CanaryHeader() {
        path_ = std::filesystem::temp_directory_path() / ("kevo-scan-canary-" + std::to_string(::getpid()) + ".h");
        std::ofstream(path_) << "#error KEVO_CANARY_WAS_READ\n";
    }
    ~CanaryHeader() {
        std::error_code ec;
        std::filesystem::remove(path_, ec);
    }
    std::string include_line() const { return "include \"" + path_.string() + "\""; }

private:
    std::filesystem::path path_;
};

TEST(StaticScan, NothingTheScanAcceptsReadsAFileWithNvrtc) {
    auto backend = make_backend("cuda");
    if (!backend) GTEST_SKIP() << "the CUDA backend is not compiled in";
    CanaryHeader canary;
    for (const auto& [name, head] : include_attempts(canary.include_line())) {
        const std::string source = head + kCudaKernel;
        if (!scan_source(source, language_named("cuda")).accepted) continue;
        auto outcome = backend->compile_offline(source, {}, backend->default_offline_arch());
        if (!outcome) GTEST_SKIP() << "NVRTC is not usable here: " << outcome.error().message;
        EXPECT_EQ(outcome->log.find("KEVO_CANARY_WAS_READ"), std::string::npos)
            << "the scan accepted '" << name << "' and NVRTC read the file";
    }
}

TEST(StaticScan, NothingTheScanAcceptsReadsAFileWithOpencl) {
    auto backend = make_backend("opencl");
    if (!backend) GTEST_SKIP() << "the OpenCL backend is not compiled in";
    if (backend->probe().empty()) GTEST_SKIP() << "no OpenCL device: " << backend->unavailable_reason();
    auto device = backend->open(0);
    ASSERT_TRUE(device.has_value()) << device.error().message;
    CanaryHeader canary;
    for (const auto& [name, head] : include_attempts(canary.include_line())) {
        const std::string source = head + kOpenclKernel;
        if (!scan_source(source, language_named("opencl")).accepted) continue;
        auto outcome = (*device)->compile(source, {});
        ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
        EXPECT_EQ(outcome->log.find("KEVO_CANARY_WAS_READ"), std::string::npos)
            << "the scan accepted '" << name << "' and the OpenCL compiler read the file";
    }
}

}  // namespace
}  // namespace kevo
