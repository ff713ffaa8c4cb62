// The knowledge notes reach the model: `kevo run --proposer llm --knowledge DIR` against LiteLLM's
// real proxy (tests/litellm_proxy.hpp) through a relay that keeps the request bodies the proxy
// received. The note for the task is in the prompt, a note for another task, a draft and a note
// over the budget are not, and `kevo report --iteration N` names the notes that iteration's prompt
// carried. The evaluations are scripted (kevo_scripted): the prompt is what is tested.
#ifdef KEVO_HAVE_HTTPLIB
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "kevo_process.hpp"
#include "litellm_proxy.hpp"
#include "run_support.hpp"
#include "temp_dir.hpp"

namespace {

namespace fs = std::filesystem;
using kevo::test::fenced;
using kevo::test::heat2d_variant;

void note(const fs::path& dir, const std::string& id, const std::string& header, const std::string& text) {
    std::ofstream(dir / (id + ".md")) << "+++\n" << header << "+++\n" << text << "\n";
}

TEST(KnowledgeLlm, TheNotesForTheTaskReachTheModelAndTheReport) {
    KEVO_REQUIRE_LITELLM(litellm);
    kevo::test::TempDir dir("knowledge-llm");
    const fs::path notes = dir.path() / "notes";
    fs::create_directories(notes);
    note(notes, "heat-rows", "title = \"Heat rows in registers\"\ntasks = [\"heat2d\"]\n", "Keep ten rows per thread.");
    note(notes, "any-task", "title = \"Guard every tail\"\n", "Sizes are not multiples of the tile.");
    note(notes, "saxpy-only", "title = \"Saxpy float4 body\"\ntasks = [\"saxpy\"]\n", "Only for saxpy.");
    note(notes, "draft", "title = \"Unkept draft note\"\ndraft = true\n", "Not kept yet.");
    note(notes, "huge", "title = \"Huge stencil note\"\ncategories = [\"stencil\"]\n", std::string(20000, 'z'));

    kevo::test::LiteLlmProxy proxy(*litellm,
                                   kevo::test::write_proxy_config(dir.file("config.yaml"),
                                                                  {{"kevo-good", fenced(heat2d_variant("32,4"))}}),
                                   dir.file("proxy.log"));
    const std::string problem = proxy.wait_ready(180);
    ASSERT_TRUE(problem.empty()) << problem;
    kevo::test::RecordingRelay relay(proxy.port(), 8);
    ::setenv("KEVO_API_KEY", kevo::test::kMasterKey, 1);
    const std::string db = dir.file("runs.db");
    const auto run = kevo::test::run_scripted_kevo(
        {"run", "heat2d", "--backend", "opencl", "--proposer", "llm", "--base-url", relay.base_url(), "--model",
         "kevo-good", "--retries", "1", "--warmup", "1", "--repeat", "3", "--gate-rounds", "1", "--iterations", "1",
         "--knowledge", notes.string(), "--knowledge-tokens", "2000", "--db", db, "--out", dir.file("out"), "--json"});
    ASSERT_EQ(run.exit_code, kevo::test::run_exit_status(run.json())) << run.err << proxy.log_tail();
    const auto bodies = relay.bodies();
    ASSERT_EQ(bodies.size(), 1u);
    const std::string& body = bodies[0];
    EXPECT_NE(body.find("## Notes from the knowledge base"), std::string::npos);
    EXPECT_NE(body.find("### Heat rows in registers"), std::string::npos);
    EXPECT_NE(body.find("Keep ten rows per thread."), std::string::npos);
    EXPECT_NE(body.find("### Guard every tail"), std::string::npos);
    EXPECT_LT(body.find("Heat rows in registers"), body.find("Guard every tail")) << "the task's own note first";
    EXPECT_EQ(body.find("Saxpy float4 body"), std::string::npos) << "a note for another task";
    EXPECT_EQ(body.find("Unkept draft note"), std::string::npos) << "a draft";
    EXPECT_EQ(body.find("Huge stencil note"), std::string::npos) << "a note over the budget";

    const std::string run_id = run.json()["run_id"];
    const auto rep = kevo::test::run_kevo({"report", run_id, "--db", db, "--iteration", "1", "--json"});
    ASSERT_EQ(rep.exit_code, 0) << rep.err;
    EXPECT_EQ(rep.json()["knowledge"], (nlohmann::json{"heat-rows", "any-task"})) << rep.out;
    const auto text = kevo::test::run_kevo({"report", run_id, "--db", db, "--iteration", "1"});
    EXPECT_NE(text.out.find("knowledge notes in the prompt: heat-rows, any-task"), std::string::npos) << text.out;
    const auto settings = kevo::test::run_kevo({"report", run_id, "--db", db, "--json"});
    EXPECT_EQ(settings.json()["settings"]["knowledge"], notes.string()) << "stored as an absolute path";
}

}  // namespace
#endif
