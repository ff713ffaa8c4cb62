// The `llm` proposer: an OpenAI-compatible chat-completions endpoint over libcurl, with retries
// and backoff on 429, 5xx, timeouts, connection errors and error events in a stream, failures
// classified by class (failure_class.hpp), optional streaming (server-sent events), requests that
// end at a signal or the run's deadline, prompts kept under a token bound, and token and cost
// accounting of every reply received.
#pragma once

#include <memory>
#include <optional>
#include <string>

#include "search/proposer.hpp"

namespace kevo {

// The response header in which LiteLLM's proxy reports what a request cost, in USD.
inline constexpr const char* kServerCostHeader = "x-litellm-response-cost";

struct LlmOptions {
    std::string base_url;   // http(s)://host[:port]/v1 ; {base_url}/chat/completions is called
    std::string model;
    std::string api_key;    // read from KEVO_API_KEY or OPENAI_API_KEY by the caller; empty for local endpoints
    // Each is left out of the request when unset (reasoning models reject temperature and max_tokens).
    std::optional<double> temperature = 0.7;
    std::optional<int> max_tokens = 8192;
    std::optional<int> max_completion_tokens;
    bool stream = false;            // ask for server-sent events (stream: true)
    // Without stream: the whole request. With stream: the longest silence between bytes, and
    // stream_timeout_s the whole request (0: no bound but the run's deadline).
    double request_timeout_s = 300;
    double stream_timeout_s = 1800;
    // The prompt's bound in estimated tokens (prompt.hpp); unset: the context size the server reports
    // for the model in GET {base_url}/models, else kDefaultMaxPromptTokens.
    std::optional<int> max_prompt_tokens;
    int max_retries = 4;            // attempts = 1 + max_retries
    double backoff_initial_s = 1.0; // doubling per retry; Retry-After honoured when given; both capped
    double backoff_max_s = 60.0;
    // Cost: priced tokens when a price is given; else the server's kServerCostHeader when it sends
    // one; with cost_from_server, a reply without that header is a fatal failure (a cost cap could
    // not be kept).
    double price_prompt_per_mtok = 0, price_completion_per_mtok = 0;  // USD per million tokens
    bool cost_from_server = false;
};

std::unique_ptr<Proposer> make_llm_proposer(LlmOptions options);

// The system message every llm request starts with.
std::string llm_system_message(Language language);

}  // namespace kevo
