// Small pieces shared by the external proposers (llm, cmd, replay) and the prompt: which source
// SEARCH/REPLACE edits apply to, and turning a free-text answer into a Proposal.
#pragma once

#include <string>
#include <string_view>

#include "search/proposer.hpp"

namespace kevo {

// The source an edit answer is applied to: the previous attempt, or the incumbent when there is
// none or when the prompt withheld it (optimisation dropout, a fresh approach), and how messages
// name it. The prompt says the same.
struct EditBase {
    const std::string& source;
    std::string_view name;
};
EditBase edit_base(const ProposalContext& context);

// Fills source/status/note of `proposal` from `answer` (which it also stores as the transcript):
// ok with the parsed source, or no_code / edit_failed with the parser's reason.
void fill_from_answer(Proposal& proposal, std::string answer, const ProposalContext& context);

// The last `max_chars` characters of `text` on one line (newlines folded), for notes.
std::string tail_one_line(std::string_view text, size_t max_chars = 200);

// `text` as one clean line for a note: every run of whitespace (newlines included) one space, cut
// after `max_chars` characters with "...".
std::string one_line(std::string_view text, size_t max_chars = 240);

}  // namespace kevo
