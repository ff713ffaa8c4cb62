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
        const std::string user = build_prompt(context, prompt_limits(context, system));
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
                if (!read) return std::move(proposal);  // a candidate, no code, or a failure that ends it
                judgement = judge_reply(0, *read);       // an error event inside the stream
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
