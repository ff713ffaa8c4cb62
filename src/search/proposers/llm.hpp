// The `llm` proposer: an OpenAI-compatible chat-completions endpoint over libcurl, with retries
// and backoff on 429, 5xx, timeouts and connection errors, and token and cost accounting.
#pragma once

#include <memory>
#include <string>

#include "search/proposer.hpp"

namespace kevo {

struct LlmOptions {
    std::string base_url;   // e.g. http://127.0.0.1:8080/v1 ; {base_url}/chat/completions is called
    std::string model;
    std::string api_key;    // read from KEVO_API_KEY or OPENAI_API_KEY by the caller; empty for local endpoints
    double temperature = 0.7;
    int max_tokens = 8192;
    double request_timeout_s = 300;
    int max_retries = 4;            // attempts = 1 + max_retries
    double backoff_initial_s = 1.0; // doubling per retry; Retry-After honoured when given; both capped
    double backoff_max_s = 60.0;
    double price_prompt_per_mtok = 0, price_completion_per_mtok = 0;  // USD per million tokens
};

std::unique_ptr<Proposer> make_llm_proposer(LlmOptions options);

// The system message every llm request starts with.
std::string llm_system_message(Language language);

}  // namespace kevo
