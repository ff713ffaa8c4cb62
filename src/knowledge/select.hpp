// Which notes a prompt carries: those whose scope matches the task, the candidates' language and
// the device, the most specific first (a note about this task before one about its category,
// before one about its bound), as many as fit a token budget. A note that does not fit is left out
// whole, never cut, and a shorter one after it may still fit.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "knowledge/note.hpp"
#include "task/task.hpp"

namespace kevo {

// The default budget of the notes in one prompt, in estimated tokens (core/token_estimate.hpp).
inline constexpr int kDefaultKnowledgeTokens = 1200;

// What a note's scope is matched against.
struct NoteTarget {
    std::string task, category, regime, bound, language;
    std::string device_name, device_vendor, device_arch;
    bool device_is_cpu = false;
};

NoteTarget note_target(const TaskSpec& spec, const std::string& language, const DeviceInfo& device);

bool note_applies(const NoteScope& scope, const NoteTarget& target);

// How one note fared in a selection.
struct NoteChoice {
    const KnowledgeNote* note = nullptr;
    size_t tokens = 0;   // its estimated size in the prompt (title and text)
    bool shown = false;  // false: it applies but did not fit the budget
};

// Every note that applies to `target`, most specific first, each marked shown or not by the budget.
std::vector<NoteChoice> choose_notes(const std::vector<KnowledgeNote>& notes, const NoteTarget& target, size_t token_budget);
// The shown ones, in that order.
std::vector<KnowledgeNote> select_notes(const std::vector<KnowledgeNote>& notes, const NoteTarget& target,
                                        size_t token_budget);

// The text a prompt carries for one note (its title as a heading, then its text).
std::string note_prompt_text(const KnowledgeNote& note);

}  // namespace kevo
