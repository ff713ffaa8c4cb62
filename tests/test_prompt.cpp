// build_prompt / describe_attempt: what a proposer is told (signatures, geometry, ceilings,
// structured feedback) and what it must never be told (held-out sizes).
#include <gtest/gtest.h>

#include <string>

#include <fmt/format.h>

#include "search/prompt.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

const char* kHeldout = "100x75x15";

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "heat2d";
    s.regime = "R1 stencil";
    s.bound = Bound::bandwidth;
    s.model = "8 B per cell per step";
    s.tolerance = "max |err| <= 1e-4";
    s.kernels = {{"heat_step",
                  {sig::const_ptr("u_in", ParamType::f32), sig::ptr("u_out", ParamType::f32), sig::value("nx", ParamType::u32),
                   sig::value("ny", ParamType::u32), sig::value("alpha", ParamType::f32)},
                  2, Dim3{16, 16, 1}}};
    const auto size = [](const char* label, bool heldout) { return SizeSpec{label, heldout, {}}; };
    s.profiles["small"] = {size("64x64x10", false), size("96x80x10", false), size(kHeldout, true)};
    // Another profile's held-out size that is in-distribution here must stay visible.
    s.profiles["paper"] = {size("256x256x50", false), size("64x64x10", true)};
    return s;
}

SizeResult timed_size(const char* label, double fraction, bool heldout = false) {
    SizeResult s;
    s.label = label;
    s.heldout = heldout;
    s.correct = true;
    s.timed = true;
    s.seconds = s.seconds_min = s.seconds_max = 2.5e-4;
    s.achieved = 41.5;
    s.unit = "GB/s";
    s.ceiling = 83.0;
    s.fraction = fraction;
    return s;
}

const std::string kSeed =
    "__kernel void heat_step(__global const float* u_in, __global float* u_out, uint nx, uint ny, float alpha) {\n"
    "    const uint x = get_global_id(0), y = get_global_id(1);\n"
    "    if (x >= nx || y >= ny) return;\n"
    "    u_out[y * nx + x] = u_in[y * nx + x];\n"
    "}\n";

struct Fixture {
    TaskSpec spec = make_spec();
    ProposalContext context;

    Fixture() {
        context.spec = &spec;
        context.language = language_named("opencl");
        context.brief = "# heat2d brief\nA field advances one explicit Euler step.\n";
        context.device.backend = "opencl";
        context.device.name = "pthread-haswell-AMD EPYC";
        context.device.compute_units = 2;
        context.device.is_cpu = true;
        context.device.max_threads_per_block = 4096;
        context.ceilings.source = "measured";
        context.ceilings.bandwidth_gbs = 83.31;
        context.ceilings.fp32_gflops = 612.5;
        context.profile = "small";
        context.iteration = 3;

        Attempt& inc = context.incumbent;
        inc.iteration = 0;
        inc.source = kSeed;
        inc.result.verdict = Verdict::ok;
        inc.result.score = 0.5;
        inc.result.sizes = {timed_size("64x64x10", 0.5), timed_size("96x80x10", 0.5),
                            // Must never be shown, even though it is here.
                            timed_size(kHeldout, 0.77, true)};
        inc.result.heldout_fraction = 0.77;
        inc.result.diagnostics = "all sizes correct\nheld-out 100x75x15: fraction 0.77\n";
        KernelResources k;
        k.kernel = "heat_step";
        k.registers = 24;
        k.shared_bytes = 0;
        k.local_bytes = 0;
        k.block = {32, 8};
        k.per_thread = {1, 4};
        inc.result.resources = {k};
        inc.result.defines = {{"TILE", "32"}};
    }
};

TEST(Prompt, HoldsSignaturesGeometryDeviceAndCeilings) {
    Fixture f;
    const std::string p = build_prompt(f.context);
    EXPECT_NE(p.find("# heat2d brief"), std::string::npos);
    EXPECT_NE(p.find("OpenCL C"), std::string::npos);
    EXPECT_NE(p.find(signature_text(f.spec.kernels[0], language_named("opencl"))), std::string::npos);
    EXPECT_EQ(p.find(signature_text(f.spec.kernels[0], language_named("cuda"))), std::string::npos);
    // Geometry in force from the incumbent's resources, and the launch contract.
    EXPECT_NE(p.find("heat_step: block=32,8 per_thread=1,4"), std::string::npos) << p;
    EXPECT_NE(p.find("TILE=32"), std::string::npos);
    EXPECT_NE(p.find("// kevo: launch heat_step"), std::string::npos);
    EXPECT_NE(p.find("ceil(ceil(domain / per_thread) / block)"), std::string::npos);
    // Device and ceilings.
    EXPECT_NE(p.find("pthread-haswell-AMD EPYC"), std::string::npos);
    EXPECT_NE(p.find("compute units: 2"), std::string::npos);
    EXPECT_NE(p.find("83.3 GB/s"), std::string::npos) << p;
    EXPECT_NE(p.find("612.5 GFLOP/s"), std::string::npos);
    // Scoring rule, incumbent with its per-size results, answer format.
    EXPECT_NE(p.find("geometric mean"), std::string::npos);
    EXPECT_NE(p.find(kSeed), std::string::npos);
    EXPECT_NE(p.find("64x64x10: correct"), std::string::npos);
    EXPECT_NE(p.find("fraction 0.5000"), std::string::npos);
    EXPECT_NE(p.find("24 registers"), std::string::npos);
    EXPECT_NE(p.find("<<<<<<< SEARCH"), std::string::npos);
    EXPECT_NE(p.find("```opencl"), std::string::npos);
}

TEST(Prompt, CudaPromptUsesCudaSignature) {
    Fixture f;
    f.context.language = language_named("cuda");
    const std::string p = build_prompt(f.context);
    EXPECT_NE(p.find(signature_text(f.spec.kernels[0], language_named("cuda"))), std::string::npos);
    EXPECT_NE(p.find("CUDA C++"), std::string::npos);
}

TEST(Prompt, DefaultGeometryWhenIncumbentHasNoResources) {
    Fixture f;
    f.context.incumbent.result.resources.clear();
    const std::string p = build_prompt(f.context);
    EXPECT_NE(p.find("heat_step: block=16x16 per_thread=1 (task default)"), std::string::npos) << p;
}

TEST(Prompt, CompileErrorsWithLineNumbers) {
    Fixture f;
    Attempt prev;
    prev.iteration = 2;
    prev.source = kSeed;
    prev.source.replace(prev.source.find("return;"), 7, "return");
    prev.result.verdict = Verdict::compile_error;
    prev.result.diagnostics = "compilation failed";
    prev.result.compile_messages = {{3, 35, "error", "expected ';' after return statement"},
                                    {2, 5, "warning", "unused variable"}};
    f.context.previous = prev;
    const std::string p = build_prompt(f.context);
    EXPECT_NE(p.find("## Previous attempt (iteration 2)"), std::string::npos);
    EXPECT_NE(p.find("Verdict: compile_error"), std::string::npos);
    EXPECT_NE(p.find("line 3, column 35: error: expected ';' after return statement"), std::string::npos) << p;
    // The offending line is quoted, and errors come before warnings.
    EXPECT_NE(p.find("| " + std::string("    if (x >= nx || y >= ny) return\n")), std::string::npos) << p;
    EXPECT_LT(p.find("line 3, column 35"), p.find("line 2, column 5"));
    // The previous source differs from the incumbent's, so it is shown.
    EXPECT_NE(p.find(prev.source), std::string::npos);
    EXPECT_NE(p.find("edits against the source of the previous attempt"), std::string::npos);
}

TEST(Prompt, WorstIndexOfFailingSize) {
    Fixture f;
    Attempt prev;
    prev.iteration = 2;
    prev.source = kSeed;
    prev.result.verdict = Verdict::incorrect;
    SizeResult bad;
    bad.label = "96x80x10";
    bad.correct = false;
    bad.error_kind = "max_abs";
    bad.error = 0.125;
    bad.tolerance = 1e-4;
    bad.worst_index = 7679;
    bad.diagnostics = "worst at x=79 y=95: got 0.5 want 0.375";
    prev.result.sizes = {timed_size("64x64x10", 0.4), bad};
    f.context.previous = prev;
    const std::string p = build_prompt(f.context);
    EXPECT_NE(p.find("96x80x10: INCORRECT, max_abs error 0.125 (tolerance 0.0001), worst at flat index 7679"),
              std::string::npos) << p;
    EXPECT_NE(p.find("got 0.5 want 0.375"), std::string::npos);
    // Same source as the incumbent: not repeated, but said.
    EXPECT_NE(p.find("Its source is the incumbent's"), std::string::npos);

    const std::string d = describe_attempt(prev, language_named("opencl"));
    EXPECT_NE(d.find("worst at flat index 7679"), std::string::npos);
}

TEST(Prompt, NeverAHeldOutLabel) {
    Fixture f;
    Attempt prev = f.context.incumbent;
    prev.iteration = 2;
    prev.source = kSeed + "// variant\n";
    prev.result.verdict = Verdict::incorrect;
    SizeResult bad;
    bad.label = kHeldout;
    bad.heldout = true;
    bad.correct = false;
    bad.error_kind = "max_abs";
    bad.worst_index = 31337;
    bad.diagnostics = "held-out size failed";
    prev.result.sizes.push_back(bad);
    prev.result.diagnostics = "size 100x75x15 incorrect: max_abs 3.0\nsecond line is fine";
    prev.result.warnings = {"size 100x75x15: implausible"};
    f.context.previous = prev;
    f.context.history = {prev, f.context.incumbent};

    const std::string p = build_prompt(f.context);
    EXPECT_EQ(p.find(kHeldout), std::string::npos) << p;
    EXPECT_EQ(p.find("31337"), std::string::npos);
    EXPECT_EQ(p.find("0.77"), std::string::npos);  // the held-out fraction
    EXPECT_NE(p.find("second line is fine"), std::string::npos);
    EXPECT_NE(p.find("withheld"), std::string::npos);
    // 64x64x10 is held out in another profile but in-distribution in this one: it stays.
    EXPECT_NE(p.find("64x64x10: correct"), std::string::npos);

    // describe_attempt alone filters too.
    const std::string d = describe_attempt(prev, language_named("opencl"));
    EXPECT_EQ(d.find(kHeldout), std::string::npos) << d;
    EXPECT_EQ(d.find("31337"), std::string::npos);
}

TEST(Prompt, NumericHeldOutLabelWithheldOnlyAsASize) {
    // 1-D tasks label sizes by a bare number, which also appears as an ordinary number.
    TaskSpec spec = make_spec();
    spec.profiles["small"] = {SizeSpec{"256", false, {}}, SizeSpec{"384", true, {}}};
    ProposalContext c;
    c.spec = &spec;
    c.profile = "small";
    c.incumbent.source = kSeed;
    c.incumbent.result.verdict = Verdict::rejected;
    c.incumbent.result.diagnostics = "block of 384 threads exceeds the kernel's maximum of 256\n"
                                     "size 384 (nominal trial): max_abs 2.0\n"
                                     "384: fraction 0.9\n";
    const std::string p = build_prompt(c);
    EXPECT_NE(p.find("block of 384 threads exceeds"), std::string::npos) << p;
    EXPECT_EQ(p.find("size 384"), std::string::npos) << p;
    EXPECT_EQ(p.find("384:"), std::string::npos) << p;
}

TEST(Prompt, RealTasksNeverShowTheirHeldOutLabels) {
    // Every task of the suite, every profile: the prompt built from the real spec and brief.
    ASSERT_FALSE(task_names().empty());
    for (const auto& name : task_names()) {
        auto task = make_task(name);
        ASSERT_TRUE(task) << task.error().message;
        const TaskSpec& spec = (*task)->spec();
        for (const auto& [profile, sizes] : spec.profiles) {
            ProposalContext c;
            c.spec = &spec;
            c.profile = profile;
            c.brief = std::string(task_file(name, "brief.md"));
            c.incumbent.source = std::string(task_file(name, "seed.cl"));
            EXPECT_FALSE(c.brief.empty()) << name;
            for (const auto& s : sizes) c.incumbent.result.sizes.push_back(timed_size(s.label.c_str(), 0.3, s.heldout));
            const std::string p = build_prompt(c);
            for (const auto& s : sizes) {
                if (!s.heldout) continue;
                EXPECT_EQ(p.find(s.label + ":"), std::string::npos) << name << "/" << profile << " shows " << s.label;
            }
        }
    }
}

TEST(Prompt, FreshApproachDropsHistory) {
    Fixture f;
    Attempt old;
    old.iteration = 1;
    old.source = kSeed + "// attempt one\n";
    old.result.verdict = Verdict::incorrect;
    old.result.diagnostics = "distinctive-history-marker";
    Attempt prev = old;
    prev.iteration = 2;
    prev.source = kSeed + "// attempt two\n";
    prev.result.diagnostics = "distinctive-previous-marker";
    f.context.history = {old, prev};
    f.context.previous = prev;

    const std::string with_history = build_prompt(f.context);
    EXPECT_NE(with_history.find("## Recent history"), std::string::npos);
    EXPECT_NE(with_history.find("iteration 1: incorrect"), std::string::npos);
    EXPECT_NE(with_history.find("distinctive-history-marker"), std::string::npos);
    EXPECT_EQ(with_history.find("structurally different"), std::string::npos);

    f.context.fresh_approach = true;
    const std::string fresh = build_prompt(f.context);
    EXPECT_EQ(fresh.find("## Recent history"), std::string::npos);
    EXPECT_EQ(fresh.find("distinctive-history-marker"), std::string::npos);
    EXPECT_EQ(fresh.find("distinctive-previous-marker"), std::string::npos);
    EXPECT_EQ(fresh.find("// attempt two"), std::string::npos);
    EXPECT_NE(fresh.find("structurally different"), std::string::npos);
    // The incumbent stays, and edits then apply to it.
    EXPECT_NE(fresh.find(kSeed), std::string::npos);
    EXPECT_NE(fresh.find("edits against the source of the incumbent"), std::string::npos);
}

// A 2 MB rejected candidate is quoted only in part: its head and tail with a marker saying how much
// was cut; a large incumbent likewise up to its own bound.
TEST(Prompt, ARejectedOrOversizedSourceIsQuotedOnlyInPart) {
    Fixture f;
    std::string huge = kSeed;
    for (int i = 0; huge.size() < 2'000'000; ++i) huge += fmt::format("// filler line {} of a huge kernel\n", i);
    huge += "// the-last-line-of-the-huge-kernel\n";
    Attempt prev;
    prev.iteration = 1;
    prev.source = huge;
    prev.result.verdict = Verdict::rejected;
    prev.result.diagnostics = "static scan: source is 2000000 bytes; the limit is 262144 bytes";
    f.context.previous = prev;
    const PromptLimits limits;
    const std::string p = build_prompt(f.context, limits);
    EXPECT_LT(p.size(), 40'000u);
    EXPECT_NE(p.find(kSeed), std::string::npos) << "the head is shown";
    EXPECT_NE(p.find("the-last-line-of-the-huge-kernel"), std::string::npos) << "the tail is shown";
    EXPECT_NE(p.find("characters ("), std::string::npos);
    EXPECT_NE(p.find("lines) cut here]"), std::string::npos);
    EXPECT_NE(p.find(fmt::format("This source is {} characters long", huge.size())), std::string::npos);
    EXPECT_EQ(p.find("filler line 30000 "), std::string::npos);

    // Not rejected but as large: the quote bound for any source (48,000 characters) holds.
    f.context.previous->result.verdict = Verdict::incorrect;
    const std::string q = build_prompt(f.context, limits);
    EXPECT_GT(q.size(), 40'000u);
    EXPECT_LT(q.size(), 60'000u);
}

// Over the token bound, history goes first, then the previous source is cut, and the task's own text
// (brief, signatures, answer format) stays.
TEST(Prompt, TheWholePromptIsKeptUnderItsTokenBoundHistoryFirst) {
    Fixture f;
    f.context.brief = "# heat2d brief\nthe-brief-marker\n";
    for (int i = 1; i <= 40; ++i) {
        Attempt a;
        a.iteration = i;
        a.source = kSeed;
        a.result.verdict = Verdict::incorrect;
        a.result.diagnostics = fmt::format("history-{}-{}", i, std::string(150, 'x'));
        f.context.history.push_back(a);
    }
    Attempt prev;
    prev.iteration = 40;
    prev.source = kSeed + std::string(30'000, ' ') + "\n// previous-tail\n";
    prev.result.verdict = Verdict::incorrect;
    f.context.previous = prev;
    const std::string full = build_prompt(f.context);
    ASSERT_NE(full.find("- iteration 1: incorrect"), std::string::npos);

    PromptLimits limits;
    limits.max_tokens = static_cast<int>(estimated_tokens(full)) - 500;  // a little history must go
    const std::string cut = build_prompt(f.context, limits);
    EXPECT_LE(estimated_tokens(cut), static_cast<size_t>(limits.max_tokens));
    EXPECT_EQ(cut.find("- iteration 1: incorrect"), std::string::npos) << "the oldest history line goes first";
    EXPECT_NE(cut.find("- iteration 40: incorrect"), std::string::npos);
    EXPECT_NE(cut.find("older attempts left out to keep the prompt under its bound"), std::string::npos);
    EXPECT_NE(cut.find("// previous-tail"), std::string::npos) << "the previous source is still whole";

    limits.max_tokens = 4000;  // 16,000 characters: all history, then most of the previous source
    const std::string small = build_prompt(f.context, limits);
    EXPECT_LE(estimated_tokens(small), 4000u);
    EXPECT_EQ(small.find("## Recent history"), std::string::npos);
    EXPECT_NE(small.find("the-brief-marker"), std::string::npos);
    EXPECT_NE(small.find("## Answer format"), std::string::npos);
    EXPECT_NE(small.find("__kernel void heat_step(__global const float* u_in"), std::string::npos);
}

}  // namespace
}  // namespace kevo
