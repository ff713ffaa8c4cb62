// Shared helpers of the external proposers: the edit base, answer -> Proposal, one-line notes.
#include "search/proposers/common.hpp"

#include "search/answer.hpp"

namespace kevo {

const std::string& edit_base(const ProposalContext& context) {
    if (context.previous && !context.fresh_approach) return context.previous->source;
    return context.incumbent.source;
}

void fill_from_answer(Proposal& proposal, std::string answer, const ProposalContext& context) {
    const ParsedAnswer parsed = parse_answer(answer, edit_base(context), context.language);
    proposal.answer = std::move(answer);
    if (parsed.ok) {
        proposal.status = Proposal::Status::ok;
        proposal.source = parsed.source;
    } else {
        proposal.status = parsed.edit_failed ? Proposal::Status::edit_failed : Proposal::Status::no_code;
        proposal.source.clear();
    }
    if (proposal.note.empty())
        proposal.note = parsed.reason;
    else
        proposal.note += "; " + parsed.reason;
}

std::string tail_one_line(std::string_view text, size_t max_chars) {
    while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ')) text.remove_suffix(1);
    const bool cut = text.size() > max_chars;
    if (cut) text = text.substr(text.size() - max_chars);
    std::string out = cut ? "..." : "";
    for (char c : text) out += (c == '\n' || c == '\r' || c == '\t') ? ' ' : c;
    return out;
}

}  // namespace kevo
