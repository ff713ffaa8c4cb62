// The prompt a language model (or a command-line agent) reads: brief, signatures and geometry in
// force, device and ceilings, previous attempt and its result, incumbent, short history, structured
// feedback (compile errors by line, per-size errors with the worst index, fractions, resources),
// what became of the last answer when it was not evaluated, and the answer format. Never any
// held-out size or result. The prompt is bounded: a large or rejected source is quoted only in part
// (head and tail, with a marker saying how much was cut), and the whole is kept under a token bound
// by cutting, in this order, the history, the inspirations, the previous attempt's source, the
// incumbent's source and last the task brief.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include "search/proposer.hpp"

namespace kevo {

// The bound when the server reports no context size, and the estimate that turns characters into
// tokens (about 4 characters a token for English text and code).
inline constexpr int kDefaultMaxPromptTokens = 32768;
inline constexpr size_t kCharsPerToken = 4;

struct PromptLimits {
    int max_tokens = kDefaultMaxPromptTokens;  // the whole prompt, estimated (estimated_tokens)
    size_t max_quoted_chars = 48000;           // any one quoted source
    size_t max_rejected_chars = 6000;          // a candidate the evaluator rejected (too large, forbidden)
};

std::string build_prompt(const ProposalContext& context, const PromptLimits& limits = {});
// The estimate the bound is kept with: characters / kCharsPerToken, rounded up.
size_t estimated_tokens(std::string_view text);
// The structured feedback on one attempt (also used in reports).
std::string describe_attempt(const Attempt& attempt, Language language);

}  // namespace kevo
