// `kevo run --proposer llm` against a real OpenAI-compatible server: LiteLLM's proxy (from PyPI,
// installed by scripts/install-deps.sh into .venv-litellm, or named by KEVO_LITELLM), started here
// on 127.0.0.1 as a child process with models that answer from `mock_response`: a good kernel, prose
// without code, a <think> draft before the real answer. The proxy prices each reply itself
// (x-litellm-response-cost) and checks the key. Skipped where LiteLLM is not installed, except in
// CI (CI=true), where its absence fails.
#ifdef KEVO_HAVE_HTTPLIB
#include <gtest/gtest.h>
#include <httplib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "task/registry.hpp"

extern char** environ;

using kevo::test::has_device;
using kevo::test::run_kevo;
using kevo::test::slurp;

namespace {

using Clock = std::chrono::steady_clock;

constexpr const char* kMasterKey = "sk-kevo-test-5d1f0c8a9b7e4f3a2c6d8e0f1a2b3c4d";

std::string temp(const std::string& name) { return kevo::test::temp_path("kevo_litellm", name); }

// KEVO_LITELLM, else the virtual environment scripts/install-deps.sh makes.
std::optional<std::string> find_litellm() {
    if (const char* named = std::getenv("KEVO_LITELLM"); named && *named) return std::string(named);
    const std::string venv = std::string(KEVO_SOURCE_DIR) + "/.venv-litellm/bin/litellm";
    if (::access(venv.c_str(), X_OK) == 0) return venv;
    return std::nullopt;
}

int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = 0;
    socklen_t len = sizeof addr;
    int port = 0;
    if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
        ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0)
        port = ntohs(addr.sin_port);
    ::close(fd);
    return port;
}

std::string fenced(const std::string& code) { return "Here is my kernel.\n\n```opencl\n" + code + "\n```\n"; }

std::string heat2d_variant(const std::string& block) {
    std::string source(kevo::task_file("heat2d", "seed.cl"));
    source.replace(source.find("// kevo: launch heat_step block=BX,BY"), 37, "// kevo: launch heat_step block=" + block);
    return source;
}

// The proxy's configuration (JSON is YAML): each model answers with a fixed text, priced as
// gpt-4o-mini from LiteLLM's own price list.
std::string write_config() {
    const auto model = [](const std::string& name, const std::string& answer) {
        return nlohmann::json{{"model_name", name},
                              {"litellm_params", {{"model", "openai/gpt-4o-mini"}, {"api_key", "sk-unused"},
                                                  {"mock_response", answer}}}};
    };
    const nlohmann::json config = {
        {"model_list",
         {model("kevo-good", fenced(heat2d_variant("32,4"))),
          model("kevo-prose", "I would tile the stencil in local memory, but I will not write the code."),
          model("kevo-think", "<think>A first draft:\n```opencl\n__kernel void heat_step() {}\n```\nNo, keep the "
                              "whole stencil.</think>\n" + fenced(heat2d_variant("64,2")))}},
        {"general_settings", {{"master_key", kMasterKey}}},
    };
    const std::string path = temp("litellm-config.yaml");
    std::ofstream(path) << config.dump(2);
    return path;
}

// The proxy as a child process in its own process group, killed (the whole group) when this ends,
// whether the test passed or not.
class LiteLlmProxy {
public:
    LiteLlmProxy(const std::string& litellm, const std::string& config) : port_(free_port()), log_(temp("litellm.log")) {
        std::vector<std::string> args = {litellm, "--config", config, "--port", std::to_string(port_), "--host", "127.0.0.1"};
        std::vector<std::string> env;
        for (char** e = environ; *e; ++e) env.emplace_back(*e);
        env.emplace_back("LITELLM_LOCAL_MODEL_COST_MAP=True");  // its bundled price list: no network
        env.emplace_back("LITELLM_TELEMETRY=False");
        env.emplace_back("NO_PROXY=127.0.0.1,localhost");
        std::vector<char*> argv, envp;
        for (auto& a : args) argv.push_back(a.data());
        argv.push_back(nullptr);
        for (auto& e : env) envp.push_back(e.data());
        envp.push_back(nullptr);
        pid_ = kevo::test::spawn_in_own_group(litellm.c_str(), argv.data(), envp.data(), log_);
    }
    ~LiteLlmProxy() {
        if (pid_ <= 0) return;
        ::kill(-pid_, SIGTERM);
        const auto until = Clock::now() + std::chrono::seconds(10);
        int status = 0;
        while (::waitpid(pid_, &status, WNOHANG) == 0) {
            if (Clock::now() > until) {
                ::kill(-pid_, SIGKILL);
                ::waitpid(pid_, &status, 0);
                break;
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(50));
        }
        ::kill(-pid_, SIGKILL);  // anything it left behind in its group
    }
    LiteLlmProxy(const LiteLlmProxy&) = delete;
    LiteLlmProxy& operator=(const LiteLlmProxy&) = delete;

    // Waits for /health/liveliness; an error text when the proxy died or never answered.
    std::string wait_ready(double seconds) {
        if (pid_ <= 0) return "cannot start the proxy";
        httplib::Client client("127.0.0.1", port_);
        client.set_connection_timeout(1);
        const auto until = Clock::now() + std::chrono::duration<double>(seconds);
        while (Clock::now() < until) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) {
                pid_ = -1;
                return "the proxy exited while starting:\n" + log_tail();
            }
            if (auto res = client.Get("/health/liveliness"); res && res->status == 200) return {};
            std::this_thread::sleep_for(std::chrono::milliseconds(250));
        }
        return "the proxy did not answer /health/liveliness in time:\n" + log_tail();
    }
    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
    std::string log_tail() const {
        const std::string log = slurp(log_);
        return log.substr(log.size() > 3000 ? log.size() - 3000 : 0);
    }

private:
    int port_;
    std::string log_;
    pid_t pid_ = -1;
};

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
    const auto litellm = find_litellm();
    if (!litellm) {
        const char* ci = std::getenv("CI");
        if (ci && std::string(ci) == "true")
            FAIL() << "CI=true but LiteLLM's proxy is not installed (scripts/install-deps.sh puts it in .venv-litellm; "
                      "KEVO_LITELLM may name it)";
        GTEST_SKIP() << "LiteLLM's proxy is not installed: run scripts/install-deps.sh or set KEVO_LITELLM";
    }
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    LiteLlmProxy proxy(*litellm, write_config());
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
