// Turning a proposer's free-text answer into a candidate source: the longest fenced code block
// that holds a kernel, or search/replace edits applied to the previous source. Reasoning sections
// (<think>, <thinking>, <reasoning>, <reflection>) are not the answer and are ignored.
#pragma once

#include <string>
#include <string_view>

#include "backend/backend.hpp"

namespace kevo {

struct ParsedAnswer {
    bool ok = false;
    std::string source;
    std::string reason;  // why nothing usable was found, or which form was used
    bool edit_failed = false;  // not ok because its SEARCH/REPLACE edits are malformed or do not apply
};

// Edit format (one or more blocks):
//   <<<<<<< SEARCH
//   exact lines of the previous source
//   =======
//   replacement lines
//   >>>>>>> REPLACE
ParsedAnswer parse_answer(std::string_view answer, std::string_view previous_source, Language language);

}  // namespace kevo
