// The prompt a language model (or a command-line agent) reads: brief, signatures and geometry in
// force, device and ceilings, previous attempt and its result, incumbent, short history, structured
// feedback (compile errors by line, per-size errors with the worst index, fractions, resources),
// what became of the last answer when it was not evaluated, and the answer format. Never any
// held-out size or result. The prompt is bounded: a large or rejected source is quoted only in part
// (head and tail, with a marker saying how much was cut), and the whole is kept under a token bound
// by cutting, in this order, the history, the inspirations, the knowledge notes, the previous
// attempt's source, the incumbent's source and last the task brief.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "core/token_estimate.hpp"
#include "search/proposer.hpp"

namespace kevo {

// The bound when the server reports no context size.
inline constexpr int kDefaultMaxPromptTokens = 32768;

struct PromptLimits {
    int max_tokens = kDefaultMaxPromptTokens;  // the whole prompt, estimated (estimated_tokens)
    size_t max_quoted_chars = 48000;           // any one quoted source
    size_t max_rejected_chars = 6000;          // a candidate the evaluator rejected (too large, forbidden)
};

struct BuiltPrompt {
    std::string text;
    std::vector<std::string> notes;  // ids of the knowledge notes it carries (those the bound left in)
};
BuiltPrompt compose_prompt(const ProposalContext& context, const PromptLimits& limits = {});
// compose_prompt's text.
std::string build_prompt(const ProposalContext& context, const PromptLimits& limits = {});
// The structured feedback on one attempt (also used in reports).
std::string describe_attempt(const Attempt& attempt, Language language);

}  // namespace kevo
