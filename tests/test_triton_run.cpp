// `kevo run --language triton`: the search on a Triton seed, with the run's directives, identities,
// prompt and handed-out file in Python's comments. The runs are kevo's run command on scripted
// evaluations of a CUDA device (kevo_scripted with KEVO_SCRIPTED_BACKEND=cuda): every candidate is
// compiled for real by the pinned Triton for sm_90, only the launch and the timing are scripted
// (they need a GPU; scripts/gpu.sh triton runs them there). The LLM run answers from LiteLLM's
// real proxy. Where Triton or LiteLLM is missing the tests that need them skip, except in CI.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>

#include "backend/kernel_language.hpp"
#include "kevo_process.hpp"
#include "run_support.hpp"
#include "search/prompt.hpp"
#include "search/source_identity.hpp"
#include "task/registry.hpp"
#include "temp_dir.hpp"
#include "triton_python.hpp"
#ifdef KEVO_HAVE_HTTPLIB
#include "litellm_proxy.hpp"
#endif

namespace kevo {
namespace {

using test::run_exit_status;
using test::run_kevo;
using test::run_scripted_kevo;
using test::slurp;

std::string temp(const std::string& name) { return test::temp_path("kevo_triton_run", name); }

Language triton() { return language_named("triton"); }
Language cuda() { return language_named("cuda"); }

// Iteration `i` of a stored run as `kevo report RUN --iteration I --json` gives it (source, defines, prompt).
nlohmann::json iteration(const std::string& db, const nlohmann::json& run_id, int i) {
    return run_kevo({"report", run_id.get<std::string>(), "--db", db, "--iteration", std::to_string(i), "--json"}).json();
}

std::vector<std::string> scripted_run(const std::string& task, const std::string& db, std::vector<std::string> more) {
    std::vector<std::string> args = {"run", task, "--backend", "cuda", "--language", "triton", "--profile", "small",
                                     "--gate-rounds", "1", "--seed", "3", "--db", db, "--out", temp("out"), "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

// The tuner on the saxpy seed: each point it proposes (BLOCK, num_warps) is a real Triton compile;
// the file handed out carries a `# kevo run` header and the winning values as its tune defaults,
// and compiles as it is.
TEST(TritonRun, TheTunerSearchesTheSeedsKnobsAndHandsOutAPythonFile) {
    KEVO_REQUIRE_TRITON();
    const test::ScopedEnv gpu("KEVO_SCRIPTED_BACKEND", "cuda");
    const std::string db = temp("tune.db");
    const auto r = run_scripted_kevo(scripted_run("saxpy", db, {"--proposer", "tune", "--iterations", "5"}));
    const auto s = r.json();
    ASSERT_TRUE(s.is_object()) << r.out << r.err;
    ASSERT_EQ(r.exit_code, run_exit_status(s)) << r.err;
    EXPECT_EQ(s["iterations"], 5);
    EXPECT_EQ(s["proposals"]["evaluated"], 5) << s.dump(1);

    EXPECT_NE(iteration(db, s["run_id"], 0)["source"].get<std::string>().find("@triton.jit"), std::string::npos)
        << "iteration 0 is the Triton seed";
    std::set<std::string> points;
    std::vector<nlohmann::json> defines;
    for (int i = 0; i <= 5; ++i) {
        const auto it = iteration(db, s["run_id"], i);
        EXPECT_EQ(it["verdict"], "ok") << it.dump(1);
        points.insert(it["defines"].dump());
        defines.push_back(it["defines"]);
        for (const auto& [knob, value] : it["defines"].items())
            EXPECT_TRUE(knob == "BLOCK" || knob == "num_warps") << "a knob of the seed's `# kevo: tune` lines: " << knob;
    }
    EXPECT_EQ(points.size(), 6u) << "six different points, the seed's among them";

    const std::string best = s["best_path"];
    ASSERT_TRUE(best.ends_with(".py")) << best;
    const std::string text = slurp(best);
    EXPECT_EQ(text.rfind("# kevo run ", 0), 0u) << text.substr(0, 300);
    const std::string block = s["outcome"] == "improved"
                                  ? defines.at(s["recommended"].get<size_t>()).value("BLOCK", std::string("1024"))
                                  : std::string("1024");
    EXPECT_TRUE(std::regex_search(text, std::regex("# kevo: tune BLOCK " + block + "( |\n)"))) << text;
    const auto again = run_kevo({"eval", "saxpy", best, "--backend", "cuda", "--compile-only", "--json"});
    EXPECT_EQ(again.json()["verdict"], "ok") << again.out << again.err;
}

// A Triton kernel the tuner proposes with a value the compiler refuses is that candidate's verdict,
// not the run's end: a BLOCK that is not a power of two (tl.arange needs one).
TEST(TritonRun, AKnobValueTritonRefusesIsACompileErrorOfThatCandidate) {
    KEVO_REQUIRE_TRITON();
    const test::ScopedEnv gpu("KEVO_SCRIPTED_BACKEND", "cuda");
    std::string seed(task_file("saxpy", "seed.py"));
    seed.replace(seed.find("# kevo: tune BLOCK 1024 256 512 2048 4096"), 41, "# kevo: tune BLOCK 1024 1000");
    const std::string from = temp("saxpy_1000.py"), db = temp("refused.db");
    std::ofstream(from) << seed;
    const auto r = run_scripted_kevo(scripted_run("saxpy", db, {"--proposer", "tune", "--iterations", "6", "--from", from}));
    const auto s = r.json();
    ASSERT_TRUE(s.is_object()) << r.out << r.err;
    ASSERT_EQ(r.exit_code, run_exit_status(s)) << r.err;
    int refused = 0;
    for (int i = 1; i <= 7; ++i) {
        const auto it = iteration(db, s["run_id"], i);
        if (!it.is_object() || !it.contains("defines") || it["defines"].value("BLOCK", "") != "1000") continue;
        ++refused;
        EXPECT_EQ(it["verdict"], "compile_error") << it.dump(1);
    }
    EXPECT_GE(refused, 1) << "the tuner tried BLOCK=1000";
}

// `kevo bench --language triton`: the tasks that ship a Triton seed, each seed compiled by Triton
// (timing scripted); a task named without one is refused with the list of those that have one.
TEST(TritonRun, TheBenchTakesTheTritonSeeds) {
    KEVO_REQUIRE_TRITON();
    const test::ScopedEnv gpu("KEVO_SCRIPTED_BACKEND", "cuda");
    const auto r = run_scripted_kevo({"bench", "--backend", "cuda", "--language", "triton", "--tasks", "saxpy,silu_and_mul",
                                      "--profile", "small", "--check-profiles", "none", "--no-peers", "--json"});
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    EXPECT_EQ(doc["language"], "triton");
    ASSERT_EQ(doc["tasks"].size(), 2u);
    for (const auto& t : doc["tasks"]) {
        EXPECT_EQ(t["seed"]["verdict"], "ok") << t.dump(1);
        EXPECT_EQ(t["best_missing"], "no best-known kernel best.py for cuda") << t.dump(1);
    }
    const auto morton = run_scripted_kevo({"bench", "--backend", "cuda", "--language", "triton", "--tasks", "morton,saxpy"});
    EXPECT_EQ(morton.exit_code, 2);
    EXPECT_NE(morton.err.find("--tasks: morton has no Triton seed (seed.py); the tasks with one: saxpy"), std::string::npos)
        << morton.err;
}

// What a run refuses before anything is evaluated, with what would be accepted.
TEST(TritonRun, WrongLanguagesAreRefusedNamingWhatWouldDo) {
    const std::string db = temp("refusals.db");
    const auto on_opencl = run_scripted_kevo({"run", "saxpy", "--backend", "opencl", "--language", "triton", "--db", db});
    EXPECT_EQ(on_opencl.exit_code, 2);
    EXPECT_NE(on_opencl.err.find("Triton is compiled by the cuda backend, not opencl"), std::string::npos) << on_opencl.err;

    const auto no_seed = run_scripted_kevo({"run", "morton", "--backend", "cuda", "--language", "triton", "--db", db});
    EXPECT_EQ(no_seed.exit_code, 2);
    EXPECT_NE(no_seed.err.find("task morton has no Triton seed (tasks/morton/seed.py); the tasks with one: saxpy"),
              std::string::npos)
        << no_seed.err;

    const std::string seed_py = std::string(KEVO_SOURCE_DIR) + "/tasks/saxpy/seed.py";
    const auto mixed = run_scripted_kevo({"run", "saxpy", "--backend", "cuda", "--language", "cuda", "--from", seed_py,
                                          "--db", db});
    EXPECT_EQ(mixed.exit_code, 2);
    EXPECT_NE(mixed.err.find("the file is Triton (.py), the run's --language is cuda; give a .cu file or --language triton"),
              std::string::npos)
        << mixed.err;

    const auto unknown = run_scripted_kevo({"run", "saxpy", "--language", "fortran", "--db", db});
    EXPECT_EQ(unknown.exit_code, 2);
    EXPECT_NE(unknown.err.find("fortran not in {cuda,opencl,triton}"), std::string::npos) << unknown.err;
    if (std::filesystem::exists(db)) EXPECT_EQ(run_kevo({"report", "--db", db, "--json"}).json()["runs"].size(), 0u);
}

// A candidate's identity in Python: `#` comments go except the directives; indentation is syntax
// and stays, so two kernels that differ only in a block's extent are two kernels.
TEST(TritonRun, IdentityKeepsIndentationAndDirectivesAndDropsComments) {
    const std::string a = "# kevo: tune BLOCK 64 128\n@triton.jit\ndef k(x, BLOCK: tl.constexpr):\n    if x:\n        y = 1\n"
                          "    z = 2  # the rest\n";
    const std::string commented = "# a kernel\n# kevo: tune BLOCK 64 128\n\n@triton.jit\ndef k(x,  BLOCK : tl.constexpr):  # k\n"
                                  "    if x:\n        y = 1\n    z = 2\n";
    const std::string dedented = "# kevo: tune BLOCK 64 128\n@triton.jit\ndef k(x, BLOCK: tl.constexpr):\n    if x:\n"
                                 "        y = 1\n        z = 2\n";
    EXPECT_EQ(normalised_source(a, triton()), normalised_source(commented, triton()));
    EXPECT_EQ(normalised_source(a, triton()),
              "# kevo: tune BLOCK 64 128\n@triton.jit\ndef k(x,BLOCK:tl.constexpr):\n    if x:\n        y=1\n    z=2\n");
    EXPECT_NE(normalised_source(a, triton()), normalised_source(dedented, triton()));
    EXPECT_NE(candidate_hash(a, {}, triton()), candidate_hash(a, {{"BLOCK", "128"}}, triton()));
    EXPECT_EQ(candidate_hash(a, {}, triton()), candidate_hash(a, {{"BLOCK", "64"}}, triton())) << "the default in force";
    // A `#` inside a string is not a comment; in C a `#` line is the preprocessor's and stays.
    EXPECT_EQ(normalised_source("s = '# not a comment'\n", triton()), "s= '# not a comment'\n");
    EXPECT_EQ(normalised_source("#define B 4 // four\n  int x; /* y */\n", cuda()), "#define B 4\nint x;\n");
}

// The prompt of a Triton run speaks Triton: its fences, its directive comments, how a knob reaches
// the kernel and what `block=` means; nothing of CUDA's smem= or targets.
TEST(TritonRun, ThePromptIsWrittenForTriton) {
    auto task = make_task("saxpy");
    ASSERT_TRUE(task) << task.error().message;
    ProposalContext c;
    c.spec = &(*task)->spec();
    c.language = triton();
    c.iteration = 1;
    c.incumbent.source = std::string(task_file("saxpy", "seed.py"));
    const std::string prompt = build_prompt(c);
    for (const char* expected : {"Write Triton for this device", "```python\n@triton.jit\ndef saxpy(x, y, a, n",
                                 "# kevo: launch saxpy block=32,8", "tl.constexpr parameter NAME",
                                 "num_warps x 32 threads", "with any `# kevo:` directives", "```python\n# saxpy seed"})
        EXPECT_NE(prompt.find(expected), std::string::npos) << expected << "\n" << prompt;
    for (const char* absent : {"smem=", "sm_90a", "// kevo:", "```cuda"}) EXPECT_EQ(prompt.find(absent), std::string::npos) << absent;
}

#ifdef KEVO_HAVE_HTTPLIB
// An llm run on the Triton seed, the model LiteLLM's proxy answering from mock_response: a Triton
// kernel in a ```python block is parsed, compiled by Triton and judged; one that imports os is
// rejected by the syntax check, naming the line, before any of it runs.
TEST(TritonRun, AnLlmAnswerInTritonIsCompiledAndJudged) {
    KEVO_REQUIRE_TRITON();
    KEVO_REQUIRE_LITELLM(litellm);
    const test::ScopedEnv gpu("KEVO_SCRIPTED_BACKEND", "cuda");
    std::string answer(task_file("saxpy", "seed.py"));
    answer.replace(answer.find("# kevo: tune BLOCK 1024"), 23, "# kevo: tune BLOCK 2048");
    std::string hostile = answer;
    hostile.replace(hostile.find("import triton\n"), 14, "import os\nimport triton\n");
    const auto fence = [](const std::string& code) { return "Here is a faster tile.\n\n```python\n" + code + "```\n"; };
    test::LiteLlmProxy proxy(*litellm, test::write_proxy_config(temp("litellm.yaml"), {{"kevo-triton", fence(answer)},
                                                                                       {"kevo-hostile", fence(hostile)}}),
                             temp("litellm.log"));
    const std::string problem = proxy.wait_ready(180);
    ASSERT_TRUE(problem.empty()) << problem;
    const test::ScopedEnv key("KEVO_API_KEY", test::kMasterKey);
    const std::string db = temp("llm.db");
    for (const auto& [model, verdict] : {std::pair{"kevo-triton", "ok"}, std::pair{"kevo-hostile", "rejected"}}) {
        const auto r = run_scripted_kevo(scripted_run("saxpy", db, {"--proposer", "llm", "--base-url", proxy.base_url(),
                                                                    "--model", model, "--retries", "1", "--iterations", "1"}));
        const auto s = r.json();
        ASSERT_TRUE(s.is_object()) << r.out << r.err << proxy.log_tail();
        ASSERT_EQ(r.exit_code, run_exit_status(s)) << r.err;
        const auto it = iteration(db, s["run_id"], 1);
        EXPECT_EQ(it["verdict"], verdict) << it.dump(1);
        EXPECT_NE(it["prompt"].get<std::string>().find("```python\n# saxpy seed"), std::string::npos);
        if (std::string(verdict) == "rejected")
            EXPECT_NE(it["diagnostics"].get<std::string>().find("line 6"), std::string::npos) << it["diagnostics"];
        else
            EXPECT_NE(it["source"].get<std::string>().find("# kevo: tune BLOCK 2048"), std::string::npos);
    }
}
#endif

}  // namespace
}  // namespace kevo
