// The `llm` proposer: builds the prompt, POSTs it to {base_url}/chat/completions, retries what is
// worth retrying, tells failures that can never succeed from those that may, accounts tokens and
// cost, and parses the reply (a JSON document or a stream of server-sent events) into a candidate.
#include "search/proposers/llm.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/interrupt.hpp"
#include "core/version.hpp"
#include "search/prompt.hpp"
#include "search/proposers/chat_reply.hpp"
#include "search/proposers/common.hpp"
#include "search/proposers/failure_class.hpp"
#include "search/proposers/http_client.hpp"
#include "search/proposers/registry.hpp"

namespace kevo {
namespace {

using json = nlohmann::json;
using Failure = Proposal::Failure;

std::string endpoint(std::string base) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/chat/completions";
}

std::string lower(std::string s) {
    std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
    return s;
}

// A header's value as a non-negative number (Retry-After seconds, the server's cost); an HTTP
// date or anything else is ignored.
std::optional<double> number_header(const HttpResult& r, const char* name) {
    const auto it = r.headers.find(name);
    if (it == r.headers.end()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || !std::isfinite(v) || v < 0) return std::nullopt;
    return v;
}

bool is_event_stream(const HttpResult& r) {
    const auto it = r.headers.find("content-type");
    return it != r.headers.end() && lower(it->second).rfind("text/event-stream", 0) == 0;
}

std::string outcome_name(const HttpResult& r) {
    switch (r.transport) {
        case HttpResult::Transport::ok: return fmt::format("HTTP {}", r.status);
        case HttpResult::Transport::timeout: return "timeout";
        case HttpResult::Transport::connection_error: return "connection error";
        case HttpResult::Transport::unresolved: return "unresolvable host";
        case HttpResult::Transport::bad_url: return "unusable URL";
        case HttpResult::Transport::tls_error: return "TLS error";
        case HttpResult::Transport::interrupted: return "interrupted";
        case HttpResult::Transport::deadline: return "deadline";
        case HttpResult::Transport::other_error: return "transport error";
    }
    return "?";
}

// The class of an attempt that got no usable reply, and whether another attempt may mend it.
struct Judgement {
    ProposerFailure failure = ProposerFailure::unreachable;
    Failure severity = Failure::transient;
    bool retry = false;
};

Judgement judge_transport(HttpResult::Transport t) {
    using T = HttpResult::Transport;
    switch (t) {
        case T::timeout: return {ProposerFailure::timeout, Failure::transient, true};
        case T::connection_error: return {ProposerFailure::unreachable, Failure::transient, true};
        case T::unresolved:
        case T::bad_url:
        case T::tls_error: return {ProposerFailure::unreachable, Failure::permanent, false};
        case T::interrupted: return {ProposerFailure::interrupted, Failure::transient, false};
        case T::deadline: return {ProposerFailure::deadline, Failure::transient, false};
        case T::ok:
        case T::other_error: break;
    }
    return {ProposerFailure::unreachable, Failure::transient, false};
}

Judgement judge_reply(long status, const ServerError& error) {
    const ProposerFailure f = classify_reply(status, error);
    return {f, severity(f), worth_retrying(f)};
}

// "HTTP 429 x2, HTTP 200": runs of equal outcomes folded.
std::string summarise(const std::vector<std::string>& outcomes) {
    std::string out;
    for (size_t i = 0; i < outcomes.size();) {
        size_t j = i;
        while (j < outcomes.size() && outcomes[j] == outcomes[i]) ++j;
        if (!out.empty()) out += ", ";
        out += outcomes[i];
        if (j - i > 1) out += fmt::format(" x{}", j - i);
        i = j;
    }
    return out;
}

// Sleeps `seconds`, waking early for a signal or the deadline; false when one of them came.
bool pause_for(double seconds, const std::optional<std::chrono::steady_clock::time_point>& deadline) {
    using Clock = std::chrono::steady_clock;
    const auto until = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(seconds));
    while (Clock::now() < until) {
        if (interrupt_requested() || (deadline && Clock::now() >= *deadline)) return false;
        std::this_thread::sleep_for(std::min<Clock::duration>(until - Clock::now(), std::chrono::milliseconds(50)));
    }
    return !interrupt_requested();
}

void add_note(Proposal& p, const std::string& text) { p.note += (p.note.empty() ? "" : "; ") + text; }

// A failed proposal: `note` one clean line, `detail` the full text (defaults to the note).
Proposal failed(Proposal p, const Judgement& j, const std::string& note, std::string detail = {}) {
    p.status = Proposal::Status::failed;
    p.failure = j.severity;
    p.failure_class = j.failure;
    p.note = one_line(note, 400);
    p.detail = detail.empty() ? note : std::move(detail);
    return p;
}

class LlmProposer final : public Proposer {
public:
    explicit LlmProposer(LlmOptions options) : options_(std::move(options)), url_(endpoint(options_.base_url)) {}

    std::string name() const override { return "llm"; }

    Proposal propose(const ProposalContext& context) override {
        Proposal proposal;
        const std::string system = llm_system_message(context.language);
        BuiltPrompt built = compose_prompt(context, prompt_limits(context, system));
        const std::string& user = built.text;
        proposal.knowledge = std::move(built.notes);
        proposal.prompt = "[system]\n" + system + "\n\n[user]\n" + user;
        const std::string body = request_body(system, user);
        const std::vector<std::string> headers = request_headers();
        RequestLimits limits;
        limits.timeout_s = options_.request_timeout_s;
        limits.idle = options_.stream;
        limits.total_s = options_.stream_timeout_s;
        limits.deadline = context.deadline;

        std::vector<std::string> outcomes;
        const int attempts = 1 + std::max(0, options_.max_retries);
        double backoff = options_.backoff_initial_s;
        for (int attempt = 1; attempt <= attempts; ++attempt) {
            const HttpResult r = client_.post(url_, body, headers, limits);
            outcomes.push_back(outcome_name(r));
            Judgement judgement;
            std::string what, message;
            if (r.transport == HttpResult::Transport::ok && r.status >= 200 && r.status < 300) {
                auto read = accept(proposal, r, outcomes, context);
                if (!read) return proposal;         // a candidate, no code, or a failure that ends it
                judgement = judge_reply(0, *read);  // an error event inside the stream
                what = fmt::format("HTTP {} stream error", r.status);
                message = read->message;
                outcomes.back() = what;
            } else if (r.transport == HttpResult::Transport::ok) {
                const ServerError error = read_server_error(r.body);
                judgement = judge_reply(r.status, error);
                proposal.http_status = static_cast<int>(r.status);
                what = outcome_name(r);
                message = error.message + missing_key_hint(judgement, r);
            } else {
                judgement = judge_transport(r.transport);
                what = outcome_name(r);
                message = r.error;
            }
            const std::string history = outcomes.size() > 1 ? fmt::format(" (attempts: {})", summarise(outcomes)) : "";
            const std::string note = fmt::format("{} [{}] from {}: {}", what, proposer_failure_name(judgement.failure),
                                                 url_, one_line(message)) + history;
            const std::string detail = fmt::format("{} [{}] from {}:\n{}", what, proposer_failure_name(judgement.failure),
                                                   url_, message) + history;
            if (!judgement.retry) return failed(std::move(proposal), judgement, note, detail);
            if (attempt == attempts)
                return failed(std::move(proposal), judgement,
                              fmt::format("gave up after {} attempt{}: {} [{}] (last: {})", attempts,
                                          attempts == 1 ? "" : "s", summarise(outcomes),
                                          proposer_failure_name(judgement.failure), one_line(message)),
                              detail);
            double wait = std::min(backoff, options_.backoff_max_s);
            if (const auto after = number_header(r, "retry-after")) wait = std::min(*after, options_.backoff_max_s);
            backoff *= 2;
            if (!pause_for(wait, context.deadline)) {
                const bool signal = interrupt_requested();
                const Judgement stop{signal ? ProposerFailure::interrupted : ProposerFailure::deadline, Failure::transient,
                                     false};
                return failed(std::move(proposal), stop,
                              fmt::format("{} while waiting to retry after {}", signal ? std::string("interrupted by ") +
                                          interrupt_signal_name() : std::string("the run's deadline came"), note),
                              detail);
            }
        }
        return proposal;  // unreachable: the loop always returns
    }

private:
    std::string request_body(const std::string& system, const std::string& user) const {
        json request = {
            {"model", options_.model},
            {"messages", json::array({{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}})},
        };
        if (options_.temperature) request["temperature"] = *options_.temperature;
        if (options_.max_tokens) request["max_tokens"] = *options_.max_tokens;
        if (options_.max_completion_tokens) request["max_completion_tokens"] = *options_.max_completion_tokens;
        if (options_.stream) {
            request["stream"] = true;
            request["stream_options"] = {{"include_usage", true}};  // the token counts in the last chunk
        }
        return request.dump(-1, ' ', false, json::error_handler_t::replace);
    }

    std::vector<std::string> request_headers() const {
        std::vector<std::string> headers = {"Content-Type: application/json",
                                            options_.stream ? "Accept: text/event-stream" : "Accept: application/json",
                                            std::string("User-Agent: kevo/") + kVersion};
        if (!options_.api_key.empty()) headers.push_back("Authorization: Bearer " + options_.api_key);
        return headers;
    }

    // Priced tokens when a price is given, else the server's own figure when it reports one.
    std::optional<double> cost(int prompt_tokens, int completion_tokens, const HttpResult& r) const {
        if (options_.price_prompt_per_mtok > 0 || options_.price_completion_per_mtok > 0)
            return prompt_tokens * options_.price_prompt_per_mtok / 1e6 +
                   completion_tokens * options_.price_completion_per_mtok / 1e6;
        return number_header(r, kServerCostHeader);
    }

    // Why a missing key may be the cause, where the server's answer suggests it (LiteLLM answers a
    // request without a key with a plain-text 500).
    std::string missing_key_hint(const Judgement& j, const HttpResult& r) const {
        if (!options_.api_key.empty()) return {};
        const bool plain = json::parse(r.body, nullptr, false).is_discarded();
        if (j.failure == ProposerFailure::auth || (j.failure == ProposerFailure::server_error && plain))
            return " (no API key was sent: KEVO_API_KEY and OPENAI_API_KEY are unset)";
        return {};
    }

    // Reads a 2xx reply into `proposal`, its tokens and cost counted whatever else it holds. Returns
    // the error event of a stream that carried one (to be retried like the same HTTP error); nullopt
    // when `proposal` is final (a candidate, no code, or a failure).
    std::optional<ServerError> accept(Proposal& proposal, const HttpResult& r, const std::vector<std::string>& outcomes,
                                      const ProposalContext& context) {
        proposal.answer = r.body;
        proposal.http_status = static_cast<int>(r.status);
        const bool streamed = is_event_stream(r);
        if (streamed && !options_.stream) {
            const std::string note = fmt::format("HTTP {} from {}: the server answered with a stream "
                                                 "(text/event-stream); pass --stream", r.status, url_);
            proposal = failed(std::move(proposal), {ProposerFailure::malformed_reply, Failure::permanent, false}, note);
            return std::nullopt;
        }
        const ChatReply reply = streamed ? parse_chat_stream(r.body) : parse_chat_completion(r.body);
        proposal.prompt_tokens += reply.prompt_tokens;
        proposal.completion_tokens += reply.completion_tokens;
        const auto spent = cost(reply.prompt_tokens, reply.completion_tokens, r);
        proposal.cost_usd += spent.value_or(0.0);
        if (!spent && options_.cost_from_server) {
            proposal = failed(std::move(proposal), {ProposerFailure::cost_unknown, Failure::fatal, false},
                              fmt::format("HTTP {} from {} without the {} header, and --cost-from-server was given: "
                                          "the cost of the run can no longer be told", r.status, url_, kServerCostHeader));
            return std::nullopt;
        }
        if (reply.stream_error) return reply.stream_error;
        if (!reply.ok) {
            proposal = failed(std::move(proposal), {ProposerFailure::malformed_reply, Failure::transient, false},
                              fmt::format("HTTP {} [malformed_reply] from {}: {}", r.status, url_, reply.error));
            return std::nullopt;
        }

        if (outcomes.size() > 1) add_note(proposal, fmt::format("after retries ({})", summarise(outcomes)));
        if (reply.finish_reason == "length") add_note(proposal, "reply cut at the token limit");
        if (reply.unfinished) add_note(proposal, "the stream ended before [DONE]");
        if (reply.content.empty()) {
            proposal.status = Proposal::Status::no_code;
            add_note(proposal, "empty reply");
            return std::nullopt;
        }
        fill_from_answer(proposal, reply.content, context);
        return std::nullopt;
    }

    // The prompt's bound: --max-prompt-tokens, else the context size the server reports (less the
    // answer's limit, and a fifth for the estimate's error), else the default; the system message
    // comes out of it.
    PromptLimits prompt_limits(const ProposalContext& context, const std::string& system) {
        PromptLimits limits;
        int tokens = kDefaultMaxPromptTokens;
        if (options_.max_prompt_tokens) {
            tokens = *options_.max_prompt_tokens;
        } else if (const auto reported = context_size(context)) {
            tokens = *reported * 4 / 5;
        }
        limits.max_tokens = std::max(1, tokens - static_cast<int>(estimated_tokens(system)));
        return limits;
    }

    // The model's input size from GET {base_url}/models, asked once: LiteLLM's max_input_tokens,
    // else a total context (vLLM's max_model_len, context_length, context_window) less the answer's
    // limit. Nothing when the server says nothing (or cannot be asked).
    std::optional<int> context_size(const ProposalContext& context) {
        if (context_asked_) return context_size_;
        context_asked_ = true;
        RequestLimits limits;
        limits.timeout_s = 10;
        limits.deadline = context.deadline;
        std::string base = options_.base_url;
        while (!base.empty() && base.back() == '/') base.pop_back();
        std::vector<std::string> headers = {"Accept: application/json", std::string("User-Agent: kevo/") + kVersion};
        if (!options_.api_key.empty()) headers.push_back("Authorization: Bearer " + options_.api_key);
        const HttpResult r = client_.get(base + "/models", headers, limits);
        if (r.transport != HttpResult::Transport::ok || r.status != 200) return std::nullopt;
        const json j = json::parse(r.body, nullptr, false);
        if (j.is_discarded() || !j.contains("data") || !j["data"].is_array()) return std::nullopt;
        const int answer = options_.max_completion_tokens.value_or(options_.max_tokens.value_or(0));
        for (const auto& m : j["data"]) {
            if (!m.is_object() || m.value("id", std::string()) != options_.model) continue;
            const auto number = [&](const char* key) -> std::optional<int> {
                const auto it = m.find(key);
                if (it == m.end() || !it->is_number() || it->get<double>() <= 0) return std::nullopt;
                return static_cast<int>(std::min(it->get<double>(), 1e9));
            };
            if (const auto input = number("max_input_tokens")) return context_size_ = *input;
            for (const char* key : {"max_model_len", "context_length", "context_window"})
                if (const auto total = number(key); total && *total > answer) return context_size_ = *total - answer;
        }
        return std::nullopt;
    }

    LlmOptions options_;
    std::string url_;
    HttpClient client_;
    bool context_asked_ = false;
    std::optional<int> context_size_;
};

}  // namespace

std::string llm_system_message(Language language) {
    return fmt::format(
        "You are an expert GPU performance engineer for scientific computing. You write {} kernels that are "
        "correct first and fast second, and you reason from the roofline: memory traffic, occupancy, coalescing "
        "and data reuse. Follow the requested answer format exactly.",
        language_name(language));
}

std::unique_ptr<Proposer> make_llm_proposer(LlmOptions options) {
    return std::make_unique<LlmProposer>(std::move(options));
}

}  // namespace kevo

// The proposer's entry in the registry (search/proposers/registry.hpp): its options, the rule
// between its two answer limits, and its factory with the checks of its settings.
namespace kevo {
namespace {

std::string api_key() {
    for (const char* name : {"KEVO_API_KEY", "OPENAI_API_KEY"})
        if (const char* v = std::getenv(name); v && *v) return v;
    return {};
}

bool starts_with_ci(const std::string& text, std::string_view prefix) {
    return text.size() >= prefix.size() &&
           std::equal(prefix.begin(), prefix.end(), text.begin(),
                      [](char a, char b) { return std::tolower(static_cast<unsigned char>(a)) == b; });
}

template <class T>
std::optional<T> optional_value(const nlohmann::json& values, const char* key) {
    const auto it = values.find(key);
    if (it == values.end() || it->is_null()) return std::nullopt;
    return it->get<T>();
}

// How the proposer prices what it spends, checked against the budget asked for: a cost cap needs
// prices, or the server's own figure on every reply (--cost-from-server).
Expected<void> check_llm_options(const LlmOptions& l, double max_cost) {
    if (!starts_with_ci(l.base_url, "http://") && !starts_with_ci(l.base_url, "https://"))
        return make_error(fmt::format("--base-url {}: only http:// and https:// URLs are accepted (an OpenAI-compatible "
                                      "endpoint, e.g. https://host/v1)", l.base_url));
    const bool priced = l.price_prompt_per_mtok > 0 || l.price_completion_per_mtok > 0;
    if (l.cost_from_server && priced)
        return make_error("--cost-from-server and --price-in/--price-out are two ways to price a run; give one of them");
    if (l.cost_from_server && l.stream)
        return make_error(fmt::format("--cost-from-server cannot be kept with --stream: the {} header is sent before "
                                      "a streamed answer is written", kServerCostHeader));
    if (max_cost > 0 && !priced && !l.cost_from_server)
        return make_error(fmt::format("--max-cost {:g} needs a price: give --price-in and --price-out (USD per million "
                                      "tokens), or --cost-from-server when the server reports each reply's cost in "
                                      "the {} header (LiteLLM's proxy does)", max_cost, kServerCostHeader));
    return {};
}

Expected<std::unique_ptr<Proposer>> make_from_options(const ProposerContext& c) {
    const nlohmann::json& v = c.values;
    LlmOptions l;
    l.base_url = v.value("base_url", std::string());
    l.model = v.value("model", std::string());
    if (l.base_url.empty()) return make_error("--proposer llm needs --base-url (an OpenAI-compatible endpoint, e.g. https://host/v1)");
    if (l.model.empty()) return make_error("--proposer llm needs --model");
    l.api_key = api_key();
    l.temperature = optional_value<double>(v, "temperature");
    l.max_tokens = optional_value<int>(v, "max_tokens");
    l.max_completion_tokens = optional_value<int>(v, "max_completion_tokens");
    l.stream = v.value("stream", l.stream);
    l.cost_from_server = v.value("cost_from_server", l.cost_from_server);
    l.request_timeout_s = v.value("request_timeout", l.request_timeout_s);
    l.stream_timeout_s = v.value("stream_timeout", l.stream_timeout_s);
    l.max_prompt_tokens = optional_value<int>(v, "max_prompt_tokens");
    l.max_retries = v.value("retries", l.max_retries);
    l.backoff_initial_s = v.value("retry_backoff", l.backoff_initial_s);
    l.price_prompt_per_mtok = v.value("price_in", 0.0);
    l.price_completion_per_mtok = v.value("price_out", 0.0);
    if (auto ok = check_llm_options(l, c.max_cost_usd); !ok) return ok.error();
    return make_llm_proposer(std::move(l));
}

// --max-completion-tokens takes the place of --max-tokens (reasoning models), and a --max-tokens N
// that of a --max-completion-tokens (a resume's stored one): the two are never sent together.
Expected<void> settle_answer_limits(nlohmann::json& values, const std::set<std::string>& given) {
    const bool completion = given.count("max_completion_tokens") > 0;
    const bool tokens = given.count("max_tokens") > 0 && !values.value("max_tokens", nlohmann::json()).is_null();
    if (completion && tokens)
        return make_error("--max-tokens and --max-completion-tokens both limit the answer; give one of them "
                          "(reasoning models take --max-completion-tokens)");
    if (completion) values["max_tokens"] = nullptr;
    else if (tokens) values["max_completion_tokens"] = nullptr;
    return {};
}

using T = OptionType;
constexpr ResumeRule kReconnects = ResumeRule::reconnects;
constexpr StudyPlace kModel = StudyPlace::model_table;
const LlmOptions kDefaults{};

const bool registered = register_proposer(
    {"llm", "an OpenAI-compatible chat-completions endpoint (--base-url, --model)", 1,
     {{.name = "base_url", .flag = "--base-url", .type = T::text, .fallback = "",
       .help = "OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (llm); key from KEVO_API_KEY or OPENAI_API_KEY",
       .resume = kReconnects, .study = kModel, .required = "\"https://host/v1\""},
      {.name = "model", .flag = "--model", .type = T::text, .fallback = "", .help = "LLM model name (llm)",
       .resume = kReconnects, .study = kModel, .required = "\"MODEL-NAME\""},
      // A study names the variable its key is read from (kevo sweep sets KEVO_API_KEY from it).
      {.name = "api_key_env", .type = T::text, .help = "the environment variable that holds the key", .study = kModel},
      {.name = "temperature", .flag = "--temperature", .type = T::number_or_none, .fallback = *kDefaults.temperature,
       .lo = 0, .hi = 2, .help = "sampling temperature, or none to send none (llm)", .resume = kReconnects, .study = kModel},
      {.name = "max_tokens", .flag = "--max-tokens", .type = T::integer_or_none, .fallback = *kDefaults.max_tokens,
       .lo = 1, .hi = 1e7, .help = "answer token limit (max_tokens), or none to send none (llm)", .resume = kReconnects,
       .study = kModel},
      {.name = "max_completion_tokens", .flag = "--max-completion-tokens", .type = T::integer, .lo = 1, .hi = 1e7,
       .help = "answer token limit as max_completion_tokens, in place of --max-tokens (reasoning models; llm)",
       .resume = kReconnects, .study = kModel},
      {.name = "stream", .flag = "--stream", .type = T::flag, .fallback = kDefaults.stream,
       .help = "ask for the answer as a stream of server-sent events; --no-stream: one whole answer (llm)",
       .resume = kReconnects, .study = kModel},
      {.name = "cost_from_server", .flag = "--cost-from-server", .type = T::flag, .fallback = kDefaults.cost_from_server,
       .help = "take each reply's cost from the server's x-litellm-response-cost header, and stop if one lacks it "
               "(llm; lets --max-cost work without --price-in/--price-out)",
       .study = kModel},
      {.name = "request_timeout", .flag = "--request-timeout", .type = T::number, .fallback = kDefaults.request_timeout_s,
       .lo = 1, .hi = 86400, .help = "seconds per HTTP request; with --stream, the longest silence between bytes (llm)",
       .resume = kReconnects, .study = kModel},
      {.name = "stream_timeout", .flag = "--stream-timeout", .type = T::number, .fallback = kDefaults.stream_timeout_s,
       .lo = 0, .hi = 86400,
       .help = "with --stream: seconds the whole streamed request may take (0: no bound but --max-wall; llm)",
       .resume = kReconnects, .study = kModel},
      {.name = "max_prompt_tokens", .flag = "--max-prompt-tokens", .type = T::integer, .lo = 256, .hi = 1e8,
       .help = "bound of the prompt in estimated tokens (default: the context size the server reports, else 32768; llm)",
       .resume = kReconnects, .study = kModel},
      {.name = "retries", .flag = "--retries", .type = T::integer, .fallback = kDefaults.max_retries, .lo = 0, .hi = 100,
       .help = "retries after HTTP 429/5xx or a timeout (llm)", .resume = kReconnects, .study = kModel},
      {.name = "retry_backoff", .flag = "--retry-backoff", .type = T::number, .fallback = kDefaults.backoff_initial_s,
       .lo = 0, .hi = 3600, .help = "first retry delay in seconds, doubling (llm)", .resume = kReconnects, .study = kModel},
      {.name = "price_in", .flag = "--price-in", .type = T::number, .fallback = 0.0, .lo = 0, .hi = 1e6,
       .help = "USD per million prompt tokens, for cost accounting (llm)", .study = kModel},
      {.name = "price_out", .flag = "--price-out", .type = T::number, .fallback = 0.0, .lo = 0, .hi = 1e6,
       .help = "USD per million completion tokens (llm)", .study = kModel}},
     make_from_options, true, settle_answer_limits, true});

}  // namespace
}  // namespace kevo
