// The external proposers against real transports: llm against an in-process fake
// OpenAI-compatible server (cpp-httplib on 127.0.0.1), cmd against real shell scripts, replay
// against a real directory.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/version.hpp"
#include "search/prompt.hpp"
#include "search/proposers/chat_reply.hpp"
#include "search/proposers/cmd.hpp"
#include "search/proposers/llm.hpp"
#include "search/proposers/replay.hpp"

#ifdef KEVO_HAVE_HTTPLIB
#include <httplib.h>
#endif

namespace kevo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
using Status = Proposal::Status;
using Failure = Proposal::Failure;

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

const char* kKernelAnswer =
    "Use a wider block in x for coalescing.\n"
    "```cuda\n"
    "// kevo: launch heat_step block=64,4\n"
    "extern \"C\" __global__ void heat_step(const float* u_in, float* u_out, unsigned nx, unsigned ny, float alpha) {\n"
    "    unsigned x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y * blockDim.y + threadIdx.y;\n"
    "    if (x < nx && y < ny) u_out[y * nx + x] = u_in[y * nx + x];\n"
    "}\n"
    "```\n";

struct Context {
    TaskSpec spec;
    ProposalContext context;
    Context() {
        spec.name = "heat2d";
        spec.regime = "R1 stencil";
        spec.model = "8 B per cell per step";
        spec.kernels = {{"heat_step",
                         {sig::const_ptr("u_in", ParamType::f32), sig::ptr("u_out", ParamType::f32),
                          sig::value("nx", ParamType::u32), sig::value("ny", ParamType::u32),
                          sig::value("alpha", ParamType::f32)},
                         2, Dim3{16, 16, 1}}};
        spec.profiles["small"] = {SizeSpec{"64x64x10", false, {}}, SizeSpec{"100x75x15", true, {}}};
        context.spec = &spec;
        context.language = language_named("cuda");
        context.profile = "small";
        context.brief = "heat2d brief";
        context.iteration = 1;
        context.device.name = "Test GPU";
        context.incumbent.source = "extern \"C\" __global__ void heat_step() {}\n";
        context.incumbent.result.verdict = Verdict::ok;
        context.incumbent.result.score = 0.25;
    }
};

// A scratch directory removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        std::string pattern = (fs::temp_directory_path() / "kevo-proposers-XXXXXX").string();
        const char* made = ::mkdtemp(pattern.data());
        EXPECT_NE(made, nullptr);
        path = pattern;
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path, ec);
    }
    fs::path write(const std::string& name, const std::string& text) const {
        std::ofstream(path / name, std::ios::binary) << text;
        return path / name;
    }
};

// A chat-completions stream: the kernel answer cut into chunks, the usage in a last chunk of its own.
std::string event_stream(const std::string& content, size_t chunk) {
    std::string out = ": a comment line\n\n";
    for (size_t i = 0; i < content.size(); i += chunk) {
        const nlohmann::json delta = {{"choices", {{{"index", 0}, {"delta", {{"content", content.substr(i, chunk)}}}}}}};
        out += "data: " + delta.dump() + "\n\n";
    }
    out += "data: " + nlohmann::json{{"choices", {{{"index", 0}, {"delta", nlohmann::json::object()}, {"finish_reason", "stop"}}}}}.dump() + "\n\n";
    out += "data: " + nlohmann::json{{"choices", nlohmann::json::array()}, {"usage", {{"prompt_tokens", 900}, {"completion_tokens", 250}}}}.dump() + "\r\n\r\n";
    return out + "data: [DONE]\n\n";
}

#ifdef KEVO_HAVE_HTTPLIB

// An OpenAI-compatible endpoint that answers POST /v1/chat/completions from a script of steps (the
// last step repeats) and records every request it received.
class FakeOpenAi {
public:
    struct Step {
        int status = 200;
        std::string body;
        std::vector<std::pair<std::string, std::string>> headers;
        double stall_s = 0;  // sleep before answering (released early when the server stops)
        std::string content_type = "application/json";
    };
    struct Request {
        std::string body, authorization, path, user_agent;
        bool has_authorization = false;
        Clock::time_point at;
    };

    explicit FakeOpenAi(std::vector<Step> script) : script_(script.begin(), script.end()) {
        // The server writes late answers to sockets the client already closed (the stall test).
        std::signal(SIGPIPE, SIG_IGN);
        server_.Post("/v1/chat/completions", [this](const httplib::Request& req, httplib::Response& res) {
            Step step;
            {
                std::lock_guard lock(mutex_);
                requests_.push_back({req.body, req.get_header_value("Authorization"), req.path,
                                     req.get_header_value("User-Agent"), req.has_header("Authorization"), Clock::now()});
                step = script_.front();
                if (script_.size() > 1) script_.pop_front();
            }
            if (step.stall_s > 0) {
                std::unique_lock lock(mutex_);
                stop_cv_.wait_for(lock, std::chrono::duration<double>(step.stall_s), [this] { return stopping_; });
            }
            res.status = step.status;
            for (const auto& [k, v] : step.headers) res.set_header(k, v);
            res.set_content(step.body, step.content_type);
        });
        port_ = server_.bind_to_any_port("127.0.0.1");
        if (port_ <= 0) throw std::runtime_error("the fake endpoint cannot bind a port on 127.0.0.1");
        thread_ = std::thread([this] { server_.listen_after_bind(); });
        // The socket already listens (connections queue in its backlog); this only avoids a stop()
        // racing the start of the accept loop.
        while (!server_.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    ~FakeOpenAi() {
        {
            std::lock_guard lock(mutex_);
            stopping_ = true;
        }
        stop_cv_.notify_all();
        server_.stop();
        thread_.join();
    }

    std::string base_url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/v1"; }
    std::vector<Request> requests() {
        std::lock_guard lock(mutex_);
        return requests_;
    }

private:
    httplib::Server server_;
    std::thread thread_;
    int port_ = 0;
    std::mutex mutex_;
    std::condition_variable stop_cv_;
    bool stopping_ = false;
    std::deque<Step> script_;
    std::vector<Request> requests_;
};

std::string completion(const std::string& content, int prompt_tokens = 1200, int completion_tokens = 300) {
    return nlohmann::json{{"id", "chatcmpl-1"},
                          {"object", "chat.completion"},
                          {"choices", {{{"index", 0},
                                        {"message", {{"role", "assistant"}, {"content", content}}},
                                        {"finish_reason", "stop"}}}},
                          {"usage", {{"prompt_tokens", prompt_tokens},
                                     {"completion_tokens", completion_tokens},
                                     {"total_tokens", prompt_tokens + completion_tokens}}}}
        .dump();
}

LlmOptions options_for(const FakeOpenAi& server) {
    LlmOptions o;
    o.base_url = server.base_url() + "/";  // a trailing slash must not double up
    o.model = "test-model";
    o.api_key = "test-key";
    o.temperature = 0.25;
    o.max_tokens = 1234;
    o.request_timeout_s = 5;
    o.max_retries = 2;
    o.backoff_initial_s = 0.01;
    o.price_prompt_per_mtok = 2.0;
    o.price_completion_per_mtok = 8.0;
    return o;
}

TEST(Proposers, LlmValidKernelCountsTokensAndCost) {
    FakeOpenAi server({{200, completion(kKernelAnswer), {}, 0}});
    Context c;
    auto proposer = make_llm_proposer(options_for(server));
    EXPECT_EQ(proposer->name(), "llm");
    const Proposal p = proposer->propose(c.context);
    ASSERT_EQ(p.status, Status::ok) << p.note;
    EXPECT_NE(p.source.find("block=64,4"), std::string::npos);
    EXPECT_EQ(p.source.find("```"), std::string::npos);
    EXPECT_EQ(p.answer, kKernelAnswer);
    EXPECT_EQ(p.prompt_tokens, 1200);
    EXPECT_EQ(p.completion_tokens, 300);
    EXPECT_NEAR(p.cost_usd, 1200 * 2.0 / 1e6 + 300 * 8.0 / 1e6, 1e-12);
    const std::string user = build_prompt(c.context);
    EXPECT_NE(p.prompt.find(user), std::string::npos);
    EXPECT_NE(p.prompt.find(llm_system_message(language_named("cuda"))), std::string::npos);

    // What the endpoint received.
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1u);
    EXPECT_EQ(requests[0].path, "/v1/chat/completions");
    EXPECT_EQ(requests[0].authorization, "Bearer test-key");
    const auto j = nlohmann::json::parse(requests[0].body);
    EXPECT_EQ(j.at("model"), "test-model");
    EXPECT_DOUBLE_EQ(j.at("temperature").get<double>(), 0.25);
    EXPECT_EQ(j.at("max_tokens"), 1234);
    ASSERT_EQ(j.at("messages").size(), 2u);
    EXPECT_EQ(j["messages"][0].at("role"), "system");
    EXPECT_EQ(j["messages"][0].at("content"), llm_system_message(language_named("cuda")));
    EXPECT_EQ(j["messages"][1].at("role"), "user");
    EXPECT_EQ(j["messages"][1].at("content"), user);
}

TEST(Proposers, LlmWithoutKeySendsNoAuthorization) {
    FakeOpenAi server({{200, completion(kKernelAnswer), {}, 0}});
    Context c;
    LlmOptions o = options_for(server);
    o.api_key.clear();
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    EXPECT_EQ(p.status, Status::ok) << p.note;
    ASSERT_EQ(server.requests().size(), 1u);
    EXPECT_FALSE(server.requests()[0].has_authorization);
}

TEST(Proposers, LlmProseIsNoCode) {
    FakeOpenAi server({{200, completion("I would tile the loop in shared memory."), {}, 0}});
    Context c;
    const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);
    EXPECT_EQ(p.status, Status::no_code);
    EXPECT_TRUE(p.source.empty());
    EXPECT_EQ(p.answer, "I would tile the loop in shared memory.");
    EXPECT_NE(p.note.find("no fenced code block"), std::string::npos) << p.note;
    EXPECT_EQ(p.prompt_tokens, 1200);  // the tokens were spent all the same
}

TEST(Proposers, LlmEditsApplyToThePreviousAttempt) {
    Context c;
    Attempt prev;
    prev.iteration = 1;
    prev.source = "extern \"C\" __global__ void heat_step() {\n    int a = 1;\n}\n";
    c.context.previous = prev;
    c.context.iteration = 2;
    FakeOpenAi server({{200, completion("<<<<<<< SEARCH\n    int a = 1;\n=======\n    int a = 2;\n>>>>>>> REPLACE\n"), {}, 0}});
    const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);
    ASSERT_EQ(p.status, Status::ok) << p.note;
    EXPECT_EQ(p.source, "extern \"C\" __global__ void heat_step() {\n    int a = 2;\n}\n");
}

TEST(Proposers, Llm429ThenOkHonoursRetryAfter) {
    FakeOpenAi server({{429, R"({"error":{"message":"rate limited"}})", {{"Retry-After", "1"}}, 0},
                       {200, completion(kKernelAnswer), {}, 0}});
    Context c;
    const auto start = Clock::now();
    const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);
    const double elapsed = seconds_since(start);
    ASSERT_EQ(p.status, Status::ok) << p.note;
    EXPECT_NE(p.note.find("HTTP 429"), std::string::npos) << p.note;
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 2u);
    // The backoff alone would be 10 ms; the server asked for 1 s.
    EXPECT_GE(std::chrono::duration<double>(requests[1].at - requests[0].at).count(), 0.95);
    EXPECT_LT(elapsed, 4.0);
}

TEST(Proposers, Llm500EveryTimeFailsAfterRetries) {
    FakeOpenAi server({{500, R"({"error":{"message":"upstream exploded"}})", {}, 0}});
    Context c;
    const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure, Failure::transient);
    EXPECT_EQ(server.requests().size(), 3u);  // 1 + max_retries
    EXPECT_NE(p.note.find("HTTP 500 x3"), std::string::npos) << p.note;
    EXPECT_NE(p.note.find("upstream exploded"), std::string::npos) << p.note;
    EXPECT_FALSE(p.prompt.empty());  // the transcript is kept even so
}

TEST(Proposers, LlmStalledResponseTimesOutRetriedThenFails) {
    FakeOpenAi server({{200, completion(kKernelAnswer), {}, 3.0}});
    Context c;
    LlmOptions o = options_for(server);
    o.request_timeout_s = 1;
    o.max_retries = 1;
    const auto start = Clock::now();
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    const double elapsed = seconds_since(start);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_NE(p.note.find("timeout x2"), std::string::npos) << p.note;
    EXPECT_EQ(server.requests().size(), 2u);
    EXPECT_GE(elapsed, 1.9);
    EXPECT_LT(elapsed, 3.5);
}

TEST(Proposers, Llm401FailsAtOnce) {
    FakeOpenAi server({{401, R"({"error":{"message":"Incorrect API key provided"}})", {}, 0},
                       {200, completion(kKernelAnswer), {}, 0}});
    Context c;
    const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure, Failure::permanent);
    EXPECT_EQ(server.requests().size(), 1u);
    EXPECT_NE(p.note.find("HTTP 401"), std::string::npos) << p.note;
    EXPECT_NE(p.note.find("Incorrect API key provided"), std::string::npos) << p.note;
}

TEST(Proposers, LlmUnreachableEndpointFailsAfterRetries) {
    std::string url;
    {
        FakeOpenAi gone({{200, "{}", {}, 0}});
        url = gone.base_url();
    }  // stopped: nothing listens on that port any more
    Context c;
    LlmOptions o;
    o.base_url = url;
    o.model = "m";
    o.request_timeout_s = 2;
    o.max_retries = 1;
    o.backoff_initial_s = 0.01;
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure, Failure::transient) << "a refused connection may be a server still starting";
    EXPECT_NE(p.note.find("connection error x2"), std::string::npos) << p.note;
}

TEST(Proposers, LlmFailuresRetryingCannotMendArePermanentAndNotRetried) {
    struct Case {
        int status;
        nlohmann::json error;
        ProposerFailure failure_class;
        Failure failure;
    };
    const std::vector<Case> cases = {
        {403, {{"message", "key not allowed to access model"}}, ProposerFailure::auth, Failure::permanent},
        {404, {{"message", "The model `gpt-9` does not exist"}, {"code", "model_not_found"}}, ProposerFailure::not_found,
         Failure::permanent},
        {400, {{"message", "'max_tokens' is not supported with this model."}, {"type", "invalid_request_error"},
               {"param", "max_tokens"}, {"code", "unsupported_parameter"}},
         ProposerFailure::bad_request_parameter, Failure::permanent},
        {400, {{"message", "No connected db."}, {"type", "no_db_connection"}, {"code", "400"}}, ProposerFailure::auth,
         Failure::permanent},
        {422, {{"message", "out of range"}, {"param", "temperature"}}, ProposerFailure::bad_request_parameter,
         Failure::permanent},
        {400, {{"message", "the prompt is too long for this request"}}, ProposerFailure::bad_request,
         Failure::transient},  // names no type or parameter: the next prompt may do better
        {400, {{"message", "This model's maximum context length is 8192 tokens"}, {"code", "context_length_exceeded"}},
         ProposerFailure::context_exceeded, Failure::transient},
    };
    for (const Case& k : cases) {
        SCOPED_TRACE(std::to_string(k.status) + " " + k.error.dump());
        FakeOpenAi server({{k.status, nlohmann::json{{"error", k.error}}.dump(), {}, 0},
                           {200, completion(kKernelAnswer), {}, 0}});
        Context c;
        const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);
        EXPECT_EQ(p.status, Status::failed);
        EXPECT_EQ(p.failure_class, k.failure_class) << proposer_failure_name(p.failure_class);
        EXPECT_EQ(p.failure, k.failure);
        EXPECT_TRUE(failed_because_of_proposer(p));
        EXPECT_EQ(p.http_status, k.status);
        EXPECT_EQ(server.requests().size(), 1u) << "a 4xx is not retried";
        EXPECT_NE(p.note.find(fmt::format("HTTP {}", k.status)), std::string::npos) << p.note;
        EXPECT_NE(p.note.find(k.error["message"].get<std::string>()), std::string::npos) << p.note;
    }
}

// A 200 without choices still used tokens: they are counted (and priced), and the proposal fails
// as a malformed reply; a multi-line server message becomes a one-line note, the whole kept as detail.
TEST(Proposers, LlmReplyWithoutChoicesKeepsItsUsage) {
    FakeOpenAi server({{200, R"({"id":"x","usage":{"prompt_tokens":10,"completion_tokens":20}})", {}, 0}});
    Context c;
    const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure_class, ProposerFailure::malformed_reply);
    EXPECT_EQ(p.prompt_tokens, 10);
    EXPECT_EQ(p.completion_tokens, 20);
    EXPECT_NEAR(p.cost_usd, (10 * 2.0 + 20 * 8.0) / 1e6, 1e-12);

    FakeOpenAi multi({{400, R"({"error":{"message":"line one\n\nline two\n  line three","type":"invalid_request_error"}})", {}, 0}});
    const Proposal q = make_llm_proposer(options_for(multi))->propose(c.context);
    EXPECT_EQ(q.note.find('\n'), std::string::npos) << q.note;
    EXPECT_NE(q.note.find("line one line two line three"), std::string::npos) << q.note;
    EXPECT_NE(q.detail.find("line one\n\nline two"), std::string::npos) << q.detail;
}

// An error event inside a 200 stream is retried like the same HTTP error (LiteLLM's shape).
TEST(Proposers, LlmStreamErrorEventIsRetriedLikeTheHttpError) {
    const std::string error_event =
        "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"abc\"}}]}\n\n"
        "data: {\"error\": {\"message\": \"litellm.InternalServerError: The model is repeating the same chunk = abc.\", "
        "\"type\": \"internal_server_error\", \"param\": null, \"code\": \"500\"}}\n\n";
    FakeOpenAi server({{200, error_event, {}, 0, "text/event-stream"},
                       {200, event_stream(kKernelAnswer, 40), {}, 0, "text/event-stream"}});
    Context c;
    LlmOptions o = options_for(server);
    o.stream = true;
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    EXPECT_EQ(server.requests().size(), 2u);
    EXPECT_EQ(p.status, Status::ok) << p.note;
    EXPECT_NE(p.note.find("after retries (HTTP 200 stream error, HTTP 200)"), std::string::npos) << p.note;

    FakeOpenAi always({{200, error_event, {}, 0, "text/event-stream"}});
    const Proposal q = make_llm_proposer(options_for(always))->propose(c.context);  // not streaming: refused
    EXPECT_EQ(q.failure_class, ProposerFailure::malformed_reply);
    o = options_for(always);
    o.stream = true;
    const Proposal r = make_llm_proposer(o)->propose(c.context);
    EXPECT_EQ(always.requests().size(), 1u + 3u);  // q once, r 1 + max_retries
    EXPECT_EQ(r.failure_class, ProposerFailure::server_error) << r.note;
}

// The run's deadline caps a request and its retries: a stalled server is left at the deadline.
TEST(Proposers, LlmDeadlineCutsTheRequestAndItsRetries) {
    FakeOpenAi server({{200, completion(kKernelAnswer), {}, 20.0}});
    Context c;
    LlmOptions o = options_for(server);
    o.request_timeout_s = 30;
    o.max_retries = 4;
    c.context.deadline = Clock::now() + std::chrono::milliseconds(1500);
    const auto start = Clock::now();
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    EXPECT_LT(seconds_since(start), 3.0);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure_class, ProposerFailure::deadline) << p.note;
    EXPECT_FALSE(failed_because_of_proposer(p));
    EXPECT_EQ(server.requests().size(), 1u);
}

// With --stream the request timeout is the silence between bytes: a slow but steady stream is read
// to its end although it takes longer than that.
TEST(Proposers, LlmStreamTimeoutIsTheSilenceBetweenBytes) {
    httplib::Server slow;
    slow.Post("/v1/chat/completions", [](const httplib::Request&, httplib::Response& res) {
        res.set_chunked_content_provider("text/event-stream", [](size_t, httplib::DataSink& sink) {
            const std::string all = event_stream(kKernelAnswer, 60);
            for (size_t i = 0; i < all.size(); i += all.size() / 6 + 1) {
                std::this_thread::sleep_for(std::chrono::milliseconds(400));
                const std::string part = all.substr(i, all.size() / 6 + 1);
                if (!sink.write(part.data(), part.size())) return false;
            }
            sink.done();
            return true;
        });
    });
    const int port = slow.bind_to_any_port("127.0.0.1");
    std::thread t([&] { slow.listen_after_bind(); });
    while (!slow.is_running()) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    Context c;
    LlmOptions o;
    o.base_url = "http://127.0.0.1:" + std::to_string(port) + "/v1";
    o.model = "m";
    o.stream = true;
    o.request_timeout_s = 1.5;  // each gap is 0.4 s; the whole stream about 2.8 s
    o.max_retries = 0;
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    EXPECT_EQ(p.status, Status::ok) << p.note;
    o.stream_timeout_s = 1.0;  // the whole stream's own bound
    const Proposal q = make_llm_proposer(o)->propose(c.context);
    EXPECT_EQ(q.failure_class, ProposerFailure::timeout) << q.note;
    slow.stop();
    t.join();
}

TEST(Proposers, LlmUnresolvableHostIsPermanentAndNotRetried) {
    Context c;
    LlmOptions o;
    o.base_url = "http://kevo-no-such-host.invalid/v1";  // .invalid never resolves (RFC 2606)
    o.model = "m";
    o.max_retries = 3;
    o.backoff_initial_s = 2;  // a retry would show in the time taken
    const auto start = Clock::now();
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    EXPECT_LT(seconds_since(start), 1.9);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure, Failure::permanent);
    EXPECT_NE(p.note.find("unresolvable host"), std::string::npos) << p.note;
    EXPECT_EQ(p.note.find(" x2"), std::string::npos) << p.note;
}

TEST(Proposers, LlmSpeaksOnlyHttp) {
    Context c;
    LlmOptions o;
    o.base_url = "ftp://127.0.0.1:1/v1";
    o.model = "m";
    o.max_retries = 3;
    o.backoff_initial_s = 2;
    const auto start = Clock::now();
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    EXPECT_LT(seconds_since(start), 1.9);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure, Failure::permanent);
    EXPECT_NE(p.note.find("unusable URL"), std::string::npos) << p.note;
}

TEST(Proposers, LlmLeavesOutWhatIsUnsetAndSendsItsUserAgent) {
    FakeOpenAi server({{200, completion(kKernelAnswer), {}, 0}});
    Context c;
    LlmOptions o = options_for(server);
    o.temperature.reset();
    o.max_tokens.reset();
    o.max_completion_tokens = 5000;
    const Proposal p = make_llm_proposer(o)->propose(c.context);
    ASSERT_EQ(p.status, Status::ok) << p.note;
    const auto requests = server.requests();
    ASSERT_EQ(requests.size(), 1u);
    const auto j = nlohmann::json::parse(requests[0].body);
    EXPECT_FALSE(j.contains("temperature")) << j.dump();
    EXPECT_FALSE(j.contains("max_tokens")) << j.dump();
    EXPECT_FALSE(j.contains("stream")) << j.dump();
    EXPECT_EQ(j.at("max_completion_tokens"), 5000);
    EXPECT_EQ(requests[0].user_agent, std::string("kevo/") + kVersion);
    EXPECT_FALSE(std::string(kVersion).empty());
}

TEST(Proposers, LlmTakesTheServersCostUnlessPricesAreGiven) {
    const std::vector<std::pair<std::string, std::string>> cost = {{kServerCostHeader, "0.0123"}};
    Context c;
    {
        FakeOpenAi server({{200, completion(kKernelAnswer), cost, 0}});
        LlmOptions o = options_for(server);
        o.price_prompt_per_mtok = o.price_completion_per_mtok = 0;
        const Proposal p = make_llm_proposer(o)->propose(c.context);
        ASSERT_EQ(p.status, Status::ok) << p.note;
        EXPECT_DOUBLE_EQ(p.cost_usd, 0.0123);
    }
    {
        FakeOpenAi server({{200, completion(kKernelAnswer), cost, 0}});
        const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);  // $2 / $8 per million
        ASSERT_EQ(p.status, Status::ok) << p.note;
        EXPECT_NEAR(p.cost_usd, 1200 * 2.0 / 1e6 + 300 * 8.0 / 1e6, 1e-12);
    }
    {
        FakeOpenAi server({{200, completion(kKernelAnswer), {}, 0}});
        LlmOptions o = options_for(server);
        o.price_prompt_per_mtok = o.price_completion_per_mtok = 0;
        const Proposal p = make_llm_proposer(o)->propose(c.context);
        ASSERT_EQ(p.status, Status::ok) << p.note;
        EXPECT_EQ(p.cost_usd, 0.0) << "no price and no reported cost: nothing is counted";
        o.cost_from_server = true;
        const Proposal q = make_llm_proposer(o)->propose(c.context);
        EXPECT_EQ(q.status, Status::failed);
        EXPECT_EQ(q.failure, Failure::fatal);
        EXPECT_NE(q.note.find(kServerCostHeader), std::string::npos) << q.note;
        EXPECT_EQ(q.prompt_tokens, 1200) << "the tokens spent are still recorded";
    }
}

TEST(Proposers, LlmStreamsWhenAskedAndSaysSoWhenNot) {
    const std::string stream = event_stream(kKernelAnswer, 7);
    Context c;
    {
        FakeOpenAi server({{200, stream, {}, 0, "text/event-stream"}});
        LlmOptions o = options_for(server);
        o.stream = true;
        const Proposal p = make_llm_proposer(o)->propose(c.context);
        ASSERT_EQ(p.status, Status::ok) << p.note;
        EXPECT_EQ(p.answer, kKernelAnswer);
        EXPECT_NE(p.source.find("block=64,4"), std::string::npos);
        EXPECT_EQ(p.prompt_tokens, 900);
        EXPECT_EQ(p.completion_tokens, 250);
        const auto j = nlohmann::json::parse(server.requests().at(0).body);
        EXPECT_EQ(j.at("stream"), true);
        EXPECT_EQ(j.at("stream_options").at("include_usage"), true);
    }
    {
        FakeOpenAi server({{200, stream, {}, 0, "text/event-stream; charset=utf-8"}});
        const Proposal p = make_llm_proposer(options_for(server))->propose(c.context);
        EXPECT_EQ(p.status, Status::failed);
        EXPECT_EQ(p.failure, Failure::permanent);
        EXPECT_NE(p.note.find("the server answered with a stream"), std::string::npos) << p.note;
        EXPECT_NE(p.note.find("pass --stream"), std::string::npos) << p.note;
    }
    {
        // A server that ignores stream: true and answers with one document is read all the same.
        FakeOpenAi server({{200, completion(kKernelAnswer), {}, 0}});
        LlmOptions o = options_for(server);
        o.stream = true;
        const Proposal p = make_llm_proposer(o)->propose(c.context);
        EXPECT_EQ(p.status, Status::ok) << p.note;
    }
}

#else

TEST(Proposers, LlmAgainstFakeEndpoint) { GTEST_SKIP() << "cpp-httplib not found at configure time"; }

#endif  // KEVO_HAVE_HTTPLIB

TEST(Proposers, CmdFencedKernelAnswerIsOk) {
    TempDir dir;
    const auto answer = dir.write("answer.md", kKernelAnswer);
    Context c;
    auto proposer = make_cmd_proposer({"cat >/dev/null; cat '" + answer.string() + "'", 10});
    EXPECT_EQ(proposer->name(), "cmd");
    const Proposal p = proposer->propose(c.context);
    ASSERT_EQ(p.status, Status::ok) << p.note;
    EXPECT_NE(p.source.find("block=64,4"), std::string::npos);
    EXPECT_EQ(p.answer, kKernelAnswer);
    EXPECT_EQ(p.prompt, build_prompt(c.context));
}

TEST(Proposers, CmdReceivesThePromptOnStdin) {
    TempDir dir;
    // Reads one line and exits without draining stdin: kevo's write then fails with EPIPE, which
    // must neither kill the test nor fail the proposal.
    const auto script = dir.write("first_line.sh", "#!/bin/sh\nhead -n 1\necho \"$KEVO_TASK $KEVO_ITERATION $KEVO_LANGUAGE\"\n");
    Context c;
    c.context.brief = std::string(1 << 20, 'b');  // far more than a pipe holds
    c.context.iteration = 7;
    const std::string prompt = build_prompt(c.context);
    const Proposal p = make_cmd_proposer({"sh '" + script.string() + "'", 10})->propose(c.context);
    EXPECT_EQ(p.status, Status::no_code) << p.note;
    EXPECT_EQ(p.answer, prompt.substr(0, prompt.find('\n') + 1) + "heat2d 7 cu\n");
}

TEST(Proposers, CmdLargePromptEchoedDoesNotDeadlock) {
    Context c;
    c.context.brief = std::string(1 << 20, 'x');  // both pipes fill up: writes and reads must interleave
    const auto start = Clock::now();
    const Proposal p = make_cmd_proposer({"cat", 20})->propose(c.context);
    EXPECT_LT(seconds_since(start), 10.0);
    EXPECT_NE(p.status, Status::failed) << p.note;
    EXPECT_EQ(p.answer, p.prompt);
    EXPECT_EQ(p.status, Status::ok) << p.note;  // the echoed prompt holds the incumbent's kernel block
}

bool process_gone(int pid) {
    // A killed process may linger as a zombie until something reaps it; that counts as gone.
    std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
    if (!stat) return true;
    std::string line;
    std::getline(stat, line);
    const size_t paren = line.rfind(')');
    return paren != std::string::npos && paren + 2 < line.size() && line[paren + 2] == 'Z';
}

TEST(Proposers, CmdTimeoutKillsTheProcessGroup) {
    TempDir dir;
    const auto pid_file = dir.path / "background.pid";
    const auto script = dir.write("slow.sh", "#!/bin/sh\nsleep 30 &\necho $! > '" + pid_file.string() +
                                                 "'\necho partial\nsleep 30\n");
    Context c;
    const auto start = Clock::now();
    const Proposal p = make_cmd_proposer({"sh '" + script.string() + "'", 1})->propose(c.context);
    const double elapsed = seconds_since(start);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_NE(p.note.find("timed out after 1 s"), std::string::npos) << p.note;
    EXPECT_GE(elapsed, 0.9);
    EXPECT_LT(elapsed, 3.0);
    std::ifstream in(pid_file);
    int background = 0;
    ASSERT_TRUE(in >> background);
    for (int i = 0; i < 50 && !process_gone(background); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    EXPECT_TRUE(process_gone(background)) << "the background sleep outlived the timeout";
}

TEST(Proposers, CmdNonZeroExitFails) {
    Context c;
    const Proposal p = make_cmd_proposer({"cat >/dev/null; echo 'model quota exceeded' >&2; exit 3", 10})->propose(c.context);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure, Failure::transient) << "a command that ran and failed may succeed next time";
    EXPECT_NE(p.note.find("status 3"), std::string::npos) << p.note;
    EXPECT_NE(p.note.find("model quota exceeded"), std::string::npos) << p.note;
}

TEST(Proposers, CmdThatTheShellCannotFindFailsPermanently) {
    Context c;
    const Proposal p = make_cmd_proposer({"kevo-no-such-proposer-program --flag", 10})->propose(c.context);
    EXPECT_EQ(p.status, Status::failed);
    EXPECT_EQ(p.failure, Failure::permanent);
    EXPECT_NE(p.note.find("status 127"), std::string::npos) << p.note;
    EXPECT_NE(p.note.find("not found"), std::string::npos) << p.note;
    TempDir dir;
    const auto script = dir.write("not_executable.sh", "#!/bin/sh\necho hi\n");  // mode 0644
    const Proposal q = make_cmd_proposer({"'" + script.string() + "'", 10})->propose(c.context);
    EXPECT_EQ(q.failure, Failure::permanent) << q.note;
    EXPECT_NE(q.note.find("status 126"), std::string::npos) << q.note;
}

TEST(ChatReply, StreamEventsAssembleAndErrorsAreNamed) {
    const ChatReply whole = parse_chat_stream(event_stream("abcdefghij", 3));
    ASSERT_TRUE(whole.ok) << whole.error;
    EXPECT_EQ(whole.content, "abcdefghij");
    EXPECT_EQ(whole.finish_reason, "stop");
    EXPECT_FALSE(whole.unfinished);
    EXPECT_EQ(whole.prompt_tokens, 900);

    const ChatReply cut = parse_chat_stream("data: {\"choices\":[{\"delta\":{\"content\":\"abc\"}}]}\n\n");
    ASSERT_TRUE(cut.ok);
    EXPECT_EQ(cut.content, "abc");
    EXPECT_TRUE(cut.unfinished);

    const ChatReply error = parse_chat_stream("data: {\"error\":{\"message\":\"overloaded\"}}\n\n");
    EXPECT_FALSE(error.ok);
    EXPECT_NE(error.error.find("overloaded"), std::string::npos) << error.error;
    EXPECT_FALSE(parse_chat_stream("{\"choices\":[]}").ok) << "a document is not a stream";
    EXPECT_FALSE(parse_chat_stream("data: not json\n\n").ok);
}

TEST(Proposers, ReplayFilesInNameOrderThenExhausted) {
    TempDir dir;
    const std::string first = "extern \"C\" __global__ void heat_step() { /* first */ }\n";
    dir.write("01_first.cu", first);
    dir.write("02_second.md", kKernelAnswer);
    dir.write("03_other_language.cl", "__kernel void heat_step() {}\n");  // skipped on a CUDA run
    dir.write(".hidden", "ignored");
    fs::create_directory(dir.path / "subdir");
    auto made = make_replay_proposer(dir.path.string());
    ASSERT_TRUE(made) << made.error().message;
    auto& proposer = *made;
    EXPECT_EQ(proposer->name(), "replay");
    Context c;

    c.context.iteration = 1;
    const Proposal a = proposer->propose(c.context);
    ASSERT_EQ(a.status, Status::ok) << a.note;
    EXPECT_EQ(a.source, first);
    EXPECT_NE(a.note.find("01_first.cu"), std::string::npos);

    c.context.iteration = 2;
    const Proposal b = proposer->propose(c.context);
    ASSERT_EQ(b.status, Status::ok) << b.note;
    EXPECT_NE(b.source.find("block=64,4"), std::string::npos);
    EXPECT_EQ(b.source.find("```"), std::string::npos);

    c.context.iteration = 3;
    const Proposal end = proposer->propose(c.context);
    EXPECT_EQ(end.status, Status::exhausted);
}

TEST(Proposers, ReplayResumesAtTheIteration) {
    TempDir dir;
    dir.write("a.cu", "__global__ void a() {}\n");
    dir.write("b.cu", "__global__ void b() {}\n");
    auto made = make_replay_proposer(dir.path.string());
    ASSERT_TRUE(made);
    Context c;
    c.context.iteration = 2;  // a resumed run: iteration 1 was replayed before
    const Proposal p = (*made)->propose(c.context);
    ASSERT_EQ(p.status, Status::ok);
    EXPECT_EQ(p.source, "__global__ void b() {}\n");
}

TEST(Proposers, ReplayMissingDirectoryIsAnError) {
    const std::string missing = (fs::temp_directory_path() / "kevo-no-such-replay-dir").string();
    auto made = make_replay_proposer(missing);
    ASSERT_FALSE(made);
    EXPECT_NE(made.error().message.find(missing), std::string::npos) << made.error().message;
}

}  // namespace
}  // namespace kevo
