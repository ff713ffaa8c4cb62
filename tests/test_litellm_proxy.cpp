// `kevo run --proposer llm` against a real OpenAI-compatible server: LiteLLM's proxy (from PyPI,
// installed by scripts/install-deps.sh into .venv-litellm, or named by KEVO_LITELLM), started here
// on 127.0.0.1 as a child process with models that answer from `mock_response`: a good kernel, prose
// without code, a <think> draft before the real answer; the failure classes of its refusals, a
// deadline and SIGTERM during a 30 s mock delay, a 2 MB rejected kernel kept out of later request
// bodies (seen through a recording relay), two code blocks, a 200 without choices. The proxy prices each reply itself
// (x-litellm-response-cost) and checks the key. The runs are kevo's run command on scripted
// evaluations (kevo_scripted, whose static scan is the real one): the proposer is what is tested,
// not the kernels. Skipped where LiteLLM is not installed, except in CI (CI=true), where its absence fails.
#ifdef KEVO_HAVE_HTTPLIB
#include <gtest/gtest.h>

#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>

#include <nlohmann/json.hpp>

#include "kevo_process.hpp"
#include "litellm_proxy.hpp"
#include "run_support.hpp"
#include "search/proposers/llm.hpp"
#include "task/registry.hpp"

using kevo::test::fenced;
using kevo::test::heat2d_variant;
using kevo::test::kMasterKey;
using kevo::test::LiteLlmProxy;
using kevo::test::RecordingRelay;
using kevo::test::run_kevo;
using kevo::test::run_scripted_kevo;
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
    LiteLlmProxy proxy(*litellm, write_config(), temp("litellm.log"));
    const std::string problem = proxy.wait_ready(180);
    ASSERT_TRUE(problem.empty()) << problem;
    ::setenv("KEVO_API_KEY", kMasterKey, 1);
    const std::string db = temp("litellm.db");

    // A good kernel, twice: evaluated, then a duplicate; tokens counted, the cost the proxy reports.
    const auto good = run_scripted_kevo(llm_run(proxy.base_url(), "kevo-good", db, {"--iterations", "2", "--cost-from-server",
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
    const auto think = run_scripted_kevo(llm_run(proxy.base_url(), "kevo-think", db, {"--iterations", "1", "--stream",
                                                                             "--temperature", "none",
                                                                             "--max-completion-tokens", "4000"}));
    ASSERT_EQ(think.exit_code, kevo::test::run_exit_status(think.json())) << think.err << proxy.log_tail();
    rep = run_kevo({"report", think.json()["run_id"].get<std::string>(), "--db", db, "--iteration", "1", "--json"}).json();
    EXPECT_NE(rep["source"].get<std::string>().find("block=64,2"), std::string::npos) << rep.dump(1);

    // Prose: no code twice, and the second prompt says so.
    const auto prose = run_scripted_kevo(llm_run(proxy.base_url(), "kevo-prose", db, {"--iterations", "2"}));
    ASSERT_EQ(prose.exit_code, 0) << prose.err << proxy.log_tail();
    EXPECT_EQ(prose.json()["proposals"]["no_code"], 2);
    rep = run_kevo({"report", prose.json()["run_id"].get<std::string>(), "--db", db, "--iteration", "2", "--json"}).json();
    EXPECT_NE(rep["prompt"].get<std::string>().find("## Your last answer (iteration 1) was not used"), std::string::npos);

    // A model the proxy does not serve: HTTP 400 "Invalid model name", three times, and the run stops.
    const auto unknown = run_scripted_kevo(llm_run(proxy.base_url(), "kevo-no-such-model", db, {"--iterations", "10"}));
    EXPECT_EQ(unknown.exit_code, 2) << unknown.err;
    EXPECT_NE(unknown.err.find("3 times in a row"), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("HTTP 400"), std::string::npos) << unknown.err;
    EXPECT_NE(unknown.err.find("kevo-no-such-model"), std::string::npos) << unknown.err;
    ::unsetenv("KEVO_API_KEY");
}

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

// Sends SIGTERM to a spawned kevo and returns the seconds it took to exit (killed after 25 s).
double seconds_to_exit_after_sigterm(pid_t pid) {
    const auto signalled = Clock::now();
    ::kill(pid, SIGTERM);
    int status = 0;
    while (::waitpid(pid, &status, WNOHANG) == 0 && seconds_since(signalled) < 25)
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const double took = seconds_since(signalled);
    if (took >= 25) ::kill(pid, SIGKILL), ::waitpid(pid, &status, 0);
    return took;
}

// heat2d's seed with 2 MB of comments: far above the static scan's size limit.
std::string huge_kernel() {
    std::string source = heat2d_variant("32,4");
    for (int i = 0; source.size() < 2'000'000; ++i) source += "// filler line " + std::to_string(i) + " of a huge kernel\n";
    return source;
}

std::string write_failure_config() {
    std::string repeated;
    for (int i = 0; i < 200; ++i) repeated += "abc";  // LiteLLM stops a stream of 100 identical chunks
    return kevo::test::write_proxy_config(
        temp("litellm-failures.yaml"),
        {{"kevo-good", fenced(heat2d_variant("32,4"))},
         {"kevo-slow", fenced(heat2d_variant("32,4"))},
         {"kevo-ratelimited", "litellm.RateLimitError"},
         {"kevo-repeat", repeated},
         {"kevo-o3", "unused"},
         {"kevo-huge", fenced(huge_kernel())},
         {"kevo-twoblocks", "Your current kernel is:\n```opencl\n" + std::string(kevo::task_file("heat2d", "seed.cl")) +
                                "```\nImproved version:\n" + fenced(heat2d_variant("32,4"))}},
        {{"kevo-slow", {{"mock_delay", 30}}}, {"kevo-o3", {{"model", "openai/o3"}}}});
}

kevo::LlmOptions options(const std::string& url, const std::string& model, const std::string& key) {
    kevo::LlmOptions o;
    o.base_url = url;
    o.model = model;
    o.api_key = key;
    o.max_retries = 1;
    o.backoff_initial_s = 0.05;
    o.request_timeout_s = 20;
    return o;
}

// The failure classes of the real proxy's answers, through the llm proposer itself: a key it refuses
// ("No connected db."), a model it does not serve, a parameter the model rejects, a rate limit, an
// error event inside a stream (retried like a 5xx), and the run's deadline cutting a 30 s mock delay.
TEST(LiteLlmProxy, FailuresAreClassifiedAndDeadlinesKept) {
    KEVO_REQUIRE_LITELLM(litellm);
    LiteLlmProxy proxy(*litellm, write_failure_config(), temp("litellm-failures.log"));
    const std::string problem = proxy.wait_ready(180);
    ASSERT_TRUE(problem.empty()) << problem;
    kevo::TaskSpec spec;
    spec.name = "heat2d";
    spec.kernels = {{"heat_step", {kevo::sig::const_ptr("u_in", kevo::ParamType::f32)}, 2, kevo::Dim3{16, 16, 1}}};
    kevo::ProposalContext context;
    context.spec = &spec;
    context.incumbent.source = std::string(kevo::task_file("heat2d", "seed.cl"));
    const auto propose = [&](const kevo::LlmOptions& o) { return kevo::make_llm_proposer(o)->propose(context); };
    using F = kevo::ProposerFailure;

    const auto wrong_key = propose(options(proxy.base_url(), "kevo-good", "sk-wrong"));
    EXPECT_EQ(wrong_key.failure_class, F::auth) << wrong_key.note;
    EXPECT_NE(wrong_key.note.find("No connected db."), std::string::npos) << wrong_key.note;
    EXPECT_EQ(wrong_key.failure_class, propose(options(proxy.base_url(), "kevo-good", "sk-other")).failure_class);
    const auto no_model = propose(options(proxy.base_url(), "kevo-no-such-model", kMasterKey));
    EXPECT_EQ(no_model.failure_class, F::bad_request_parameter) << no_model.note;
    const auto o3 = propose(options(proxy.base_url(), "kevo-o3", kMasterKey));  // temperature 0.7
    EXPECT_EQ(o3.failure_class, F::bad_request_parameter) << o3.note;
    EXPECT_EQ(o3.note.find('\n'), std::string::npos) << "one clean line";
    EXPECT_NE(o3.detail.find('\n'), std::string::npos) << "the whole message kept";
    const auto limited = propose(options(proxy.base_url(), "kevo-ratelimited", kMasterKey));
    EXPECT_EQ(limited.failure_class, F::rate_limited) << limited.note;
    EXPECT_TRUE(kevo::failed_because_of_proposer(limited));

    auto stream = options(proxy.base_url(), "kevo-repeat", kMasterKey);
    stream.stream = true;
    const auto repeat = propose(stream);
    EXPECT_EQ(repeat.failure_class, F::server_error) << repeat.note;
    EXPECT_NE(repeat.note.find("HTTP 200 stream error x2"), std::string::npos) << repeat.note;

    const auto good = propose(options(proxy.base_url(), "kevo-good", kMasterKey));
    EXPECT_EQ(good.status, kevo::Proposal::Status::ok) << good.note;
    EXPECT_GT(good.prompt_tokens, 0);

    context.deadline = Clock::now() + std::chrono::milliseconds(1500);
    const auto start = Clock::now();
    const auto slow = propose(options(proxy.base_url(), "kevo-slow", kMasterKey));
    EXPECT_LT(seconds_since(start), 3.0);
    EXPECT_EQ(slow.failure_class, F::deadline) << slow.note;
    EXPECT_FALSE(kevo::failed_because_of_proposer(slow));
}

// kevo run against the proxy through a relay that keeps the bodies the proxy received: SIGTERM
// during a 30 s mock delay ends the run within 2 s; a 2 MB rejected candidate never reaches a later
// request in full; of two code blocks the model's kernel is evaluated, not the quoted seed; a 200
// without choices keeps its usage and spends both caps; SIGTERM after a reply keeps that reply's
// tokens and cost; a --stream run resumed with --no-stream asks for whole answers.
TEST(LiteLlmProxy, RunsStopPromptlyAndPromptsStayBounded) {
    KEVO_REQUIRE_LITELLM(litellm);
    LiteLlmProxy proxy(*litellm, write_failure_config(), temp("litellm-runs.log"));
    const std::string problem = proxy.wait_ready(180);
    ASSERT_TRUE(problem.empty()) << problem;
    RecordingRelay relay(proxy.port(), 8);
    ::setenv("KEVO_API_KEY", kMasterKey, 1);
    const std::string db = temp("litellm-runs.db");

    // SIGTERM 0.5 s after the request reached the proxy, which answers only after 30 s.
    {
        const auto args = llm_run(relay.base_url(), "kevo-slow", db, {"--iterations", "3", "--run-id", "slow"});
        const pid_t pid = kevo::test::spawn_kevo(args, temp("slow.log"), "", KEVO_SCRIPTED_BINARY);
        ASSERT_GT(pid, 0);
        const auto until = Clock::now() + std::chrono::seconds(120);
        while (relay.bodies().empty() && Clock::now() < until) std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ASSERT_FALSE(relay.bodies().empty()) << slurp(temp("slow.log"));
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        const double took = seconds_to_exit_after_sigterm(pid);
        EXPECT_LT(took, 2.0) << slurp(temp("slow.log"));
        EXPECT_EQ(report(db, "slow")["status"], "interrupted");
        EXPECT_EQ(relay.bodies().size(), 1u) << "no retry after the signal";
    }

    // A 2 MB kernel, twice: rejected by the static scan, then quoted in part only.
    const size_t before = relay.bodies().size();
    const auto huge = run_scripted_kevo(llm_run(relay.base_url(), "kevo-huge", db, {"--iterations", "2"}));
    ASSERT_EQ(huge.exit_code, kevo::test::run_exit_status(huge.json())) << huge.err;
    const auto bodies = relay.bodies();
    ASSERT_EQ(bodies.size(), before + 2);
    for (size_t i = before; i < bodies.size(); ++i) {
        EXPECT_LT(bodies[i].size(), 100'000u) << "request " << i - before + 1;
        EXPECT_EQ(bodies[i].find("filler line 30000 of a huge kernel"), std::string::npos);
    }
    EXPECT_NE(bodies.back().find("cut here]"), std::string::npos) << "the second prompt says what was cut";

    // The same through a server that reports its context (max_model_len, less the answer's 8192):
    // without --max-prompt-tokens the whole prompt is kept under 4/5 of what the server takes.
    constexpr int kInput = 3000;
    relay.report_context("kevo-huge", kInput + 8192);
    const auto bounded = run_scripted_kevo(llm_run(relay.base_url("/ctx"), "kevo-huge", db, {"--iterations", "2"}));
    ASSERT_EQ(bounded.exit_code, kevo::test::run_exit_status(bounded.json())) << bounded.err;
    const auto second = nlohmann::json::parse(relay.bodies().back(), nullptr, false);
    ASSERT_TRUE(second.is_object());
    size_t chars = 0;
    for (const auto& message : second["messages"]) chars += message.value("content", std::string()).size();
    std::printf("second request: %zu bytes under the default bound, %zu under the server's %d tokens\n",
                bodies.back().size(), relay.bodies().back().size(), kInput);
    EXPECT_LE((chars + 3) / 4, static_cast<size_t>(kInput * 4 / 5)) << "the prompt's estimated tokens";
    EXPECT_LT(relay.bodies().back().size(), bodies.back().size()) << "smaller than under the default bound";

    // The seed quoted, then the model's kernel: the kernel is evaluated.
    const auto two = run_scripted_kevo(llm_run(relay.base_url(), "kevo-twoblocks", db, {"--iterations", "1"}));
    ASSERT_EQ(two.exit_code, kevo::test::run_exit_status(two.json())) << two.err;
    const auto it1 = run_kevo({"report", two.json()["run_id"].get<std::string>(), "--db", db, "--iteration", "1", "--json"}).json();
    EXPECT_NE(it1["source"].get<std::string>().find("block=32,4"), std::string::npos) << it1.dump(1);
    EXPECT_EQ(it1["status"], "evaluated") << it1.dump(1);

    // 200 without choices: the usage the proxy reported is counted, and so is its cost; the proposer
    // failed (--max-proposer-failures 1 times), so the run is interrupted, exit 2.
    const auto none = run_scripted_kevo(llm_run(relay.base_url("/nochoices"), "kevo-good", db,
                                       {"--iterations", "1", "--cost-from-server", "--max-proposer-failures", "1"}));
    const auto usage = relay.stripped_usage();
    ASSERT_TRUE(usage.is_object()) << none.err;
    EXPECT_EQ(none.exit_code, 2) << none.err;
    EXPECT_EQ(none.json()["interruption"], "proposer_unavailable") << none.out;
    const auto rep = report(db, none.json()["run_id"]);
    EXPECT_EQ(rep["tokens"], usage["prompt_tokens"].get<int>() + usage["completion_tokens"].get<int>()) << rep.dump(1);
    EXPECT_GT(rep["cost_usd"].get<double>(), 0.0);

    // Replies without choices count against both caps: the first one spends the token budget (and,
    // priced by the server, the cost cap), so no second request is sent.
    for (const std::vector<std::string>& cap : {std::vector<std::string>{"--max-tokens-total", "1"},
                                                std::vector<std::string>{"--max-cost", "0.0000001"}}) {
        const size_t sent = relay.bodies().size();
        std::vector<std::string> more = {"--iterations", "3", "--cost-from-server", "--max-proposer-failures", "3"};
        more.insert(more.end(), cap.begin(), cap.end());
        const auto capped = run_scripted_kevo(llm_run(relay.base_url("/nochoices"), "kevo-good", db, more));
        EXPECT_EQ(relay.bodies().size(), sent + 1) << cap[0] << ": " << capped.err;
        const std::string reason = capped.json().value("stop_reason", "");
        EXPECT_NE(reason.find(cap[0] == "--max-cost" ? "cost cap" : "token budget"), std::string::npos) << capped.out;
    }

    // A reply received, then SIGTERM during the next request (the relay sends it to kevo-slow): the
    // run exits within 2 s and keeps the tokens and the server's cost of the reply it received.
    {
        const size_t sent = relay.bodies().size(), replies = relay.usages().size();
        const auto args = llm_run(relay.base_url("/slowafter1"), "kevo-good", db,
                                  {"--iterations", "3", "--cost-from-server", "--run-id", "received"});
        const pid_t pid = kevo::test::spawn_kevo(args, temp("received.log"), "", KEVO_SCRIPTED_BINARY);
        ASSERT_GT(pid, 0);
        const auto until = Clock::now() + std::chrono::seconds(180);
        while (relay.bodies().size() < sent + 2 && Clock::now() < until)
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        ASSERT_EQ(relay.bodies().size(), sent + 2) << slurp(temp("received.log"));
        std::this_thread::sleep_for(std::chrono::milliseconds(500));
        const double took = seconds_to_exit_after_sigterm(pid);
        EXPECT_LT(took, 2.0) << slurp(temp("received.log"));
        const auto usages = relay.usages();
        ASSERT_EQ(usages.size(), replies + 1) << "one reply reached kevo before the signal";
        const auto got = report(db, "received");
        EXPECT_EQ(got["status"], "interrupted");
        EXPECT_EQ(got["tokens"], usages.back()["prompt_tokens"].get<int>() + usages.back()["completion_tokens"].get<int>())
            << got.dump(1);
        EXPECT_GT(got["cost_usd"].get<double>(), 0.0) << got.dump(1);
    }

    // Started with --stream, resumed with --no-stream: the resumed requests ask for one whole answer,
    // and the change is a segment of the run's settings.
    const auto streamed = run_scripted_kevo(llm_run(relay.base_url(), "kevo-good", db, {"--iterations", "1", "--stream", "--run-id", "streamed"}));
    ASSERT_EQ(streamed.exit_code, kevo::test::run_exit_status(streamed.json())) << streamed.err;
    EXPECT_EQ(nlohmann::json::parse(relay.bodies().back(), nullptr, false).value("stream", false), true);
    const auto whole = run_scripted_kevo({"run", "--resume", "streamed", "--db", db, "--iterations", "2", "--no-stream", "--json"});
    ASSERT_EQ(whole.exit_code, kevo::test::run_exit_status(whole.json())) << whole.err;
    EXPECT_EQ(nlohmann::json::parse(relay.bodies().back(), nullptr, false).value("stream", false), false)
        << relay.bodies().back().substr(0, 300);
    const auto segments = report(db, "streamed")["segments"];
    ASSERT_EQ(segments.size(), 1u) << segments.dump(1);
    EXPECT_EQ(segments[0]["changed"]["stream"]["from"], true);
    EXPECT_EQ(segments[0]["changed"]["stream"]["to"], false);
    ::unsetenv("KEVO_API_KEY");
}

}  // namespace
#else
#include <gtest/gtest.h>
TEST(LiteLlmProxy, RunsAgainstTheRealProxy) { GTEST_SKIP() << "cpp-httplib not found at configure time"; }
#endif
