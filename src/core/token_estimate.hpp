// The estimate that turns characters into tokens where no tokenizer is at hand (the prompt's bound,
// the knowledge notes' budget): about 4 characters a token for English text and code.
#pragma once

#include <cstddef>
#include <string_view>

namespace kevo {

inline constexpr size_t kCharsPerToken = 4;

// characters / kCharsPerToken, rounded up.
inline size_t estimated_tokens(std::string_view text) { return (text.size() + kCharsPerToken - 1) / kCharsPerToken; }

}  // namespace kevo
