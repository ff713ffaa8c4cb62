// The `llm` proposer: builds the prompt, POSTs it to {base_url}/chat/completions, retries what is
// worth retrying, accounts tokens and cost, and parses the reply into a candidate.
#include "search/proposers/llm.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <optional>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "search/prompt.hpp"
#include "search/proposers/common.hpp"
#include "search/proposers/http_client.hpp"

namespace kevo {
namespace {

using json = nlohmann::json;

std::string endpoint(std::string base) {
    while (!base.empty() && base.back() == '/') base.pop_back();
    return base + "/chat/completions";
}

// The message a failed request carries: OpenAI's {"error":{"message":...}}, a plain {"error":"..."},
// or the start of the body.
std::string error_message(const std::string& body) {
    const json j = json::parse(body, nullptr, false);
    if (!j.is_discarded() && j.is_object() && j.contains("error")) {
        const json& e = j["error"];
        if (e.is_object() && e.contains("message") && e["message"].is_string()) return e["message"].get<std::string>();
        if (e.is_string()) return e.get<std::string>();
    }
    if (!j.is_discarded() && j.is_object() && j.contains("message") && j["message"].is_string())
        return j["message"].get<std::string>();
    return tail_one_line(body.substr(0, 300), 300);
}

// Seconds from a Retry-After header, when it holds a number (an HTTP date is ignored: the backoff
// applies then).
std::optional<double> retry_after(const HttpResult& r) {
    const auto it = r.headers.find("retry-after");
    if (it == r.headers.end()) return std::nullopt;
    char* end = nullptr;
    const double v = std::strtod(it->second.c_str(), &end);
    if (end == it->second.c_str() || !std::isfinite(v) || v < 0) return std::nullopt;
    return v;
}

std::string outcome_name(const HttpResult& r) {
    switch (r.transport) {
        case HttpResult::Transport::ok: return fmt::format("HTTP {}", r.status);
        case HttpResult::Transport::timeout: return "timeout";
        case HttpResult::Transport::connection_error: return "connection error";
        case HttpResult::Transport::other_error: return "transport error";
    }
    return "?";
}

bool retryable(const HttpResult& r) {
    if (r.transport == HttpResult::Transport::timeout || r.transport == HttpResult::Transport::connection_error)
        return true;
    return r.transport == HttpResult::Transport::ok && (r.status == 429 || r.status >= 500);
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

int count(const json& usage, const char* key) {
    const auto it = usage.find(key);
    return it != usage.end() && it->is_number() ? it->get<int>() : 0;
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

        const json request = {
            {"model", options_.model},
            {"messages", json::array({{{"role", "system"}, {"content", system}}, {{"role", "user"}, {"content", user}}})},
            {"temperature", options_.temperature},
            {"max_tokens", options_.max_tokens},
        };
        const std::string body = request.dump(-1, ' ', false, json::error_handler_t::replace);
        std::vector<std::string> headers = {"Content-Type: application/json", "Accept: application/json"};
        if (!options_.api_key.empty()) headers.push_back("Authorization: Bearer " + options_.api_key);

        std::vector<std::string> outcomes;
        const int attempts = 1 + std::max(0, options_.max_retries);
        double backoff = options_.backoff_initial_s;
        for (int attempt = 1; attempt <= attempts; ++attempt) {
            const HttpResult r = client_.post(url_, body, headers, options_.request_timeout_s);
            outcomes.push_back(outcome_name(r));
            if (r.transport == HttpResult::Transport::ok && r.status >= 200 && r.status < 300)
                return accept(std::move(proposal), r, outcomes, context);
            const std::string detail =
                r.transport == HttpResult::Transport::ok ? error_message(r.body) : r.error;
            if (!retryable(r)) {
                proposal.status = Proposal::Status::failed;
                proposal.note = fmt::format("{} from {}: {}", outcome_name(r), url_, detail);
                if (outcomes.size() > 1) proposal.note += fmt::format(" (attempts: {})", summarise(outcomes));
                return proposal;
            }
            if (attempt == attempts) {
                proposal.status = Proposal::Status::failed;
                proposal.note = fmt::format("gave up after {} attempt{}: {} (last: {})", attempts,
                                            attempts == 1 ? "" : "s", summarise(outcomes), detail);
                return proposal;
            }
            double wait = std::min(backoff, options_.backoff_max_s);
            if (const auto after = retry_after(r)) wait = std::min(*after, options_.backoff_max_s);
            backoff *= 2;
            std::this_thread::sleep_for(std::chrono::duration<double>(wait));
        }
        return proposal;  // unreachable: the loop always returns
    }

private:
    Proposal accept(Proposal proposal, const HttpResult& r, const std::vector<std::string>& outcomes,
                    const ProposalContext& context) {
        const json j = json::parse(r.body, nullptr, false);
        const bool has_choice = !j.is_discarded() && j.is_object() && j.contains("choices") &&
                                j["choices"].is_array() && !j["choices"].empty() && j["choices"][0].is_object();
        if (!has_choice) {
            proposal.status = Proposal::Status::failed;
            proposal.answer = r.body;
            proposal.note = fmt::format("HTTP {} without choices[0] in the reply: {}", r.status,
                                        tail_one_line(r.body.substr(0, 200)));
            return proposal;
        }
        if (const auto usage = j.find("usage"); usage != j.end() && usage->is_object()) {
            proposal.prompt_tokens = count(*usage, "prompt_tokens");
            proposal.completion_tokens = count(*usage, "completion_tokens");
        }
        proposal.cost_usd = proposal.prompt_tokens * options_.price_prompt_per_mtok / 1e6 +
                            proposal.completion_tokens * options_.price_completion_per_mtok / 1e6;

        const json& choice = j["choices"][0];
        std::string content;
        if (const auto m = choice.find("message"); m != choice.end() && m->is_object()) {
            const auto c = m->find("content");
            if (c != m->end() && c->is_string()) content = c->get<std::string>();
        }
        if (outcomes.size() > 1) proposal.note = fmt::format("after retries ({})", summarise(outcomes));
        if (const auto f = choice.find("finish_reason"); f != choice.end() && f->is_string() && *f == "length")
            proposal.note += std::string(proposal.note.empty() ? "" : "; ") + "reply cut at max_tokens";
        if (content.empty()) {
            proposal.status = Proposal::Status::no_code;
            proposal.note += std::string(proposal.note.empty() ? "" : "; ") + "empty reply";
            return proposal;
        }
        fill_from_answer(proposal, std::move(content), context);
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
