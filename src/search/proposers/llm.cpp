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

#include "core/version.hpp"
#include "search/prompt.hpp"
#include "search/proposers/chat_reply.hpp"
#include "search/proposers/common.hpp"
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
        case HttpResult::Transport::other_error: return "transport error";
    }
    return "?";
}

// What a failed attempt means: worth another attempt now (429, 5xx, timeouts, dropped
// connections), worth another iteration only (another 4xx, which the next prompt may avoid), or
// never worth trying again as configured (a key, URL or model the server refuses, a parameter it
// rejects, a host that does not resolve).
struct Judgement {
    Failure failure = Failure::transient;
    bool retry = false;
};

Judgement judge(const HttpResult& r, const std::string& message) {
    using T = HttpResult::Transport;
    switch (r.transport) {
        case T::timeout:
        case T::connection_error: return {Failure::transient, true};
        case T::unresolved:
        case T::bad_url: return {Failure::permanent, false};
        case T::other_error: return {Failure::transient, false};
        case T::ok: break;
    }
    if (r.status == 429 || r.status >= 500) return {Failure::transient, true};
    if (r.status == 401 || r.status == 403 || r.status == 404) return {Failure::permanent, false};
    const std::string m = lower(message);
    const bool names_the_request = m.find("model") != std::string::npos || m.find("parameter") != std::string::npos ||
                                   m.find("unsupported") != std::string::npos;
    if ((r.status == 400 || r.status == 422) && names_the_request) return {Failure::permanent, false};
    return {Failure::transient, false};
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

void add_note(Proposal& p, const std::string& text) { p.note += (p.note.empty() ? "" : "; ") + text; }

Proposal failed(Proposal p, Failure failure, std::string note) {
    p.status = Proposal::Status::failed;
    p.failure = failure;
    p.note = std::move(note);
    return p;
}

class LlmProposer final : public Proposer {
public:
    explicit LlmProposer(LlmOptions options) : options_(std::move(options)), url_(endpoint(options_.base_url)) {}

    std::string name() const override { return "llm"; }

    Proposal propose(const ProposalContext& context) override {
        Proposal proposal;
        const std::string system = llm_system_message(context.language);
        const std::string user = build_prompt(context);
        proposal.prompt = "[system]\n" + system + "\n\n[user]\n" + user;
        const std::string body = request_body(system, user);
        const std::vector<std::string> headers = request_headers();

        std::vector<std::string> outcomes;
        const int attempts = 1 + std::max(0, options_.max_retries);
        double backoff = options_.backoff_initial_s;
        for (int attempt = 1; attempt <= attempts; ++attempt) {
            const HttpResult r = client_.post(url_, body, headers, options_.request_timeout_s);
            outcomes.push_back(outcome_name(r));
            if (r.transport == HttpResult::Transport::ok && r.status >= 200 && r.status < 300)
                return accept(std::move(proposal), r, outcomes, context);
            const std::string detail = r.transport == HttpResult::Transport::ok ? chat_error_message(r.body) : r.error;
            const Judgement judgement = judge(r, detail);
            if (!judgement.retry) {
                std::string note = fmt::format("{} from {}: {}", outcome_name(r), url_, detail);
                if (outcomes.size() > 1) note += fmt::format(" (attempts: {})", summarise(outcomes));
                return failed(std::move(proposal), judgement.failure, std::move(note));
            }
            if (attempt == attempts)
                return failed(std::move(proposal), Failure::transient,
                              fmt::format("gave up after {} attempt{}: {} (last: {})", attempts, attempts == 1 ? "" : "s",
                                          summarise(outcomes), detail));
            double wait = std::min(backoff, options_.backoff_max_s);
            if (const auto after = number_header(r, "retry-after")) wait = std::min(*after, options_.backoff_max_s);
            backoff *= 2;
            std::this_thread::sleep_for(std::chrono::duration<double>(wait));
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
    std::optional<double> cost(const Proposal& p, const HttpResult& r) const {
        if (options_.price_prompt_per_mtok > 0 || options_.price_completion_per_mtok > 0)
            return p.prompt_tokens * options_.price_prompt_per_mtok / 1e6 +
                   p.completion_tokens * options_.price_completion_per_mtok / 1e6;
        return number_header(r, kServerCostHeader);
    }

    Proposal accept(Proposal proposal, const HttpResult& r, const std::vector<std::string>& outcomes,
                    const ProposalContext& context) {
        proposal.answer = r.body;
        const bool streamed = is_event_stream(r);
        if (streamed && !options_.stream)
            return failed(std::move(proposal), Failure::permanent,
                          fmt::format("HTTP {} from {}: the server answered with a stream (text/event-stream); pass "
                                      "--stream", r.status, url_));
        const ChatReply reply = streamed ? parse_chat_stream(r.body) : parse_chat_completion(r.body);
        if (!reply.ok)
            return failed(std::move(proposal), Failure::transient, fmt::format("HTTP {}: {}", r.status, reply.error));
        proposal.prompt_tokens = reply.prompt_tokens;
        proposal.completion_tokens = reply.completion_tokens;
        const auto spent = cost(proposal, r);
        proposal.cost_usd = spent.value_or(0.0);
        if (!spent && options_.cost_from_server)
            return failed(std::move(proposal), Failure::fatal,
                          fmt::format("HTTP {} from {} without the {} header, and --cost-from-server was given: the "
                                      "cost of the run can no longer be told", r.status, url_, kServerCostHeader));

        if (outcomes.size() > 1) add_note(proposal, fmt::format("after retries ({})", summarise(outcomes)));
        if (reply.finish_reason == "length") add_note(proposal, "reply cut at the token limit");
        if (reply.unfinished) add_note(proposal, "the stream ended before [DONE]");
        if (reply.content.empty()) {
            proposal.status = Proposal::Status::no_code;
            add_note(proposal, "empty reply");
            return proposal;
        }
        fill_from_answer(proposal, reply.content, context);
        return proposal;
    }

    LlmOptions options_;
    std::string url_;
    HttpClient client_;
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
