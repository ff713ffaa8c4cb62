// A study through the LLM path: `kevo sweep` (on scripted evaluations: kevo_scripted) with two
// "models" served by LiteLLM's proxy (the real OpenAI-compatible server, answering from
// mock_response, pricing each reply itself), then the
// study's HTML report: a row per model in the results table with its speed-ups, tokens and cost,
// and one point per (model, task) in the generalisation scatter. Skipped where LiteLLM is not
// installed, except in CI (CI=true), where its absence fails.
#ifdef KEVO_HAVE_HTTPLIB
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "kevo_process.hpp"
#include "litellm_proxy.hpp"
#include "report_page.hpp"
#include "run_support.hpp"

using kevo::test::count;
using kevo::test::fenced;
using kevo::test::figure_svg;
using kevo::test::heat2d_variant;
using kevo::test::kMasterKey;
using kevo::test::LiteLlmProxy;
using kevo::test::run_kevo;
using kevo::test::run_scripted_kevo;
using kevo::test::slurp;
using kevo::test::table_cell;

namespace {

std::string temp(const std::string& name) { return kevo::test::temp_path("kevo_llm_study", name); }

// Two models, each always answering its own correct heat2d kernel.
std::string proxy_config() {
    return kevo::test::write_proxy_config(temp("litellm-config.yaml"), {{"kevo-a", fenced(heat2d_variant("32,4"))},
                                                                         {"kevo-b", fenced(heat2d_variant("64,2"))}});
}

std::string write_study(const std::string& base_url) {
    const auto model = [&](const std::string& name, const std::string& served) {
        return fmt::format("[[models]]\nname = \"{}\"\nproposer = \"llm\"\nbase_url = \"{}\"\nmodel = \"{}\"\n"
                           "api_key_env = \"KEVO_STUDY_KEY\"\ncost_from_server = true\nretries = 1\nretry_backoff = 0.1\n\n",
                           name, base_url, served);
    };
    const std::string path = temp("llm-study.toml");
    std::ofstream(path) << "name = \"llm-two-models\"\nprofile = \"small\"\nbackend = \"opencl\"\ntasks = [\"heat2d\"]\n"
                           "strategies = [\"one-plus-one\"]\nseeds = [1]\nconcurrency = 2\n\n"
                           "[budget]\niterations = 2\nmax_cost_usd = 1\n\n"
                           "[run]\nwarmup = 1\nrepeat = 3\ngate_rounds = 1\n\n"
                        << model("model-a", "kevo-a") << model("model-b", "kevo-b");
    return path;
}

TEST(LlmStudy, TwoModelsThroughTheRealProxyFillTheReportsTableAndScatter) {
    KEVO_REQUIRE_LITELLM(litellm);
    LiteLlmProxy proxy(*litellm, proxy_config(), temp("litellm.log"));
    const std::string problem = proxy.wait_ready(180);
    ASSERT_TRUE(problem.empty()) << problem;
    ::setenv("KEVO_STUDY_KEY", kMasterKey, 1);
    const std::string db = temp("study.db"), page = temp("study.html");
    std::remove(db.c_str());

    const auto sweep = run_scripted_kevo({"sweep", write_study(proxy.base_url()), "--db", db, "--out", temp("out")});
    ::unsetenv("KEVO_STUDY_KEY");
    ASSERT_EQ(sweep.exit_code, 0) << sweep.out << sweep.err << proxy.log_tail();
    const auto report = run_kevo({"report", "--study", "latest", "--db", db, "--html", page});
    ASSERT_EQ(report.exit_code, 0) << report.err;
    const std::string html = slurp(page);

    for (const std::string model : {"model-a", "model-b"}) {
        // The answer was evaluated (the second, the same text again, is a duplicate), the gate
        // timed the search's best beside the seed, and the proxy's tokens and cost were counted.
        EXPECT_EQ(table_cell(html, "heat2d", model, "runs"), "1") << model;
        const std::string speedup = table_cell(html, "heat2d", model, "speedup");
        EXPECT_GT(std::atof(speedup.c_str()), 0.0) << model << ": " << speedup;
        EXPECT_GT(std::atof(table_cell(html, "heat2d", model, "heldout_speedup").c_str()), 0.0) << model;
        EXPECT_EQ(table_cell(html, "heat2d", model, "heldout_verdict"), "ok 1") << model;
        EXPECT_EQ(table_cell(html, "heat2d", model, "candidates"), "ok 1") << model;
        EXPECT_GT(std::atol(table_cell(html, "heat2d", model, "tokens").c_str()), 0) << model;
        EXPECT_GT(std::atof(table_cell(html, "heat2d", model, "cost").c_str()), 0.0) << model;
    }
    // One point per (model, task): both models in the scatter, drawn in the plot (correct held-out).
    const std::string scatter = figure_svg(html, "generalisation");
    EXPECT_EQ(count(scatter, "class=\"mark point\""), 2u) << scatter;
    EXPECT_NE(scatter.find("model-a"), std::string::npos) << scatter;
    EXPECT_NE(scatter.find("model-b"), std::string::npos) << scatter;
}

}  // namespace
#else
#include <gtest/gtest.h>
TEST(LlmStudy, TwoModelsThroughTheRealProxyFillTheReportsTableAndScatter) {
    GTEST_SKIP() << "cpp-httplib not found at configure time";
}
#endif
