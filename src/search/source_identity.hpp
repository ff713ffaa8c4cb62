// A candidate's identity: its source with comments and layout normalised away (the `// kevo:`
// directives kept, since they change the launch), plus the knob values in force. Two candidates
// with the same identity are the same kernel: a model echoing the seed with one word of a comment
// changed, a user's `--from` copy of the seed, or a reformatted earlier candidate is a duplicate
// and is not evaluated (or handed out) again.
#pragma once

#include <map>
#include <string>

namespace kevo {

// The C-family source (CUDA C++, OpenCL C) as its tokens see it: comments removed except the
// `// kevo:` directives, whitespace dropped except between two word characters, blank lines
// dropped, line ends kept (a preprocessor line ends at its newline).
std::string normalised_source(const std::string& source);

// A hash of normalised_source and the knob values in force (the declared defaults filled in).
std::string candidate_hash(const std::string& source, const std::map<std::string, std::string>& defines);

}  // namespace kevo
