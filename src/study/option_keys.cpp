// See option_keys.hpp. The ranges are kevo run's own (src/cli/cmd_run.cpp).
#include "study/option_keys.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kevo {

using Kind = OptionKey::Kind;

const std::vector<OptionKey>& model_keys() {
    static const std::vector<OptionKey> keys = {
        {"base_url", "--base-url", Kind::text, 0, 0, {}, {"llm"}},
        {"model", "--model", Kind::text, 0, 0, {}, {"llm"}},
        {"api_key_env", "", Kind::text, 0, 0, {}, {"llm"}},
        {"temperature", "--temperature", Kind::number_or_none, 0, 2, {}, {"llm"}},
        {"max_tokens", "--max-tokens", Kind::integer_or_none, 1, 1e7, {}, {"llm"}},
        {"max_completion_tokens", "--max-completion-tokens", Kind::integer, 1, 1e7, {}, {"llm"}},
        {"stream", "--stream", Kind::flag, 0, 0, {}, {"llm"}},
        {"cost_from_server", "--cost-from-server", Kind::flag, 0, 0, {}, {"llm"}},
        {"request_timeout", "--request-timeout", Kind::number, 1, 86400, {}, {"llm"}},
        {"stream_timeout", "--stream-timeout", Kind::number, 0, 86400, {}, {"llm"}},
        {"max_prompt_tokens", "--max-prompt-tokens", Kind::integer, 256, 1e8, {}, {"llm"}},
        {"retries", "--retries", Kind::integer, 0, 100, {}, {"llm"}},
        {"retry_backoff", "--retry-backoff", Kind::number, 0, 3600, {}, {"llm"}},
        {"price_in", "--price-in", Kind::number, 0, 1e6, {}, {"llm"}},
        {"price_out", "--price-out", Kind::number, 0, 1e6, {}, {"llm"}},
        {"command", "--command", Kind::text, 0, 0, {}, {"cmd"}},
        {"command_timeout", "--command-timeout", Kind::number, 1, 86400, {}, {"cmd"}},
        {"replay", "--replay", Kind::text, 0, 0, {}, {"replay"}},
    };
    return keys;
}

const std::vector<OptionKey>& run_keys() {
    static const std::vector<OptionKey> keys = {
        {"warmup", "--warmup", Kind::integer, 0, 1000, {}, {}},
        {"repeat", "--repeat", Kind::integer, 1, 10000, {}, {}},
        {"max_repeat", "--max-repeat", Kind::integer, 1, 100000, {}, {}},
        {"noise_cv", "--noise-cv", Kind::number, 0, 10, {}, {}},
        {"gate_rounds", "--gate-rounds", Kind::integer, 1, 99, {}, {}},
        {"gate_top", "--gate-top", Kind::integer, 1, 100, {}, {}},
        // The kernel each run starts from, "{task}" substituted ("kernels/{task}.cu"); relative to the study file.
        {"from", "--from", Kind::text, 0, 0, {}, {}},
        {"timeout", "--timeout", Kind::number, 0.1, 86400, {}, {}},
        {"stagnation", "--stagnation", Kind::integer, 0, 100000, {}, {}},
        {"max_proposer_failures", "--max-proposer-failures", Kind::integer, 1, 100000, {}, {}},
        {"roofline", "--roofline", Kind::word, 0, 0, {"static", "workload"}, {}},
    };
    return keys;
}

const OptionKey* find_option_key(const std::vector<OptionKey>& keys, std::string_view key) {
    for (const auto& k : keys)
        if (k.key == key) return &k;
    return nullptr;
}

std::string accepted_text(const OptionKey& key) {
    switch (key.kind) {
        case Kind::text: return "a string";
        case Kind::word: return fmt::format("one of \"{}\"", fmt::join(key.words, "\", \""));
        case Kind::number: return fmt::format("a number from {:g} to {:g}", key.lo, key.hi);
        case Kind::integer: return fmt::format("an integer from {:g} to {:g}", key.lo, key.hi);
        case Kind::number_or_none: return fmt::format("a number from {:g} to {:g}, or \"none\"", key.lo, key.hi);
        case Kind::integer_or_none: return fmt::format("an integer from {:g} to {:g}, or \"none\"", key.lo, key.hi);
        case Kind::flag: return "true or false";
    }
    return {};
}

}  // namespace kevo
