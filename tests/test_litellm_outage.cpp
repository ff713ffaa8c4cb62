// A run whose proposer cannot be reached, against the real LiteLLM proxy (tests/litellm_proxy.hpp)
// and kevo's run command on scripted evaluations (kevo_scripted: the proposer and the run's
// bookkeeping are what is tested, not the kernels): the proxy killed after 2 iterations of 6 interrupts the run within its
// failure count (exit 2, `proposer_unavailable`, no gate), and `--resume` against the proxy started
// again on another port (`--base-url`, a new segment of the settings that `kevo report` shows)
// finishes all 6 iterations, those lost to the outage not counted; a key the proxy refuses three
// times interrupts the run the same way; --max-wall bounds a request the proxy would answer only
// after 30 s. Skipped where LiteLLM is not installed, except in CI (CI=true).
#ifdef KEVO_HAVE_HTTPLIB
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
#include <optional>

#include <nlohmann/json.hpp>

#include "kevo_process.hpp"
#include "litellm_proxy.hpp"
#include "run_support.hpp"
#include "store/store.hpp"

using kevo::test::fenced;
using kevo::test::heat2d_variant;
using kevo::test::kMasterKey;
using kevo::test::LiteLlmProxy;
using kevo::test::run_kevo;
using kevo::test::run_scripted_kevo;
using kevo::test::slurp;

namespace {

std::string temp(const std::string& name) { return kevo::test::temp_path("kevo_litellm_outage", name); }

std::string write_config() {
    return kevo::test::write_proxy_config(temp("outage.yaml"),
                                          {{"kevo-good", fenced(heat2d_variant("32,4"))},
                                           {"kevo-paced", fenced(heat2d_variant("32,4"))},
                                           {"kevo-slow", fenced(heat2d_variant("32,4"))}},
                                          {{"kevo-paced", {{"mock_delay", 1.5}}}, {"kevo-slow", {{"mock_delay", 30}}}});
}

std::vector<std::string> llm_run(const std::string& url, const std::string& model, const std::string& db,
                                 std::vector<std::string> more) {
    std::vector<std::string> args = {"run", "heat2d", "--backend", "opencl", "--proposer", "llm", "--base-url", url,
                                     "--model", model, "--retries", "1", "--retry-backoff", "0.1", "--warmup", "1",
                                     "--repeat", "3", "--gate-rounds", "1", "--db", db, "--out", temp("out"), "--json"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

nlohmann::json report(const std::string& db, const std::string& run_id) {
    return run_kevo({"report", run_id, "--db", db, "--json"}).json();
}

std::unique_ptr<LiteLlmProxy> start_proxy(const std::string& litellm, const std::string& log) {
    auto proxy = std::make_unique<LiteLlmProxy>(litellm, write_config(), temp(log));
    const std::string problem = proxy->wait_ready(180);
    if (!problem.empty()) ADD_FAILURE() << problem;
    return problem.empty() ? std::move(proxy) : nullptr;
}

// The resume hint's words: "kevo run --resume ID --db DB --out OUT", as a test can run it.
std::vector<std::string> hint_words(const std::string& hint) {
    std::vector<std::string> words;
    size_t start = 0;
    while (start < hint.size()) {
        const size_t end = hint.find(' ', start);
        words.push_back(hint.substr(start, end == std::string::npos ? std::string::npos : end - start));
        if (end == std::string::npos) break;
        start = end + 1;
    }
    return words;
}

TEST(LiteLlmOutage, AProxyKilledMidRunInterruptsItAndResumeFinishesTheBudget) {
    KEVO_REQUIRE_LITELLM(litellm);
    ::setenv("KEVO_API_KEY", kMasterKey, 1);
    const std::string db = temp("outage.db"), id = "outage";
    auto proxy = start_proxy(*litellm, "outage-1.log");
    ASSERT_TRUE(proxy);

    const pid_t pid = kevo::test::spawn_kevo(llm_run(proxy->base_url(), "kevo-paced", db, {"--iterations", "6", "--run-id", id}),
                                             temp("outage-run.log"), "", KEVO_SCRIPTED_BINARY);
    ASSERT_GT(pid, 0);
    ASSERT_EQ(kevo::test::wait_for_iterations(db, 2, 300), id) << slurp(temp("outage-run.log"));
    proxy->kill_now();  // not restarted yet: the next request (likely in flight) finds no server
    int status = 0;
    ASSERT_EQ(::waitpid(pid, &status, 0), pid);
    const std::string log = slurp(temp("outage-run.log"));
    ASSERT_TRUE(WIFEXITED(status)) << log;
    EXPECT_EQ(WEXITSTATUS(status), 2) << log;
    auto rep = report(db, id);
    EXPECT_EQ(rep["status"], "interrupted");
    EXPECT_TRUE(rep["heldout"].empty()) << "no gate";
    const auto& stopped = rep["summary"];
    EXPECT_EQ(stopped["interruption"], "proposer_unavailable") << stopped.dump(1);
    EXPECT_EQ(stopped["proposals"]["failed"], 3) << "stopped at the 3rd failure in a row: " << log;
    const std::string hint = stopped.value("resume", "");
    EXPECT_EQ(hint, "kevo run --resume " + id + " --db " + db + " --out " + temp("out"));
    EXPECT_NE(log.find("mend it and resume with " + hint), std::string::npos) << "the hint is printed: " << log;
    const int done = rep["iterations_done"];
    EXPECT_LE(done, 6) << "2 iterations, at most 1 more in flight, then 3 failures";
    for (int i = done - 2; i <= done; ++i) EXPECT_EQ(rep["iterations"][i]["failure"], "unreachable") << rep["iterations"][i].dump(1);

    // Back on another port: the hint, pasted, with the new --base-url, finishes the 6 iterations.
    proxy = start_proxy(*litellm, "outage-2.log");
    ASSERT_TRUE(proxy);
    auto args = hint_words(hint);
    ASSERT_GE(args.size(), 4u);
    args.erase(args.begin());  // "kevo": the scripted kevo runs the resume
    for (const std::string& word : {std::string("--base-url"), proxy->base_url(), std::string("--json")}) args.push_back(word);
    const auto resumed = run_scripted_kevo(args);
    ASSERT_EQ(resumed.exit_code, kevo::test::run_exit_status(resumed.json())) << resumed.err;
    const auto end = resumed.json();
    const auto& c = end["proposals"];
    EXPECT_EQ(c["evaluated"].get<int>() + c["no_code"].get<int>() + c["edit_failed"].get<int>() + c["duplicate"].get<int>(), 6)
        << end.dump(1);
    EXPECT_EQ(c["failed"], 3);
    EXPECT_EQ(end["iterations"], 9);
    rep = report(db, id);
    EXPECT_EQ(rep["status"], "finished");
    ASSERT_EQ(rep["segments"].size(), 1u) << rep["settings"].dump(1);
    EXPECT_EQ(rep["segments"][0]["from_iteration"], done + 1);
    EXPECT_EQ(rep["segments"][0]["changed"]["base_url"]["to"], proxy->base_url());
    const auto text = run_kevo({"report", id, "--db", db});
    EXPECT_NE(text.out.find("resumed from iteration " + std::to_string(done + 1)), std::string::npos) << text.out;
    EXPECT_NE(text.out.find(proxy->base_url()), std::string::npos) << text.out;
    ::unsetenv("KEVO_API_KEY");
}

TEST(LiteLlmOutage, AKeyTheProxyRefusesInterruptsTheRun) {
    KEVO_REQUIRE_LITELLM(litellm);
    auto proxy = start_proxy(*litellm, "wrongkey.log");
    ASSERT_TRUE(proxy);
    ::setenv("KEVO_API_KEY", "sk-wrong", 1);
    const std::string db = temp("wrongkey.db");
    const auto r = run_scripted_kevo(llm_run(proxy->base_url(), "kevo-good", db, {"--iterations", "5", "--run-id", "wrongkey"}));
    ::unsetenv("KEVO_API_KEY");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    const auto summary = r.json();
    EXPECT_EQ(summary["outcome"], "interrupted") << r.out;
    EXPECT_EQ(summary["interruption"], "proposer_unavailable");
    EXPECT_EQ(summary["proposals"]["failed"], 3);
    EXPECT_NE(r.err.find("[auth]"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("kevo run --resume wrongkey --db " + db), std::string::npos) << r.err;
    const auto rep = report(db, "wrongkey");
    EXPECT_EQ(rep["status"], "interrupted");
    EXPECT_TRUE(rep["heldout"].empty());
    EXPECT_EQ(rep["iterations"][3]["failure"], "auth") << rep["iterations"][3].dump(1);
}

TEST(LiteLlmOutage, MaxWallBoundsARequestInFlight) {
    KEVO_REQUIRE_LITELLM(litellm);
    auto proxy = start_proxy(*litellm, "maxwall.log");
    ASSERT_TRUE(proxy);
    ::setenv("KEVO_API_KEY", kMasterKey, 1);
    const std::string db = temp("maxwall.db");
    // The proxy answers after 30 s; --max-wall 12 leaves the request what the seed's evaluation did not use.
    const auto r = run_scripted_kevo(llm_run(proxy->base_url(), "kevo-slow", db,
                                    {"--iterations", "3", "--max-wall", "12", "--run-id", "maxwall"}));
    ::unsetenv("KEVO_API_KEY");
    ASSERT_EQ(r.exit_code, kevo::test::run_exit_status(r.json())) << r.err;
    EXPECT_LT(r.seconds, 28.0) << "the request was not cut at the run's deadline: " << r.err;
    EXPECT_NE(r.json()["stop_reason"].get<std::string>().find("wall-time limit"), std::string::npos) << r.out;
    const auto rep = report(db, "maxwall");
    ASSERT_GE(rep["iterations"].size(), 2u) << "the seed left time for a request: " << rep.dump(1);
    EXPECT_EQ(rep["iterations"][1]["failure"], "deadline") << rep["iterations"][1].dump(1);
}

}  // namespace
#endif
