// `kevo run --proposer llm` end to end against a fake OpenAI-compatible endpoint served by this
// test on 127.0.0.1: one run meets a valid kernel, a compile error, a wrong kernel, prose without
// code, HTTP 429, HTTP 500 and a stalled connection, and must finish with every iteration recorded
// and the right verdicts.
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

namespace {

std::string fenced(const std::string& code) { return "Here is my kernel.\n\n```opencl\n" + code + "\n```\n"; }

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
    EXPECT_EQ(endpoint.requests(), 10u);
    const auto last = nlohmann::json::parse(endpoint.last_body(), nullptr, false);
    EXPECT_EQ(last["model"], "fake-model");
    const auto summary = r.json();
    EXPECT_EQ(summary["iterations"], 7);

    const auto rep = run_kevo({"report", summary["run_id"], "--db", db, "--json"}).json();
    EXPECT_EQ(rep["status"], "finished");
    const auto& its = rep["iterations"];
    ASSERT_EQ(its.size(), 8u) << rep.dump(2);
    const std::vector<std::pair<std::string, std::string>> expected = {
        {"evaluated", "ok"}, {"evaluated", "ok"}, {"evaluated", "compile_error"}, {"evaluated", "incorrect"},
        {"no_code", ""}, {"evaluated", "ok"}, {"proposer_error", ""}, {"proposer_error", ""}};
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

}  // namespace
#endif
