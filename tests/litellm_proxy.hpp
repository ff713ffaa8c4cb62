// Test helper: LiteLLM's proxy (the real OpenAI-compatible server, from PyPI: scripts/install-deps.sh
// puts it in .venv-litellm, KEVO_LITELLM may name another) started on 127.0.0.1 as a child process in
// its own process group, with a configuration file of models that answer from `mock_response`;
// the whole group is killed when the object goes, whether the test passed or not.
#pragma once

#include <arpa/inet.h>
#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <map>
#include <mutex>
#include <csignal>
#include <cstdlib>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kevo_process.hpp"
#include "setup_installed.hpp"
#include "task/registry.hpp"

extern char** environ;

namespace kevo::test {

inline constexpr const char* kMasterKey = "sk-kevo-test-5d1f0c8a9b7e4f3a2c6d8e0f1a2b3c4d";

// KEVO_LITELLM, else the virtual environment scripts/install-deps.sh makes.
inline std::optional<std::string> find_litellm() {
    if (const char* named = std::getenv("KEVO_LITELLM"); named && *named) return std::string(named);
    const std::string venv = std::string(KEVO_SOURCE_DIR) + "/.venv-litellm/bin/litellm";
    if (::access(venv.c_str(), X_OK) == 0) return venv;
    return std::nullopt;
}

inline int free_port() {
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

// Skips the calling test where LiteLLM is not installed, except in CI (CI=true), where it fails.
#define KEVO_REQUIRE_LITELLM(litellm)                                                                           \
    const auto litellm = ::kevo::test::find_litellm();                                                          \
    if (!litellm)                                                                                               \
        KEVO_SKIP_UNLESS_CI("LiteLLM's proxy is not installed (scripts/install-deps.sh puts it in .venv-litellm; " \
                            "KEVO_LITELLM may name it)")

// An answer as a model writes one: a sentence, then the code in a fenced block.
inline std::string fenced(const std::string& code) { return "Here is my kernel.\n\n```opencl\n" + code + "\n```\n"; }

// heat2d's OpenCL seed with another work-group shape ("32,4"): a correct kernel of other speed.
inline std::string heat2d_variant(const std::string& block) {
    std::string source(task_file("heat2d", "seed.cl"));
    source.replace(source.find("// kevo: launch heat_step block=BX,BY"), 37, "// kevo: launch heat_step block=" + block);
    return source;
}

// Writes the proxy's configuration (JSON is YAML) to `path`: each model (name, answer) answers with
// its fixed text, priced as gpt-4o-mini from LiteLLM's own price list; the key is kMasterKey.
// `params` adds litellm_params to the models it names (mock_delay, another model).
inline std::string write_proxy_config(const std::string& path,
                                      const std::vector<std::pair<std::string, std::string>>& models,
                                      const std::map<std::string, nlohmann::json>& params = {}) {
    nlohmann::json list = nlohmann::json::array();
    for (const auto& [name, answer] : models) {
        nlohmann::json p = {{"model", "openai/gpt-4o-mini"}, {"api_key", "sk-unused"}, {"mock_response", answer}};
        if (const auto it = params.find(name); it != params.end()) p.update(it->second);
        list.push_back({{"model_name", name}, {"litellm_params", p}});
    }
    const nlohmann::json config = {{"model_list", list}, {"general_settings", {{"master_key", kMasterKey}}}};
    std::ofstream(path) << config.dump(2);
    return path;
}

// The proxy as a child process in its own process group, killed (the whole group) when this ends,
// whether the test passed or not.
class LiteLlmProxy {
    using Clock = std::chrono::steady_clock;

public:
    LiteLlmProxy(const std::string& litellm, const std::string& config, std::string log)
        : port_(free_port()), log_(std::move(log)) {
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
    // The proxy gone at once, as in a crash (SIGKILL to its group): requests in flight are cut.
    void kill_now() {
        if (pid_ <= 0) return;
        ::kill(-pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
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
    int port() const { return port_; }
    std::string log_tail() const {
        const std::string log = slurp(log_);
        return log.substr(log.size() > 3000 ? log.size() - 3000 : 0);
    }

private:
    int port_;
    std::string log_;
    pid_t pid_ = -1;
};

// A relay between kevo and the proxy on 127.0.0.1 that keeps every request body it forwards (the
// bodies the proxy received), the usage of every reply it passed on, and the x-litellm-* headers of
// the reply. Under /nochoices/ it deletes `choices` from the proxy's reply (a 200 without choices,
// usage kept) and remembers that usage; under /slowafter1/ every request after the first asks for
// the model `kevo-slow` (a reply, then a request that hangs: where a signal lands in a real run);
// under /ctx/ GET /models reports a context size (report_context), as vLLM's server does.
class RecordingRelay {
public:
    enum class Route { plain, strip_choices, slow_after_first };

    RecordingRelay(int upstream_port, double upstream_timeout_s) {
        const auto forward = [this, upstream_port, upstream_timeout_s](const httplib::Request& req, httplib::Response& res,
                                                                        Route route) {
            std::string request = req.body;
            {
                std::lock_guard lock(mutex_);
                if (route == Route::slow_after_first && slow_seen_++ > 0) {
                    auto j = nlohmann::json::parse(request, nullptr, false);
                    if (j.is_object()) j["model"] = "kevo-slow", request = j.dump();
                }
                bodies_.push_back(request);
            }
            httplib::Client client("127.0.0.1", upstream_port);
            client.set_read_timeout(std::chrono::milliseconds(static_cast<long>(upstream_timeout_s * 1000)));
            httplib::Headers headers;
            for (const char* name : {"Authorization", "Accept"})
                if (req.has_header(name)) headers.emplace(name, req.get_header_value(name));
            auto up = client.Post("/v1/chat/completions", headers, request, "application/json");
            if (!up) {
                res.status = 502;
                return;
            }
            std::string body = up->body;
            auto j = nlohmann::json::parse(body, nullptr, false);
            if (j.is_object() && j.contains("usage")) {
                std::lock_guard lock(mutex_);
                usages_.push_back(j["usage"]);
            }
            if (route == Route::strip_choices && j.is_object()) {
                j.erase("choices");
                std::lock_guard lock(mutex_);
                stripped_usage_ = j.value("usage", nlohmann::json());
                body = j.dump();
            }
            res.status = up->status;
            for (const auto& [k, v] : up->headers)
                if (k.rfind("x-litellm-", 0) == 0) res.set_header(k, v);
            res.set_content(body, up->get_header_value("Content-Type"));
        };
        // Under /ctx/ the relay answers GET /models itself, as vLLM does (LiteLLM's /models says no size).
        server_.Get("/ctx/v1/models", [this](const httplib::Request&, httplib::Response& r) {
            std::lock_guard lock(mutex_);
            r.set_content(models_.dump(), "application/json");
        });
        for (const auto& [prefix, route] : {std::pair{"", Route::plain}, std::pair{"/nochoices", Route::strip_choices},
                                            std::pair{"/slowafter1", Route::slow_after_first}, std::pair{"/ctx", Route::plain}})
            server_.Post(std::string(prefix) + "/v1/chat/completions",
                         [forward, route](const httplib::Request& q, httplib::Response& r) { forward(q, r, route); });
        port_ = server_.bind_to_any_port("127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~RecordingRelay() {
        server_.stop();
        thread_.join();
    }
    std::string base_url(const std::string& prefix = "") const {
        return "http://127.0.0.1:" + std::to_string(port_) + prefix + "/v1";
    }
    std::vector<std::string> bodies() {
        std::lock_guard lock(mutex_);
        return bodies_;
    }
    nlohmann::json stripped_usage() {
        std::lock_guard lock(mutex_);
        return stripped_usage_;
    }
    // What GET /ctx/v1/models answers: {"data": [{"id": model, "max_model_len": tokens}]}.
    void report_context(const std::string& model, int tokens) {
        std::lock_guard lock(mutex_);
        models_ = {{"object", "list"}, {"data", {{{"id", model}, {"object", "model"}, {"max_model_len", tokens}}}}};
    }
    // The usage of every whole (not streamed) reply passed on, in order.
    std::vector<nlohmann::json> usages() {
        std::lock_guard lock(mutex_);
        return usages_;
    }

private:
    httplib::Server server_;
    std::thread thread_;
    int port_ = 0;
    std::mutex mutex_;
    std::vector<std::string> bodies_;
    std::vector<nlohmann::json> usages_;
    nlohmann::json stripped_usage_, models_ = {{"object", "list"}, {"data", nlohmann::json::array()}};
    int slow_seen_ = 0;
};

}  // namespace kevo::test
