// Tests of the compiler-log parser: NVRTC, clang/PoCL and NVIDIA OpenCL line formats, lines that
// are not diagnostics, log truncation, and (where the compilers are present) real compiler logs.
#include <gtest/gtest.h>

#include <algorithm>
#include <string>

#include "backend/registry.hpp"
#include "eval/compile_log.hpp"

namespace kevo {
namespace {

TEST(CompileLog, ParsesAnNvrtcError) {
    const auto messages = parse_compile_log("candidate.cu(12): error: identifier \"foo\" is undefined\n");
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0].line, 12);
    EXPECT_EQ(messages[0].column, 0);  // NVRTC gives no column
    EXPECT_EQ(messages[0].severity, "error");
    EXPECT_EQ(messages[0].message, "identifier \"foo\" is undefined");
}

TEST(CompileLog, ParsesAnNvrtcWarningWithANumber) {
    const auto messages =
        parse_compile_log("candidate.cu(3): warning #177-D: variable \"x\" was declared but never referenced\n");
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0].line, 3);
    EXPECT_EQ(messages[0].severity, "warning");
    EXPECT_EQ(messages[0].message, "variable \"x\" was declared but never referenced");
}

TEST(CompileLog, ParsesAnNvrtcCatastrophicErrorAsAnError) {
    const auto messages = parse_compile_log("candidate.cu(1): catastrophic error: cannot open source file \"x.h\"\n");
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0].line, 1);
    EXPECT_EQ(messages[0].severity, "error");
    EXPECT_EQ(messages[0].message, "cannot open source file \"x.h\"");
}

TEST(CompileLog, ParsesAClangPoclLine) {
    const auto messages = parse_compile_log("<source>:4:5: error: use of undeclared identifier 'foo'\n");
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0].line, 4);
    EXPECT_EQ(messages[0].column, 5);
    EXPECT_EQ(messages[0].severity, "error");
    EXPECT_EQ(messages[0].message, "use of undeclared identifier 'foo'");
}

TEST(CompileLog, ParsesAnNvidiaOpenclLine) {
    const auto messages = parse_compile_log("<kernel>:7:12: error: expected ';' after expression\n");
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0].line, 7);
    EXPECT_EQ(messages[0].column, 12);
    EXPECT_EQ(messages[0].severity, "error");
    EXPECT_EQ(messages[0].message, "expected ';' after expression");
}

TEST(CompileLog, ParsesAPoclLineWithTheSeverityFirst) {
    // What PoCL 3 really prints: severity, then the temporary file's path, line and column.
    const auto messages = parse_compile_log(
        "error: /root/.cache/pocl/kcache/tempfile_QLHiCc.cl:3:14: use of undeclared identifier 'undefined_foo'\n"
        "Device pthread-skylake-avx512 failed to build the program\n");
    ASSERT_EQ(messages.size(), 1u);
    EXPECT_EQ(messages[0].line, 3);
    EXPECT_EQ(messages[0].column, 14);
    EXPECT_EQ(messages[0].severity, "error");
    EXPECT_EQ(messages[0].message, "use of undeclared identifier 'undefined_foo'");
}

TEST(CompileLog, ParsesClangWarningsAndFatalErrors) {
    const auto messages = parse_compile_log(
        "/tmp/pocl/abc/input.cl:2:9: warning: unused variable 'y'\r\n"
        "<source>:1:10: fatal error: 'x.h' file not found\r\n");
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0].severity, "warning");
    EXPECT_EQ(messages[0].line, 2);
    EXPECT_EQ(messages[0].column, 9);
    EXPECT_EQ(messages[0].message, "unused variable 'y'");  // no trailing '\r'
    EXPECT_EQ(messages[1].severity, "error");
    EXPECT_EQ(messages[1].message, "'x.h' file not found");
}

TEST(CompileLog, IgnoresOtherLines) {
    const auto messages = parse_compile_log(
        "<source>:4:5: error: use of undeclared identifier 'foo'\n"
        "    foo = 1;\n"
        "    ^\n"
        "<source>:2:3: note: previous definition is here\n"
        "1 error generated.\n"
        "1 error detected in the compilation of \"candidate.cu\".\n"
        "\n"
        "Compilation terminated.\n"
        "candidate.cu(8): error: expected a \";\"\n");
    ASSERT_EQ(messages.size(), 2u);
    EXPECT_EQ(messages[0].line, 4);
    EXPECT_EQ(messages[1].line, 8);
    EXPECT_EQ(messages[1].message, "expected a \";\"");
    EXPECT_TRUE(parse_compile_log("").empty());
    EXPECT_TRUE(parse_compile_log("no diagnostics at all\n").empty());
}

TEST(CompileLog, LogHeadKeepsAShortLogWhole) {
    const std::string log = "line 1\nline 2\nline 3\n";
    EXPECT_EQ(log_head(log, 30), log);
    EXPECT_EQ(log_head("", 30), "");
    // Exactly max_lines lines, with or without a final newline, is not truncated.
    EXPECT_EQ(log_head(log, 3), log);
    EXPECT_EQ(log_head("a\nb\nc", 3), "a\nb\nc");
}

TEST(CompileLog, LogHeadTruncatesAndSaysSo) {
    std::string log;
    for (int i = 1; i <= 50; ++i) log += "line " + std::to_string(i) + "\n";
    const std::string head = log_head(log, 30);
    EXPECT_NE(head.find("line 30\n"), std::string::npos);
    EXPECT_EQ(head.find("line 31"), std::string::npos);
    EXPECT_NE(head.find("truncated"), std::string::npos) << head;
    EXPECT_EQ(head.rfind("line 1\n", 0), 0u);  // starts at the beginning
    // 30 kept lines plus the one truncation note.
    EXPECT_EQ(std::count(head.begin(), head.end(), '\n'), 31);
}

// The parser must understand what the compilers really print, not only hand-written samples.
TEST(CompileLog, ParsesARealNvrtcLog) {
    auto backend = make_backend("cuda");
    if (!backend) GTEST_SKIP() << "the CUDA backend is not compiled in";
    auto outcome = backend->compile_offline(
        "__global__ void k(float* out) {\n"
        "    int unused_x;\n"
        "    out[0] = undefined_foo;\n"
        "}\n",
        {}, backend->default_offline_arch());
    if (!outcome) GTEST_SKIP() << "NVRTC is not usable here: " << outcome.error().message;
    ASSERT_FALSE(outcome->module.has_value());
    const auto messages = parse_compile_log(outcome->log);
    bool found = false;
    for (const auto& m : messages)
        if (m.severity == "error" && m.line == 3 && m.message.find("undefined_foo") != std::string::npos) found = true;
    EXPECT_TRUE(found) << outcome->log;
}

TEST(CompileLog, ParsesARealOpenclLog) {
    auto backend = make_backend("opencl");
    if (!backend) GTEST_SKIP() << "the OpenCL backend is not compiled in";
    if (backend->probe().empty()) GTEST_SKIP() << "no OpenCL device: " << backend->unavailable_reason();
    auto device = backend->open(0);
    ASSERT_TRUE(device.has_value()) << device.error().message;
    auto outcome = (*device)->compile(
        "__kernel void k(__global float* out) {\n"
        "    out[0] = 1.0f;\n"
        "    out[1] = undefined_foo;\n"
        "}\n",
        {});
    ASSERT_TRUE(outcome.has_value()) << outcome.error().message;
    ASSERT_FALSE(outcome->module.has_value());
    const auto messages = parse_compile_log(outcome->log);
    bool found = false;
    for (const auto& m : messages)
        if (m.severity == "error" && m.line == 3 && m.column > 0 && m.message.find("undefined_foo") != std::string::npos)
            found = true;
    EXPECT_TRUE(found) << outcome->log;
}

// The compiler's name for the main source becomes the candidate's path in every layout; headers
// keep theirs, and lines that are not messages are left alone.
TEST(CompileLog, NamesTheCandidatesPathInsteadOfTheCompilersName) {
    const std::string log =
        "candidate.cu(12): error: identifier \"foo\" is undefined\n"
        "<source>:4:5: error: use of undeclared identifier 'foo'\n"
        "error: /root/.cache/pocl/kcache/tempfile_QLHiCc.cl:3:14: use of undeclared identifier 'bar'\n"
        "/tmp/pocl/abc/input.cl:2:9: warning: unused variable 'y'\n"
        "/usr/include/helper.h:7:1: error: in a header\n"
        "    foo = 1;\n"
        "1 error detected in the compilation of \"candidate.cu\".\n";
    EXPECT_EQ(name_source_in_log(log, "my/kernel.cl"),
              "my/kernel.cl(12): error: identifier \"foo\" is undefined\n"
              "my/kernel.cl:4:5: error: use of undeclared identifier 'foo'\n"
              "error: my/kernel.cl:3:14: use of undeclared identifier 'bar'\n"
              "my/kernel.cl:2:9: warning: unused variable 'y'\n"
              "/usr/include/helper.h:7:1: error: in a header\n"
              "    foo = 1;\n"
              "1 error detected in the compilation of \"my/kernel.cl\".\n");
    // The rewritten log still parses to the same lines.
    EXPECT_EQ(parse_compile_log(name_source_in_log(log, "my/kernel.cl")).size(), parse_compile_log(log).size());
    // Without a path: a stable name, never a temporary file's.
    EXPECT_EQ(name_source_in_log("error: /tmp/x/tempfile_1.cl:3:14: bad\n", ""), "error: candidate.cl:3:14: bad\n");
}

}  // namespace
}  // namespace kevo
