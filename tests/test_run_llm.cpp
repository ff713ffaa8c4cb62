// `kevo run --proposer llm` end to end against a fake OpenAI-compatible endpoint served by this
// test on 127.0.0.1: one run meets a valid kernel, a compile error, a wrong kernel, prose without
// code, HTTP 429, HTTP 500 and a stalled connection, and must finish with every iteration recorded
// and the right verdicts; the same permanent error three times interrupts a run (exit 2,
// resumable); a cost cap needs a price or the server's reported cost; --stream reads server-sent
// events; a token budget stops the search; a base URL that is not http(s) and two token limits at
// once are refused. The first run evaluates its kernels for real (PoCL); the others are kevo's run
// command on scripted evaluations (kevo_scripted): the proposer is what they test.
#ifdef KEVO_HAVE_HTTPLIB
#include <gtest/gtest.h>
#include <httplib.h>

#include <atomic>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "store/store.hpp"
#include "task/registry.hpp"

using kevo::test::has_device;
using kevo::test::run_kevo;
using kevo::test::run_scripted_kevo;

namespace {

std::string fenced(const std::string& code) { return "Here is my kernel.\n\n```opencl\n" + code + "\n```\n"; }

std::string heat2d_variant(const std::string& block) {
    std::string source(kevo::task_file("heat2d", "seed.cl"));
    source.replace(source.find("// kevo: launch heat_step block=BX,BY"), 37, "// kevo: launch heat_step block=" + block);
    return source;
}

std::string chat_reply(const std::string& content) {
    return nlohmann::json{{"id", "fake"}, {"object", "chat.completion"},
                          {"choices", {{{"index", 0}, {"message", {{"role", "assistant"}, {"content", content}}}, {"finish_reason", "stop"}}}},
                          {"usage", {{"prompt_tokens", 1000}, {"completion_tokens", 200}, {"total_tokens", 1200}}}}
        .dump();
}

class ScriptedEndpoint {
public:
    explicit ScriptedEndpoint(std::vector<std::function<void(httplib::Response&)>> script) : script_(std::move(script)) {
        std::signal(SIGPIPE, SIG_IGN);
        server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
            const size_t n = requests_++;
            last_body_ = req.body;
            if (n < script_.size()) script_[n](res);
            else res.status = 500;
        });
        port_ = server_.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~ScriptedEndpoint() {
        server_.stop();
        thread_.join();
    }
    int port() const { return port_; }
    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
    size_t requests() const { return requests_; }
    std::string last_body() const { return last_body_; }

private:
    httplib::Server server_;
    std::vector<std::function<void(httplib::Response&)>> script_;
    std::atomic<size_t> requests_{0};
    std::string last_body_;
    int port_ = 0;
    std::thread thread_;
};

TEST(RunLlm, EveryKindOfAnswerInOneRun) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    std::string good(kevo::task_file("heat2d", "seed.cl"));
    std::string good2 = good;
    good.replace(good.find("// kevo: launch heat_step block=BX,BY"), 37, "// kevo: launch heat_step block=32,4");
    good2.replace(good2.find("// kevo: launch heat_step block=BX,BY"), 37, "// kevo: launch heat_step block=64,2");
    const std::string wrong = kevo::test::slurp(kevo::test::candidate("heat2d_wrong_formula.cl"));
    const std::string broken = good.substr(0, good.rfind('}')) + "    undefined_symbol += 1;\n}\n";
    auto answer = [](std::string content) { return [content](httplib::Response& r) { r.set_content(chat_reply(content), "application/json"); }; };
    auto status = [](int code) {
        return [code](httplib::Response& r) {
            r.status = code;
            if (code == 429) r.set_header("Retry-After", "0");
            r.set_content(R"({"error":{"message":"scripted failure"}})", "application/json");
        };
    };
    auto stall = [](httplib::Response& r) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2500));
        r.set_content(chat_reply("too late"), "application/json");
    };
    ScriptedEndpoint endpoint({
        answer(fenced(good)),                                    // it 1: ok
        answer(fenced(broken)),                                  // it 2: compile_error
        answer(fenced(wrong)),                                   // it 3: incorrect
        answer("I would tile the stencil in shared memory, but I will not write code now."),  // it 4: no_code
        status(429), answer(fenced(good2)),                      // it 5: 429, retried, then ok
        status(500), status(500),                                // it 6: 500 twice: proposer_error
        stall, stall,                                            // it 7: stalled twice: proposer_error
        answer("No code this time."), answer("Nor now."),        // it 8, 9: no_code (6 and 7 were not counted)
    });
    const auto dir = std::filesystem::path(::testing::TempDir()) / ("kevo_llm_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    const std::string db = (dir / "llm.db").string();
    const auto r = run_kevo({"run", "heat2d", "--backend", "opencl", "--proposer", "llm", "--base-url",
                             "http://127.0.0.1:" + std::to_string(endpoint.port()) + "/v1", "--model", "fake-model",
                             "--iterations", "7", "--retries", "1", "--retry-backoff", "0.05", "--request-timeout", "1",
                             "--price-in", "1", "--price-out", "2", "--warmup", "1", "--repeat", "3", "--db", db,
                             "--out", (dir / "out").string(), "--json"});
    ASSERT_EQ(r.exit_code, kevo::test::run_exit_status(r.json())) << r.err;
    EXPECT_EQ(endpoint.requests(), 12u);
    const auto last = nlohmann::json::parse(endpoint.last_body(), nullptr, false);
    EXPECT_EQ(last["model"], "fake-model");
    const auto summary = r.json();
    EXPECT_EQ(summary["iterations"], 9) << "7 proposals came back; the 2 that failed are not counted";

    const auto rep = run_kevo({"report", summary["run_id"], "--db", db, "--json"}).json();
    EXPECT_EQ(rep["status"], "finished");
    const auto& its = rep["iterations"];
    ASSERT_EQ(its.size(), 10u) << rep.dump(2);
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"evaluated", "ok"}, {"evaluated", "ok"}, {"evaluated", "compile_error"}, {"evaluated", "incorrect"},
        {"no_code", ""}, {"evaluated", "ok"}, {"proposer_error", ""}, {"proposer_error", ""}, {"no_code", ""},
        {"no_code", ""}};
    for (size_t i = 0; i < expected.size(); ++i) {
        SCOPED_TRACE("iteration " + std::to_string(i));
        EXPECT_EQ(its[i]["iteration"], static_cast<int>(i));
        EXPECT_EQ(its[i]["status"], expected[i].first) << its[i].dump(2);
        if (!expected[i].second.empty()) EXPECT_EQ(its[i]["verdict"], expected[i].second);
        EXPECT_FALSE(its[i]["diagnostics"].get<std::string>().empty() && expected[i].second != "ok");
    }
    EXPECT_NE(its[2]["diagnostics"].get<std::string>().find("undefined_symbol"), std::string::npos) << its[2].dump(2);
    EXPECT_NE(its[5]["note"].get<std::string>().find("429"), std::string::npos) << its[5].dump(2);
    EXPECT_NE(its[6]["note"].get<std::string>().find("500"), std::string::npos) << its[6].dump(2);
    // Tokens and cost: 1000 + 200 tokens per answered request at $1 / $2 per million.
    EXPECT_GT(rep["tokens"].get<int>(), 0);
    EXPECT_GT(rep["cost_usd"].get<double>(), 0.0);
    // The whole transcript is stored.
    auto store = kevo::Store::open(db);
    ASSERT_TRUE(store.has_value());
    auto stored = (*store)->load_iterations(summary["run_id"]);
    ASSERT_TRUE(stored.has_value());
    EXPECT_NE((*stored)[1].prompt.find("heat_step"), std::string::npos);
    EXPECT_NE((*stored)[1].answer.find("block=32,4"), std::string::npos);
    EXPECT_EQ((*stored)[1].prompt.find("100x75x15"), std::string::npos) << "the held-out size leaked into the prompt";
}

using Step = std::function<void(httplib::Response&)>;

Step answer(const std::string& content, std::vector<std::pair<std::string, std::string>> headers = {}) {
    return [content, headers](httplib::Response& r) {
        for (const auto& [k, v] : headers) r.set_header(k, v);
        r.set_content(chat_reply(content), "application/json");
    };
}

Step refuse(int code, const std::string& message) {
    return [code, message](httplib::Response& r) {
        r.status = code;
        r.set_content(nlohmann::json{{"error", {{"message", message}}}}.dump(), "application/json");
    };
}

std::string temp(const std::string& name) { return kevo::test::temp_path("kevo_llm_stop", name); }

// A short llm run of heat2d on OpenCL against `url`.
std::vector<std::string> llm_run(const std::string& url, const std::string& db, std::vector<std::string> more) {
    std::vector<std::string> args = {"run", "heat2d", "--backend", "opencl", "--proposer", "llm", "--base-url", url,
                                     "--model", "fake-model", "--retries", "1", "--retry-backoff", "0.05",
                                     "--warmup", "1", "--repeat", "3", "--gate-rounds", "1", "--db", db,
                                     "--out", temp("out")};
    args.insert(args.end(), more.begin(), more.end());
    return args;
}

nlohmann::json newest_run(const std::string& db) {
    const auto all = run_kevo({"report", "--all", "--db", db, "--json"}).json();
    return all.is_object() && !all["runs"].empty() ? all["runs"][0] : nlohmann::json();
}

TEST(RunLlm, TheSamePermanentErrorThreeTimesStopsTheRunWhichResumesOnceMended) {
    ScriptedEndpoint endpoint({refuse(401, "Incorrect API key provided"), refuse(401, "Incorrect API key provided"),
                               refuse(401, "Incorrect API key provided"), answer(fenced(heat2d_variant("32,4"))),
                               answer("no code"), answer("no code"), answer("no code")});
    const std::string db = temp("permanent.db");
    const auto r = run_scripted_kevo(llm_run(endpoint.base_url(), db, {"--iterations", "4"}));
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_EQ(endpoint.requests(), 3u) << "a 401 is not retried, and the fourth iteration never starts";
    EXPECT_NE(r.err.find("3 times in a row"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("HTTP 401"), std::string::npos) << r.err;
    EXPECT_NE(r.err.find("Incorrect API key provided"), std::string::npos) << r.err;
    const auto run = newest_run(db);
    ASSERT_TRUE(run.is_object());
    EXPECT_EQ(run["status"], "interrupted");
    EXPECT_EQ(run["summary"]["interruption"], "proposer_unavailable");
    EXPECT_NE(run["summary"]["error"].get<std::string>().find("Incorrect API key provided"), std::string::npos);
    EXPECT_EQ(run["summary"]["proposals"]["failed"], 3);
    const std::string id = run["run_id"];
    const auto rep = run_kevo({"report", id, "--db", db, "--json"}).json();
    ASSERT_EQ(rep["iterations"].size(), 4u) << rep.dump(1);
    for (int i = 1; i <= 3; ++i) EXPECT_EQ(rep["iterations"][i]["status"], "permanent_error") << rep["iterations"][i].dump(1);

    // Mended (the endpoint now answers): the stored run goes on from iteration 4, and the 3 failed
    // iterations do not count against --iterations 4.
    // The model is mended on the command line: a new segment of the run's settings.
    const auto resumed = run_scripted_kevo({"run", "--resume", id, "--db", db, "--model", "mended-model", "--json"});
    ASSERT_EQ(resumed.exit_code, kevo::test::run_exit_status(resumed.json())) << resumed.err;
    EXPECT_EQ(endpoint.requests(), 7u);
    EXPECT_EQ(nlohmann::json::parse(endpoint.last_body(), nullptr, false)["model"], "mended-model");
    const auto segments = run_kevo({"report", id, "--db", db, "--json"}).json()["segments"];
    ASSERT_EQ(segments.size(), 1u) << segments.dump(1);
    EXPECT_EQ(segments[0]["from_iteration"], 4);
    EXPECT_EQ(segments[0]["changed"]["model"]["from"], "fake-model");
    EXPECT_EQ(segments[0]["changed"]["model"]["to"], "mended-model");
    const auto summary = resumed.json();
    EXPECT_EQ(summary["iterations"], 7);
    EXPECT_EQ(summary["proposals"]["failed"], 3);
    EXPECT_EQ(summary["proposals"]["evaluated"], 1);
    EXPECT_EQ(newest_run(db)["status"], "finished");
}

TEST(RunLlm, ACostCapNeedsAPriceOrTheServersCost) {
    const std::string db = temp("cost.db");
    const auto unpriced = run_scripted_kevo(llm_run("http://127.0.0.1:9/v1", db, {"--max-cost", "1"}));
    EXPECT_EQ(unpriced.exit_code, 2);
    EXPECT_NE(unpriced.err.find("--max-cost 1 needs a price"), std::string::npos) << unpriced.err;
    EXPECT_NE(unpriced.err.find("--cost-from-server"), std::string::npos) << unpriced.err;
    const auto both = run_scripted_kevo(llm_run("http://127.0.0.1:9/v1", db, {"--cost-from-server", "--price-in", "1"}));
    EXPECT_EQ(both.exit_code, 2);
    EXPECT_NE(both.err.find("give one of them"), std::string::npos) << both.err;
    const auto tune = run_scripted_kevo({"run", "heat2d", "--backend", "opencl", "--max-cost", "1", "--db", db});
    EXPECT_EQ(tune.exit_code, 2);
    EXPECT_NE(tune.err.find("applies to --proposer llm"), std::string::npos) << tune.err;

    // The server's reported cost keeps the cap: $0.6 a reply, a cap of $1, so two iterations.
    const std::vector<std::pair<std::string, std::string>> cost = {{"x-litellm-response-cost", "0.6"}};
    ScriptedEndpoint reporting({answer(fenced(heat2d_variant("32,4")), cost), answer("no code here", cost),
                                answer("no code here", cost)});
    const auto capped = run_scripted_kevo(llm_run(reporting.base_url(), db, {"--cost-from-server", "--max-cost", "1",
                                                                    "--iterations", "5", "--json"}));
    ASSERT_EQ(capped.exit_code, kevo::test::run_exit_status(capped.json())) << capped.err;
    EXPECT_EQ(reporting.requests(), 2u);
    EXPECT_EQ(capped.json()["iterations"], 2);
    EXPECT_NEAR(capped.json()["cost_usd"].get<double>(), 1.2, 1e-9);
    EXPECT_NE(capped.json()["stop_reason"].get<std::string>().find("cost cap"), std::string::npos) << capped.out;

    // A reply without the cost: the cap could no longer be kept, so the run stops at once.
    ScriptedEndpoint silent({answer(fenced(heat2d_variant("32,4")))});
    const auto stopped = run_scripted_kevo(llm_run(silent.base_url(), db, {"--cost-from-server", "--max-cost", "1",
                                                                  "--iterations", "5"}));
    EXPECT_EQ(stopped.exit_code, 2) << stopped.err;
    EXPECT_EQ(silent.requests(), 1u);
    EXPECT_NE(stopped.err.find("without the x-litellm-response-cost header"), std::string::npos) << stopped.err;
    EXPECT_EQ(newest_run(db)["status"], "failed");
}

// Every reply uses 1200 tokens (1000 + 200): a budget of 2000 allows a second request, not a third.
TEST(RunLlm, ATokenBudgetStopsTheSearch) {
    ScriptedEndpoint endpoint({answer("no code here"), answer("no code here"), answer("no code here")});
    const auto r = run_scripted_kevo(llm_run(endpoint.base_url(), temp("tokens.db"),
                                    {"--max-tokens-total", "2000", "--iterations", "5", "--json"}));
    ASSERT_EQ(r.exit_code, kevo::test::run_exit_status(r.json())) << r.err;
    EXPECT_EQ(endpoint.requests(), 2u);
    EXPECT_EQ(r.json()["iterations"], 2);
    EXPECT_NE(r.json()["stop_reason"].get<std::string>().find("token budget (2400 used of 2000)"), std::string::npos) << r.out;
}

TEST(RunLlm, StreamedAnswersAreEvaluated) {
    const std::string content = fenced(heat2d_variant("32,4"));
    const Step stream = [content](httplib::Response& r) {
        std::string body;
        for (size_t i = 0; i < content.size(); i += 40)
            body += "data: " + nlohmann::json{{"choices", {{{"index", 0}, {"delta", {{"content", content.substr(i, 40)}}}}}}}.dump() + "\n\n";
        body += "data: " + nlohmann::json{{"choices", nlohmann::json::array()}, {"usage", {{"prompt_tokens", 700}, {"completion_tokens", 70}}}}.dump() + "\n\n";
        r.set_content(body + "data: [DONE]\n\n", "text/event-stream");
    };
    ScriptedEndpoint endpoint({stream, stream, stream, stream, stream});  // one run of 1 iteration, one stopped after 3
    const std::string db = temp("stream.db");
    const auto r = run_scripted_kevo(llm_run(endpoint.base_url(), db, {"--stream", "--iterations", "1", "--json"}));
    ASSERT_EQ(r.exit_code, kevo::test::run_exit_status(r.json())) << r.err;
    EXPECT_NE(endpoint.last_body().find("\"stream\":true"), std::string::npos) << endpoint.last_body();
    const auto rep = run_kevo({"report", r.json()["run_id"], "--db", db, "--json"}).json();
    ASSERT_EQ(rep["iterations"].size(), 2u);
    EXPECT_EQ(rep["iterations"][1]["status"], "evaluated") << rep["iterations"][1].dump(1);
    EXPECT_EQ(rep["iterations"][1]["verdict"], "ok");
    EXPECT_EQ(rep["tokens"], 770);

    // Without --stream the same answer is a permanent error that says what to do.
    const auto plain = run_scripted_kevo(llm_run(endpoint.base_url(), db, {"--iterations", "5"}));
    EXPECT_EQ(plain.exit_code, 2) << plain.err;
    EXPECT_NE(plain.err.find("the server answered with a stream (text/event-stream); pass --stream"), std::string::npos)
        << plain.err;
}

TEST(RunLlm, UsageErrorsNameTheFlag) {
    const std::string db = temp("usage.db");
    const auto ftp = run_scripted_kevo(llm_run("ftp://example.org/v1", db, {}));
    EXPECT_EQ(ftp.exit_code, 2);
    EXPECT_NE(ftp.err.find("--base-url ftp://example.org/v1: only http:// and https:// URLs are accepted"),
              std::string::npos) << ftp.err;
    EXPECT_LT(ftp.seconds, 10.0);
    const auto two = run_scripted_kevo(llm_run("http://127.0.0.1:9/v1", db, {"--max-tokens", "100", "--max-completion-tokens", "100"}));
    EXPECT_EQ(two.exit_code, 2);
    EXPECT_NE(two.err.find("--max-tokens and --max-completion-tokens"), std::string::npos) << two.err;
    const auto bad = run_scripted_kevo(llm_run("http://127.0.0.1:9/v1", db, {"--temperature", "warm"}));
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_NE(bad.err.find("none"), std::string::npos) << bad.err;
}

}  // namespace
#endif
