// The notes a run may draw from, by the --knowledge setting: "shipped" (the default: the notes of
// knowledge/ in the source tree, embedded in the binary), "none", or a folder of note files.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "core/expected.hpp"
#include "knowledge/note.hpp"

namespace kevo {

inline constexpr std::string_view kShippedKnowledge = "shipped";
inline constexpr std::string_view kNoKnowledge = "none";

struct KnowledgeLibrary {
    std::string setting;               // "shipped", "none" or the folder as given
    std::vector<KnowledgeNote> notes;  // by id; drafts left out
    std::vector<std::string> drafts;   // ids of the drafts left out (kept by removing `draft = true`)
};

// The library `setting` names; an error names a folder that is missing or not a folder, and any
// note file that does not read (its line and field). An empty folder is a library of no notes.
Expected<KnowledgeLibrary> load_knowledge(const std::string& setting);

// knowledge/*.md as embedded at configure time (cmake/embed.cmake): {file name, text}, by name.
const std::vector<std::pair<std::string_view, std::string_view>>& shipped_note_files();

}  // namespace kevo
