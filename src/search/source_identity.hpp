// A candidate's identity: its source with comments and layout normalised away (the `kevo:`
// directives kept, since they change the launch), plus the knob values in force. Two candidates
// with the same identity are the same kernel: a model echoing the seed with one word of a comment
// changed, a user's `--from` copy of the seed, or a reformatted earlier candidate is a duplicate
// and is not evaluated (or handed out) again.
#pragma once

#include <map>
#include <string>

#include "backend/kernel_language.hpp"

namespace kevo {

// The source as its tokens see it: comments removed except the `kevo:` directives (`// kevo:` in
// CUDA C++ and OpenCL C, `# kevo:` in Triton), whitespace dropped except between two word
// characters, blank lines dropped, line ends kept (a preprocessor line ends at its newline). In a
// language whose indentation is syntax (Triton's Python), a line's leading whitespace is kept.
std::string normalised_source(const std::string& source, Language language);

// A hash of normalised_source and the knob values in force (the declared defaults filled in).
std::string candidate_hash(const std::string& source, const std::map<std::string, std::string>& defines,
                           Language language);

}  // namespace kevo
