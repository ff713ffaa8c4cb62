// `kevo run --proposer llm` against a real OpenAI-compatible server: LiteLLM's proxy (from PyPI,
// installed by scripts/install-deps.sh into .venv-litellm, or named by KEVO_LITELLM), started here
// on 127.0.0.1 as a child process with models that answer from `mock_response`: a good kernel, prose
// without code, a <think> draft before the real answer. The proxy prices each reply itself
// (x-litellm-response-cost) and checks the key. Skipped where LiteLLM is not installed, except in
// CI (CI=true), where its absence fails.
#ifdef KEVO_HAVE_HTTPLIB
#include <gtest/gtest.h>

#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "kevo_process.hpp"
#include "litellm_proxy.hpp"
#include "run_support.hpp"
#include "task/registry.hpp"

using kevo::test::fenced;
using kevo::test::has_device;
using kevo::test::heat2d_variant;
using kevo::test::kMasterKey;
using kevo::test::LiteLlmProxy;
using kevo::test::run_kevo;
using kevo::test::slurp;

namespace {

std::string temp(const std::string& name) { return kevo::test::temp_path("kevo_litellm", name); }

// Models that answer a good kernel, prose without code, and a <think> draft before the real answer.
std::string write_config() {
    return kevo::test::write_proxy_config(
        temp("litellm-config.yaml"),
        {{"kevo-good", fenced(heat2d_variant("32,4"))},
         {"kevo-prose", "I would tile the stencil in local memory, but I will not write the code."},
         {"kevo-think", "<think>A first draft:\n```opencl\n__kernel void heat_step() {}\n```\nNo, keep the "
                        "whole stencil.</think>\n" + fenced(heat2d_variant("64,2"))}});
}

std::vector<std::string> llm_run(const std::string& url, const std::string& model, const std::string& db,
                                 std::vector<std::string> more) {
    std::vector<std::string> args = {"run", "heat2d", "--backend", "opencl", "--proposer", "llm", "--base-url", url,
                                     "--model", model, "--retries", "1", "--retry-backoff", "0.1", "--warmup", "1",
                                     "--repeat", "3", "--gate-rounds", "1", "--db", db, "--out", temp("out"), "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

nlohmann::json report(const std::string& db, const nlohmann::json& run_id) {
    return run_kevo({"report", run_id.get<std::string>(), "--db", db, "--json"}).json();
}

TEST(LiteLlmProxy, RunsAgainstTheRealProxy) {
    KEVO_REQUIRE_LITELLM(litellm);
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    LiteLlmProxy proxy(*litellm, write_config(), temp("litellm.log"));
    const std::string problem = proxy.wait_ready(180);
    ASSERT_TRUE(problem.empty()) << problem;
    ::setenv("KEVO_API_KEY", kMasterKey, 1);
    const std::string db = temp("litellm.db");

    // A good kernel, twice: evaluated, then a duplicate; tokens counted, the cost the proxy reports.
    const auto good = run_kevo(llm_run(proxy.base_url(), "kevo-good", db, {"--iterations", "2", "--cost-from-server",
                                                                           "--max-cost", "10"}));
    ASSERT_EQ(good.exit_code, kevo::test::run_exit_status(good.json())) << good.err << proxy.log_tail();
    const auto summary = good.json();
    EXPECT_EQ(summary["iterations"], 2);
    EXPECT_EQ(summary["proposals"]["evaluated"], 1) << summary.dump(1);
    EXPECT_EQ(summary["proposals"]["duplicate"], 1);
    EXPECT_GT(summary["cost_usd"].get<double>(), 0.0) << "the proxy's x-litellm-response-cost";
    EXPECT_LT(summary["cost_usd"].get<double>(), 0.1);
    auto rep = report(db, summary["run_id"]);
    EXPECT_EQ(rep["status"], "finished");
    EXPECT_GT(rep["tokens"].get<int>(), 0);
    EXPECT_EQ(rep["iterations"][1]["verdict"], "ok") << rep["iterations"][1].dump(1);

    // A <think> draft, streamed, sent without temperature and with max_completion_tokens: the real
    // answer after the draft is the one evaluated.
    const auto think = run_kevo(llm_run(proxy.base_url(), "kevo-think", db, {"--iterations", "1", "--stream",
                                                                             "--temperature", "none",
                                                                             "--max-completion-tokens", "4000"}));
    ASSERT_EQ(think.exit_code, kevo::test::run_exit_status(think.json())) << think.err << proxy.log_tail();
    rep = run_kevo({"report", think.json()["run_id"].get<std::string>(), "--db", db, "--iteration", "1", "--json"}).json();
    EXPECT_NE(rep["source"].get<std::string>().find("block=64,2"), std::string::npos) << rep.dump(1);

    // Prose: no code twice, and the second prompt says so.
    const auto prose = run_kevo(llm_run(proxy.base_url(), "kevo-prose", db, {"--iterations", "2"}));
    ASSERT_EQ(prose.exit_code, 0) << prose.err << proxy.log_tail();
    EXPECT_EQ(prose.json()["proposals"]["no_code"], 2);
    rep = run_kevo({"report", prose.json()["run_id"].get<std::string>(), "--db", db, "--iteration", "2", "--json"}).json();
    EXPECT_NE(rep["prompt"].get<std::string>().find("## Your last answer (iteration 1) was not used"), std::string::npos);

    // A model the proxy does not serve: HTTP 400 "Invalid model name", three times, and the run stops.
    const auto unknown = run_kevo(llm_run(proxy.base_url(), "kevo-no-such-model", db, {"--iterations", "10"}));
    EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
    EXPECT_NE(unknown.err.find("3 times in a row"), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("HTTP 400"), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("kevo-no-such-model"), std::string::npos) << unknown.err;
    ::unsetenv("KEVO_API_KEY");
}

}  // namespace
#else
#include <gtest/gtest.h>
TEST(LiteLlmProxy, RunsAgainstTheRealProxy) { GTEST_SKIP() << "cpp-httplib not found at configure time"; }
#endif
