// Turning a proposer's free-text answer into a candidate source. Reasoning sections (<think>,
// <thinking>, <reasoning>, <reflection>) are not the answer and are ignored. The rule for fenced
// blocks: the last block in the run's language that defines the kernel entry points, where a block
// identical to a kernel the prompt quoted (the incumbent, which is the seed at first, the previous
// attempt, an inspiration) never wins over one the model wrote; without such a block, SEARCH/REPLACE
// edits applied to the previous source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

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
struct AnswerRules {
    std::string_view previous_source;            // what SEARCH/REPLACE edits apply to
    std::string_view base_name = "the previous source";  // how messages name it ("the incumbent" on a fresh approach)
    Language language = language_named("opencl");
    std::vector<std::string> entry_points;       // the task's kernel names (empty: any kernel counts)
    std::vector<std::string_view> quoted;        // sources the prompt showed
};

ParsedAnswer parse_answer(std::string_view answer, const AnswerRules& rules);
// The same without entry points or quoted sources.
ParsedAnswer parse_answer(std::string_view answer, std::string_view previous_source, Language language);

}  // namespace kevo
