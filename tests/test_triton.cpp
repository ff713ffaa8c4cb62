// Triton candidates on the host, no GPU: every Triton seed compiles with the pinned Triton to an
// sm_90 cubin whose parameters match the task's signature; hostile files are refused by the
// syntax-tree check before any of their Python runs; a compiler made to hang or to allocate without
// bound is cut at the deadline or the memory limit; a missing Triton is kevo's environment error.
#include <gtest/gtest.h>

#include <chrono>
#include <filesystem>

#include "backend/kernel_language.hpp"
#include "eval/compile_stage.hpp"
#include "eval/directives.hpp"
#include "eval/static_scan.hpp"
#include "kevo_process.hpp"
#include "pack/pack.hpp"
#include "search/answer.hpp"
#include "task/registry.hpp"
#include "temp_dir.hpp"
#include "triton_python.hpp"

namespace kevo {
namespace {

Language triton() { return language_named("triton"); }

const TaskSpec& spec_of(const std::string& name) {
    static std::map<std::string, std::unique_ptr<Task>> tasks;
    auto& task = tasks[name];
    if (!task) {
        auto made = make_task(name);
        task = std::move(*made);
    }
    return task->spec();
}

// The compile stage as an evaluation runs it, for a Triton source (the device compiler is never called).
Expected<CompileStage> compile(const std::string& task, const std::string& source, double timeout_s = 60) {
    EvalRequest request;
    request.task = task;
    request.source = source;
    request.source_name = "candidate.py";
    request.language = "triton";
    request.compile_timeout_s = timeout_s;
    return run_compile_stage(spec_of(task), request, triton(), "sm_90",
                             [](const std::string&, const std::vector<std::string>&, const std::string&) -> Expected<CompileOutcome> {
                                 ADD_FAILURE() << "the device's compiler was called for a Triton source";
                                 return CompileOutcome{};
                             });
}

const char* kSaxpyHeader = "import triton\nimport triton.language as tl\n\n";
const char* kSaxpyBody = R"(
@triton.jit
def saxpy(x, y, a, n, BLOCK: tl.constexpr = 1024):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    inside = offsets < n
    tl.store(y + offsets, a * tl.load(x + offsets, mask=inside) + tl.load(y + offsets, mask=inside), mask=inside)
)";

std::string saxpy_with(const std::string& extra_module_lines) {
    return std::string(kSaxpyHeader) + extra_module_lines + kSaxpyBody;
}

TEST(TritonLanguage, IsRegisteredForPyFilesAndCompiledByTheCudaBackend) {
    ASSERT_TRUE(triton());
    EXPECT_EQ(language_for_suffix("py"), triton());
    EXPECT_EQ(triton()->backend, "cuda");
    EXPECT_EQ(default_language_of("cuda"), language_named("cuda"));  // CUDA C++ stays the default
    EXPECT_EQ(triton()->directive_comment, "#");
    EXPECT_EQ(render_signature(triton(), "saxpy", spec_of("saxpy").kernels.front().params),
              "@triton.jit\ndef saxpy(x, y, a, n, ...tl.constexpr parameters)  # x: *fp32 (read only), y: *fp32, a: fp32, "
              "n: u32");
    // The C scan does not read Python: `# kevo:` lines are not preprocessor directives to it.
    EXPECT_TRUE(scan_source("# kevo: tune BLOCK 256 512\n" + saxpy_with(""), triton()).accepted);
}

TEST(TritonLanguage, AnAnswersPythonBlockIsATritonCandidateAndNotAnOpenclOne) {
    const std::string answer = "Here is the kernel:\n```python\n" + saxpy_with("") + "```\n";
    const ParsedAnswer as_triton = parse_answer(answer, "", triton());
    ASSERT_TRUE(as_triton.ok) << as_triton.reason;
    EXPECT_NE(as_triton.source.find("@triton.jit"), std::string::npos);
    // A C-family target does not take a Python block, even one that mentions a C kernel.
    const ParsedAnswer as_opencl = parse_answer("```python\n# __kernel void saxpy(...)\n```\n", "", language_named("opencl"));
    EXPECT_FALSE(as_opencl.ok);
}

TEST(TritonLanguage, APrecompiledKernelsThreadsNotItsTileAreCheckedAgainstTheDevice) {
    DeviceInfo device;
    device.max_threads_per_block = 1024;
    device.max_block[0] = device.max_block[1] = 1024;
    device.max_block[2] = 64;
    Geometry g;
    g.block = {4096, 1, 1};  // a Triton tile: 4096 elements per program
    EXPECT_FALSE(validate_geometry("saxpy", g, device, KernelAttributes{}));
    g.threads = Dim3{128, 1, 1};  // num_warps 4
    const auto tile = validate_geometry("saxpy", g, device, KernelAttributes{});
    EXPECT_TRUE(tile) << "neither the thread count nor an axis limit applies to the tile: " << tile.error().message;
    // The grid divides the domain by the tile, not by the threads.
    EXPECT_EQ(grid_for(g, Dim3{10000, 1, 1}).x, 3u);
    g.block = {1, 1, 128};  // a tile deeper than a block may be along z
    EXPECT_TRUE(validate_geometry("k", g, device, KernelAttributes{}));
    g.threads = Dim3{2048, 1, 1};  // threads beyond the device's are refused still
    EXPECT_FALSE(validate_geometry("k", g, device, KernelAttributes{}));
}

TEST(TritonSeeds, EveryTritonSeedCompilesToAnSm90CubinWithTheTasksSignature) {
    KEVO_REQUIRE_TRITON();
    int seeds = 0;
    for (const std::string& name : task_names()) {
        const std::string_view seed = task_file(name, "seed.py");
        if (seed.empty()) continue;
        ++seeds;
        SCOPED_TRACE(name);
        auto stage = compile(name, std::string(seed));
        ASSERT_TRUE(stage) << stage.error().message;
        ASSERT_FALSE(stage->verdict) << stage->diagnostics;
        const auto& kernels = spec_of(name).kernels;
        ASSERT_EQ(stage->images.size(), kernels.size());
        const auto metadata = nlohmann::json::parse(stage->image_metadata);
        for (size_t k = 0; k < kernels.size(); ++k) {
            EXPECT_EQ(stage->images[k].kernel, kernels[k].name);
            EXPECT_TRUE(stage->images[k].binary.starts_with("\x7f" "ELF")) << "not a cubin";
            EXPECT_EQ(metadata[k]["params"].size(), kernels[k].params.size());
            // Triton 3.6 appends two scratch pointers that the launch passes as null.
            EXPECT_EQ(metadata[k]["hidden_params"], 2);
        }
        EXPECT_FALSE(stage->knobs.empty()) << "a seed declares its tune knobs";
    }
    // Every ML operator has one, and five scientific tasks.
    auto ml = resolve_pack("ml", "the ML pack");
    ASSERT_TRUE(ml) << ml.error().message;
    std::vector<std::string> required = *ml;
    for (const char* t : {"saxpy", "heat2d", "lbm", "nbody", "fft3d"}) required.push_back(t);
    for (const auto& t : required) EXPECT_FALSE(task_file(t, "seed.py").empty()) << t << " has no Triton seed";
    EXPECT_GE(seeds, static_cast<int>(required.size()));
}

TEST(TritonSeeds, KnobsReachTheCompilerAsConstexprsAndWarps) {
    KEVO_REQUIRE_TRITON();
    EvalRequest request;
    request.task = "saxpy";
    request.source = std::string(task_file("saxpy", "seed.py"));
    request.language = "triton";
    request.defines = {{"BLOCK", "256"}, {"num_warps", "8"}};
    auto stage = run_compile_stage(spec_of("saxpy"), request, triton(), "sm_90", {});
    ASSERT_TRUE(stage) << stage.error().message;
    ASSERT_FALSE(stage->verdict) << stage->diagnostics;
    const auto metadata = nlohmann::json::parse(stage->image_metadata);
    EXPECT_EQ(metadata[0]["constexprs"]["BLOCK"], 256);
    EXPECT_EQ(metadata[0]["num_warps"], 8);
    // What the launch takes from it: 8 warps of 32 threads, and Triton's two scratch pointers as null.
    ASSERT_EQ(stage->images.size(), 1u);
    EXPECT_EQ(stage->images[0].threads_per_block, 256u);
    EXPECT_EQ(stage->images[0].trailing_null_params, 2u);
    EXPECT_EQ(stage->images[0].entry, "saxpy");
}

struct Hostile {
    const char* what;
    std::string source;
    int line;  // the line the refusal must name
};

TEST(TritonCheck, HostileFilesAreRejectedBeforeAnyOfTheirPythonRuns) {
    KEVO_REQUIRE_TRITON();
    const test::TempDir dir("triton-hostile");
    const std::string marker = dir.file("created-by-the-candidate");
    const std::string create = "open('" + marker + "', 'w').write('x')";
    const std::vector<Hostile> cases = {
        {"import os", "import os\n" + saxpy_with(""), 1},
        {"a top-level call that creates a file", saxpy_with(create + "\n"), 4},
        {"a module-level assignment that creates a file", saxpy_with("handle = " + create + "\n"), 4},
        {"a decorator that runs code", std::string(kSaxpyHeader) + "def run_it(f):\n    " + create +
                                           "\n    return f\n\n@run_it\ndef saxpy(x, y, a, n):\n    pass\n", 4},
        {"a jit argument that runs code", std::string(kSaxpyHeader) + "@triton.jit(do_not_specialize=" + create +
                                              ")\ndef saxpy(x, y, a, n):\n    pass\n", 4},
        {"a default value that runs code", std::string(kSaxpyHeader) + "@triton.jit\ndef saxpy(x, y, a, n, B: tl.constexpr = " +
                                               create + "):\n    pass\n", 5},
        {"a class", saxpy_with("class Sneaky:\n    pass\n"), 4},
        {"triton.autotune", std::string(kSaxpyHeader) + "@triton.autotune(configs=[], key=[])\ndef saxpy(x, y, a, n):\n    pass\n", 4},
        {"getattr in a kernel", std::string(kSaxpyHeader) + "@triton.jit\ndef saxpy(x, y, a, n):\n    f = getattr(tl, 'load')\n", 6},
        {"an underscore attribute", std::string(kSaxpyHeader) + "@triton.jit\ndef saxpy(x, y, a, n):\n    m = tl.__dict__\n", 6},
        {"a module behind triton.language (open through tl.core.builtins)",
         std::string(kSaxpyHeader) + "@triton.jit\ndef saxpy(x, y, a, n):\n    f = tl.core.builtins.open('" + marker +
             "', 'w')\n", 6},
        {"an import of a module behind triton.language", saxpy_with("from triton.language import core\n"), 4},
        {"triton.runtime in a kernel", std::string(kSaxpyHeader) + "@triton.jit\ndef saxpy(x, y, a, n):\n    d = triton.runtime\n", 6},
    };
    for (const Hostile& h : cases) {
        SCOPED_TRACE(h.what);
        auto stage = compile("saxpy", h.source);
        ASSERT_TRUE(stage) << stage.error().message;
        ASSERT_TRUE(stage->verdict);
        EXPECT_EQ(*stage->verdict, Verdict::rejected) << stage->diagnostics;
        EXPECT_NE(stage->diagnostics.find("line " + std::to_string(h.line) + ":"), std::string::npos) << stage->diagnostics;
        EXPECT_TRUE(stage->images.empty());
        EXPECT_FALSE(std::filesystem::exists(marker)) << "the candidate's code ran";
    }
    // Positive controls: the same kernel without the hostile line compiles, and so does one that
    // uses Triton's math and libdevice modules, as production kernels do.
    auto clean = compile("saxpy", saxpy_with(""));
    ASSERT_TRUE(clean) << clean.error().message;
    EXPECT_FALSE(clean->verdict) << clean->diagnostics;
    auto with_libdevice = compile("saxpy", std::string(kSaxpyHeader) + "from triton.language.extra.cuda import libdevice\n" +
                                               "@triton.jit\ndef saxpy(x, y, a, n, BLOCK: tl.constexpr = 256):\n"
                                               "    o = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)\n"
                                               "    v = tl.load(x + o, mask=o < n)\n"
                                               "    tl.store(y + o, tl.math.exp(v) + libdevice.pow(v, 2.0), mask=o < n)\n");
    ASSERT_TRUE(with_libdevice) << with_libdevice.error().message;
    EXPECT_FALSE(with_libdevice->verdict) << with_libdevice->diagnostics;
}

TEST(TritonCheck, ACompilerMadeToHangIsCutAtTheDeadline) {
    KEVO_REQUIRE_TRITON();
    const std::string source = std::string(kSaxpyHeader) +
                               "@triton.jit\ndef saxpy(x, y, a, n):\n    for i in tl.static_range(100000000):\n"
                               "        tl.store(y + i, a)\n";
    const auto start = std::chrono::steady_clock::now();
    auto stage = compile("saxpy", source, 6);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(stage) << stage.error().message;
    ASSERT_TRUE(stage->verdict);
    EXPECT_EQ(*stage->verdict, Verdict::compile_error);
    EXPECT_NE(stage->diagnostics.find("deadline"), std::string::npos) << stage->diagnostics;
    EXPECT_LT(seconds, 20);
}

TEST(TritonCheck, ACompilerMadeToAllocateWithoutBoundIsCutAtTheMemoryLimit) {
    KEVO_REQUIRE_TRITON();
    // 8 GiB of constant string at compile time, past the compiler's limit (here 3 GiB).
    const test::ScopedEnv limit("KEVO_TRITON_MEMORY_MB", "3072");
    const std::string source = std::string(kSaxpyHeader) +
                               "@triton.jit\ndef saxpy(x, y, a, n):\n    s = 'a' * (1 << 33)\n";
    auto stage = compile("saxpy", source, 60);
    ASSERT_TRUE(stage) << stage.error().message;
    ASSERT_TRUE(stage->verdict);
    EXPECT_EQ(*stage->verdict, Verdict::compile_error);
    EXPECT_NE(stage->diagnostics.find("memory"), std::string::npos) << stage->diagnostics;
}

TEST(TritonCheck, WrongSignaturesAndCompileErrorsAreTheCandidatesNamingTheLine) {
    KEVO_REQUIRE_TRITON();
    auto short_signature = compile("saxpy", std::string(kSaxpyHeader) + "@triton.jit\ndef saxpy(x, y, n):\n    pass\n");
    ASSERT_TRUE(short_signature) << short_signature.error().message;
    ASSERT_TRUE(short_signature->verdict);
    EXPECT_EQ(*short_signature->verdict, Verdict::compile_error);
    EXPECT_NE(short_signature->diagnostics.find("takes 3 non-constexpr parameters"), std::string::npos)
        << short_signature->diagnostics;

    auto misnamed = compile("saxpy", std::string(kSaxpyHeader) + "@triton.jit\ndef axpy(x, y, a, n):\n    pass\n");
    ASSERT_TRUE(misnamed) << misnamed.error().message;
    EXPECT_NE(misnamed->diagnostics.find("no @triton.jit function named saxpy"), std::string::npos) << misnamed->diagnostics;

    // Line 7 of the file: Triton's own message, placed where the candidate wrote it.
    auto undefined = compile("saxpy", std::string(kSaxpyHeader) +
                                          "@triton.jit\ndef saxpy(x, y, a, n):\n    p = tl.program_id(0)\n"
                                          "    tl.store(y + p, undefined_name)\n");
    ASSERT_TRUE(undefined) << undefined.error().message;
    ASSERT_TRUE(undefined->verdict);
    EXPECT_EQ(*undefined->verdict, Verdict::compile_error);
    EXPECT_NE(undefined->diagnostics.find("line 7:"), std::string::npos) << undefined->diagnostics;

    auto unknown_knob = compile("saxpy", "# kevo: tune TILE 4 8\n" + saxpy_with(""));
    ASSERT_TRUE(unknown_knob) << unknown_knob.error().message;
    ASSERT_TRUE(unknown_knob->verdict);
    EXPECT_NE(unknown_knob->diagnostics.find("TILE is not a tl.constexpr parameter"), std::string::npos)
        << unknown_knob->diagnostics;
}

TEST(TritonCheck, APythonWithoutTritonIsAnEnvironmentErrorNotAVerdict) {
    const test::TempDir dir("no-triton");
    // A Python that runs but has no Triton: the check passes, the import fails.
    const std::string fake = dir.file("python3");
    {
        std::FILE* f = std::fopen(fake.c_str(), "w");
        ASSERT_NE(f, nullptr);
        std::fprintf(f, "#!/bin/sh\nexec /usr/bin/python3 -S \"$@\"\n");
        std::fclose(f);
        std::filesystem::permissions(fake, std::filesystem::perms::owner_all);
    }
    const test::ScopedEnv python("KEVO_TRITON_PYTHON", fake);
    auto stage = compile("saxpy", saxpy_with(""));
    ASSERT_FALSE(stage) << "a verdict for kevo's own missing compiler";
    EXPECT_NE(stage.error().message.find("Triton is not installed"), std::string::npos) << stage.error().message;

    const test::ScopedEnv missing("KEVO_TRITON_PYTHON", dir.file("no-such-python"));
    auto none = compile("saxpy", saxpy_with(""));
    ASSERT_FALSE(none);
    EXPECT_NE(none.error().message.find("KEVO_TRITON_PYTHON"), std::string::npos) << none.error().message;
}

TEST(TritonCli, EvalCompileOnlyCompilesATritonSeedWithoutAGpu) {
    KEVO_REQUIRE_TRITON();
    const std::string seed = std::string(KEVO_SOURCE_DIR) + "/tasks/saxpy/seed.py";
    const auto r = test::run_kevo({"eval", "saxpy", seed, "--compile-only", "--json"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto doc = r.json();
    EXPECT_EQ(doc["verdict"], "ok") << r.out;
    // A Python without Triton is kevo's environment error (exit 2), not the candidate's verdict.
    {
        const test::ScopedEnv no_triton("KEVO_TRITON_PYTHON", "/usr/bin/python3");
        const auto absent = test::run_kevo({"eval", "saxpy", seed, "--compile-only"});
        EXPECT_EQ(absent.exit_code, 2) << absent.out << absent.err;
        EXPECT_NE(absent.err.find("Triton is not installed"), std::string::npos) << absent.err;
    }
    // KEVO_TRITON_PYTHON as a path relative to where kevo was started (the compiler itself runs in
    // a folder of its own).
    {
        const std::string relative =
            std::filesystem::absolute(*kevo_triton_python).lexically_relative(std::filesystem::current_path()).string();
        ASSERT_EQ(relative.find('/') == std::string::npos, false) << relative;
        const test::ScopedEnv python("KEVO_TRITON_PYTHON", relative);
        const auto r2 = test::run_kevo({"eval", "saxpy", seed, "--compile-only", "--json"});
        EXPECT_EQ(r2.json()["verdict"], "ok") << relative << "\n" << r2.out << r2.err;
    }
    // A Triton file with an OpenCL backend is named as what it is.
    const auto wrong = test::run_kevo({"eval", "saxpy", seed, "--backend", "opencl", "--compile-only"});
    EXPECT_EQ(wrong.exit_code, 2);
    EXPECT_NE(wrong.err.find("a Triton file"), std::string::npos) << wrong.err;
}

}  // namespace
}  // namespace kevo
