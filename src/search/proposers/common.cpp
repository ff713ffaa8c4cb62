// Shared helpers of the external proposers: the edit base, answer -> Proposal, one-line notes.
#include "search/proposers/common.hpp"

#include "search/answer.hpp"

namespace kevo {

EditBase edit_base(const ProposalContext& context) {
    if (context.previous && !context.fresh_approach) return {context.previous->source, "the previous source"};
    return {context.incumbent.source, "the incumbent"};
}

void fill_from_answer(Proposal& proposal, std::string answer, const ProposalContext& context) {
    AnswerRules rules;
    const EditBase base = edit_base(context);
    rules.previous_source = base.source;
    rules.base_name = base.name;
    rules.language = context.language;
    if (context.spec)
        for (const auto& k : context.spec->kernels) rules.entry_points.push_back(k.name);
    // What the prompt quoted (the incumbent is the seed until something beats it).
    rules.quoted.push_back(context.incumbent.source);
    if (context.previous) rules.quoted.push_back(context.previous->source);
    for (const auto& i : context.inspirations) rules.quoted.push_back(i.attempt.source);
    const ParsedAnswer parsed = parse_answer(answer, rules);
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

std::string one_line(std::string_view text, size_t max_chars) {
    std::string out;
    bool space = false;
    for (char c : text) {
        if (c == ' ' || c == '\n' || c == '\r' || c == '\t') {
            space = !out.empty();
            continue;
        }
        if (space) out += ' ';
        space = false;
        out += c;
        if (out.size() >= max_chars) {
            // Not inside a UTF-8 sequence: back off to the start of a character.
            while (!out.empty() && (static_cast<unsigned char>(out.back()) & 0xC0) == 0x80) out.pop_back();
            if (!out.empty() && (static_cast<unsigned char>(out.back()) & 0x80)) out.pop_back();
            return out + "...";
        }
    }
    return out;
}

}  // namespace kevo
