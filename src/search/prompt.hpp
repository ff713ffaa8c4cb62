// The prompt a language model (or a command-line agent) reads: brief, signatures and geometry in
// force, device and ceilings, previous attempt and its result, incumbent, short history, structured
// feedback (compile errors by line, per-size errors with the worst index, fractions, resources),
// what became of the last answer when it was not evaluated, and the answer format. Never any
// held-out size or result.
#pragma once

#include <string>

#include "search/proposer.hpp"

namespace kevo {

std::string build_prompt(const ProposalContext& context);
// The structured feedback on one attempt (also used in reports).
std::string describe_attempt(const Attempt& attempt, Language language);

}  // namespace kevo
