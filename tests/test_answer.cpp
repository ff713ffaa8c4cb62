// parse_answer: fenced blocks (the last defining the entry point wins, quotes never), SEARCH/REPLACE edits, and answers with
// nothing usable.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <string>

#include "search/answer.hpp"
#include "search/proposers/common.hpp"

namespace kevo {
namespace {

const std::string kPrevious =
    "// kevo: launch heat_step block=16,16\n"
    "__kernel void heat_step(__global const float* u_in, __global float* u_out, uint nx, uint ny, float alpha) {\n"
    "    const uint x = get_global_id(0);\n"
    "    const uint y = get_global_id(1);\n"
    "    if (x >= nx || y >= ny) return;\n"
    "    u_out[y * nx + x] = u_in[y * nx + x];\n"
    "}\n";

TEST(Answer, TheLastBlockDefiningTheEntryPointIsChosen) {
    const std::string answer =
        "Here is the idea:\n"
        "```cuda\n"
        "__global__ void k() {}\n"
        "```\n"
        "And the complete file:\n"
        "```cuda\n"
        "// full version\n"
        "extern \"C\" __global__ void heat_step(const float* a, float* b, unsigned nx, unsigned ny, float alpha) {\n"
        "    unsigned x = blockIdx.x * blockDim.x + threadIdx.x;\n"
        "}\n"
        "```\n"
        "A shorter note:\n"
        "```cu\n"
        "__global__ void k2() { }\n"
        "```\n";
    AnswerRules rules;
    rules.language = language_named("cuda");
    rules.entry_points = {"heat_step"};
    const ParsedAnswer p = parse_answer(answer, rules);
    ASSERT_TRUE(p.ok) << p.reason;
    EXPECT_EQ(p.source.rfind("// full version\n", 0), 0u);
    EXPECT_EQ(p.source.find("```"), std::string::npos);
    EXPECT_EQ(p.source.back(), '\n');
    EXPECT_NE(p.reason.find("of 3 kernel blocks"), std::string::npos) << p.reason;
    // Without entry points the last kernel block is the one.
    EXPECT_EQ(parse_answer(answer, "", language_named("cuda")).source, "__global__ void k2() { }\n");
}

// review-llm M2 "twoblocks": the model quotes the seed (longer), then writes its kernel; the quote
// never wins, also when it comes last.
TEST(Answer, AQuotedSeedNeverWinsOverTheModelsKernel) {
    const std::string improved =
        "// kevo: launch heat_step block=64,4\n"
        "__kernel void heat_step(__global const float* u_in, __global float* u_out, uint nx, uint ny, float alpha) {\n"
        "    u_out[0] = u_in[0];\n"
        "}\n";
    AnswerRules rules;
    rules.entry_points = {"heat_step"};
    rules.quoted = {kPrevious};
    const std::string quote_first = "Your current kernel is:\n```opencl\n" + kPrevious + "```\nImproved version:\n```opencl\n" +
                                    improved + "```\n";
    ParsedAnswer p = parse_answer(quote_first, rules);
    ASSERT_TRUE(p.ok) << p.reason;
    EXPECT_EQ(p.source, improved);
    EXPECT_NE(p.reason.find("1 quoting an earlier kernel"), std::string::npos) << p.reason;
    const std::string quote_last = "```opencl\n" + improved + "```\nwhich replaces:\n```opencl\n" + kPrevious + "  \n```\n";
    p = parse_answer(quote_last, rules);
    ASSERT_TRUE(p.ok) << p.reason;
    EXPECT_EQ(p.source, improved);
    // Only the quote: it is the answer (and later a duplicate, which is what it is).
    p = parse_answer("```opencl\n" + kPrevious + "```\n", rules);
    ASSERT_TRUE(p.ok);
    EXPECT_EQ(p.source, kPrevious);
}

TEST(Answer, BlockWithoutKernelIgnored) {
    // The longest block is a host-side illustration with no kernel; the shorter kernel block wins.
    const std::string answer =
        "```c\n"
        "// host code, a long illustration that is not a kernel at all\n"
        "int main() { for (int i = 0; i < 100; ++i) { launch(); launch(); launch(); } return 0; }\n"
        "```\n"
        "```opencl\n"
        "__kernel void heat_step(__global float* u) { }\n"
        "```\n"
        "```python\n"
        "# __kernel void in a python block is an illustration and long enough to win if it counted\n"
        "```\n";
    const ParsedAnswer p = parse_answer(answer, "", language_named("opencl"));
    ASSERT_TRUE(p.ok) << p.reason;
    EXPECT_EQ(p.source, "__kernel void heat_step(__global float* u) { }\n");

    // The same block is not a CUDA kernel: nothing usable, and the reason says what was found.
    const ParsedAnswer q = parse_answer(answer, "", language_named("cuda"));
    EXPECT_FALSE(q.ok);
    EXPECT_NE(q.reason.find("OpenCL"), std::string::npos) << q.reason;
}

TEST(Answer, UntaggedBlockAndKernelVoidSpellingAccepted) {
    const ParsedAnswer p = parse_answer("```\nkernel void f(global float* a) { a[0] = 1; }\n```", "", language_named("opencl"));
    ASSERT_TRUE(p.ok) << p.reason;
    EXPECT_EQ(p.source, "kernel void f(global float* a) { a[0] = 1; }\n");
}

TEST(Answer, EditsAppliedInOrder) {
    const std::string answer =
        "Two changes:\n"
        "<<<<<<< SEARCH\n"
        "// kevo: launch heat_step block=16,16\n"
        "=======\n"
        "// kevo: launch heat_step block=32,8\n"
        ">>>>>>> REPLACE\n"
        "and\n"
        "```\n"
        "<<<<<<< SEARCH\n"
        "    u_out[y * nx + x] = u_in[y * nx + x];\n"
        "=======\n"
        "    const float c = u_in[y * nx + x];\n"
        "    u_out[y * nx + x] = c;\n"
        ">>>>>>> REPLACE\n"
        "```\n";
    const ParsedAnswer p = parse_answer(answer, kPrevious, language_named("opencl"));
    ASSERT_TRUE(p.ok) << p.reason;
    EXPECT_NE(p.reason.find("2"), std::string::npos) << p.reason;
    std::string expected = kPrevious;
    expected.replace(expected.find("block=16,16"), 11, "block=32,8");
    const std::string old_line = "    u_out[y * nx + x] = u_in[y * nx + x];\n";
    expected.replace(expected.find(old_line), old_line.size(),
                     "    const float c = u_in[y * nx + x];\n    u_out[y * nx + x] = c;\n");
    EXPECT_EQ(p.source, expected);
}

TEST(Answer, EditThatDeletesLines) {
    const std::string answer =
        "<<<<<<< SEARCH\n"
        "    if (x >= nx || y >= ny) return;\n"
        "=======\n"
        ">>>>>>> REPLACE\n";
    const ParsedAnswer p = parse_answer(answer, kPrevious, language_named("opencl"));
    ASSERT_TRUE(p.ok) << p.reason;
    EXPECT_EQ(p.source.find("return;"), std::string::npos);
    EXPECT_NE(p.source.find("get_global_id(1);\n    u_out"), std::string::npos);
}

TEST(Answer, EditWithAbsentSearchTextRejected) {
    const std::string answer =
        "<<<<<<< SEARCH\n"
        "// kevo: launch heat_step block=16,16\n"
        "=======\n"
        "// kevo: launch heat_step block=64,4\n"
        ">>>>>>> REPLACE\n"
        "<<<<<<< SEARCH\n"
        "    this line is not in the source;\n"
        "=======\n"
        "    whatever;\n"
        ">>>>>>> REPLACE\n";
    const ParsedAnswer p = parse_answer(answer, kPrevious, language_named("opencl"));
    EXPECT_FALSE(p.ok);
    EXPECT_TRUE(p.source.empty());
    EXPECT_NE(p.reason.find("edit 2"), std::string::npos) << p.reason;
    EXPECT_NE(p.reason.find("not found"), std::string::npos) << p.reason;
}

TEST(Answer, EditWithAmbiguousSearchTextRejected) {
    const std::string answer =
        "<<<<<<< SEARCH\n"
        "    const uint x = get_global_id(0);\n"
        "    const uint y = get_global_id(1);\n"
        "=======\n"
        "    const uint x = get_global_id(0) * 2;\n"
        ">>>>>>> REPLACE\n";
    const std::string doubled = kPrevious + kPrevious;
    const ParsedAnswer p = parse_answer(answer, doubled, language_named("opencl"));
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.reason.find("edit 1"), std::string::npos) << p.reason;
    EXPECT_NE(p.reason.find("2 places"), std::string::npos) << p.reason;
    // A SEARCH text that is only part of a line does not match mid-line.
    const ParsedAnswer q = parse_answer("<<<<<<< SEARCH\nget_global_id(0);\n=======\nx\n>>>>>>> REPLACE\n", kPrevious,
                                        language_named("opencl"));
    EXPECT_FALSE(q.ok);
}

TEST(Answer, EditsWithoutPreviousSourceRejected) {
    const ParsedAnswer p = parse_answer("<<<<<<< SEARCH\na\n=======\nb\n>>>>>>> REPLACE\n", "", language_named("cuda"));
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.reason.find("no previous source"), std::string::npos) << p.reason;
}

TEST(Answer, UnterminatedEditRejected) {
    const ParsedAnswer p = parse_answer("<<<<<<< SEARCH\na\n=======\nb\n", kPrevious, language_named("cuda"));
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.reason.find("REPLACE"), std::string::npos) << p.reason;
}

TEST(Answer, ProseOnlyIsNotOk) {
    const ParsedAnswer p = parse_answer(
        "I would use shared memory tiles and a larger block, which should improve reuse of the halo cells.",
        kPrevious, language_named("opencl"));
    EXPECT_FALSE(p.ok);
    EXPECT_TRUE(p.source.empty());
    EXPECT_EQ(p.reason, "no fenced code block with a kernel and no edits");
}

TEST(Answer, TruncatedFenceNamed) {
    const ParsedAnswer p = parse_answer("```cuda\n__global__ void k(float* a) {\n  a[0] = 1;\n", "", language_named("cuda"));
    EXPECT_FALSE(p.ok);
    EXPECT_NE(p.reason.find("never closed"), std::string::npos) << p.reason;
}

TEST(Answer, CrlfAnswersWork) {
    const std::string fenced = "Answer:\r\n```cuda\r\n__global__ void k(float* a) {\r\n  a[0] = 1;\r\n}\r\n```\r\n";
    const ParsedAnswer p = parse_answer(fenced, "", language_named("cuda"));
    ASSERT_TRUE(p.ok) << p.reason;
    EXPECT_EQ(p.source, "__global__ void k(float* a) {\n  a[0] = 1;\n}\n");

    // CRLF edits against an LF source, and an LF edit against a CRLF source.
    const std::string edit =
        "<<<<<<< SEARCH\r\n    if (x >= nx || y >= ny) return;\r\n=======\r\n    if (x >= nx) return;\r\n>>>>>>> REPLACE\r\n";
    const ParsedAnswer q = parse_answer(edit, kPrevious, language_named("opencl"));
    ASSERT_TRUE(q.ok) << q.reason;
    EXPECT_NE(q.source.find("    if (x >= nx) return;\n"), std::string::npos);
    EXPECT_EQ(q.source.find('\r'), std::string::npos);

    std::string crlf_previous;
    for (char c : kPrevious) crlf_previous += c == '\n' ? std::string("\r\n") : std::string(1, c);
    const std::string lf_edit =
        "<<<<<<< SEARCH\n    if (x >= nx || y >= ny) return;\n=======\n    if (y >= ny) return;\n>>>>>>> REPLACE\n";
    const ParsedAnswer r = parse_answer(lf_edit, crlf_previous, language_named("opencl"));
    ASSERT_TRUE(r.ok) << r.reason;
    EXPECT_NE(r.source.find("    if (y >= ny) return;\n"), std::string::npos);
}

// A reasoning model drafts a longer kernel inside <think> and gives the real one after it: the
// draft must not win because it is longer (issue 10, item 10).
TEST(Answer, ReasoningSectionsAreNotTheAnswer) {
    const std::string draft = "__global__ void saxpy(const float* x, float* y, float a, unsigned n) {\n"
                              "  // draft: a long, wrong first attempt\n  unsigned i = threadIdx.x;\n"
                              "  if (i < n) y[i] = a * x[i];\n  // more draft lines\n  // and more\n}\n";
    const std::string final_kernel =
        "__global__ void saxpy(const float* x, float* y, float a, unsigned n) {\n"
        "  unsigned i = blockIdx.x * blockDim.x + threadIdx.x;\n  if (i < n) y[i] = a * x[i] + y[i];\n}\n";
    for (const char* tag : {"think", "THINKING", "reasoning"}) {
        const std::string answer = fmt::format("<{0}>Let me try:\n```cuda\n{1}```\nNo, that drops y.</{0}>\n"
                                               "Here is the kernel:\n```cuda\n{2}```\n",
                                               tag, draft, final_kernel);
        const ParsedAnswer p = parse_answer(answer, "", language_named("cuda"));
        ASSERT_TRUE(p.ok) << tag << ": " << p.reason;
        EXPECT_EQ(p.source, final_kernel) << tag;
    }
}

TEST(Answer, AnswersThatAreAllReasoningSaySo) {
    const ParsedAnswer unclosed = parse_answer("<think>\n```cuda\n__global__ void k(float* a) { a[0] = 1; }\n```\n"
                                               "still thinking", "", language_named("cuda"));
    EXPECT_FALSE(unclosed.ok);
    EXPECT_NE(unclosed.reason.find("never closed"), std::string::npos) << unclosed.reason;

    const ParsedAnswer only_draft = parse_answer("<think>```cuda\n__global__ void k(float* a) { a[0] = 1; }\n```</think>"
                                                 "I could not finish.", "", language_named("cuda"));
    EXPECT_FALSE(only_draft.ok);
    EXPECT_NE(only_draft.reason.find("outside the reasoning"), std::string::npos) << only_draft.reason;

    // Edits inside the reasoning are drafts too; the ones after it apply.
    const std::string edit_answer =
        "<think><<<<<<< SEARCH\n    if (x >= nx || y >= ny) return;\n=======\n    return;\n>>>>>>> REPLACE\n</think>\n"
        "<<<<<<< SEARCH\n    if (x >= nx || y >= ny) return;\n=======\n    if (x >= nx) return;\n>>>>>>> REPLACE\n";
    const ParsedAnswer edits = parse_answer(edit_answer, kPrevious, language_named("opencl"));
    ASSERT_TRUE(edits.ok) << edits.reason;
    EXPECT_NE(edits.source.find("    if (x >= nx) return;\n"), std::string::npos) << edits.source;
}

// review-llm L4: an edit that does not apply names the kernel it was applied to: the previous
// attempt, or the incumbent when the prompt withheld the previous one (a fresh approach).
TEST(Answer, AFailedEditNamesTheKernelItWasAppliedTo) {
    ProposalContext context;
    context.incumbent.source = "__kernel void k() { int incumbent = 1; }\n";
    context.previous.emplace();
    context.previous->source = "__kernel void k() { int previous = 2; }\n";
    const std::string edit = "<<<<<<< SEARCH\nint absent = 3;\n=======\nint b = 4;\n>>>>>>> REPLACE\n";
    for (const bool fresh : {false, true}) {
        context.fresh_approach = fresh;
        Proposal proposal;
        fill_from_answer(proposal, edit, context);
        const std::string name = fresh ? "not found in the incumbent" : "not found in the previous source";
        EXPECT_NE(proposal.note.find(name), std::string::npos) << proposal.note;
    }
}

}  // namespace
}  // namespace kevo
