// A knowledge note: a short text a proposer's prompt may carry (what made fast kernels fast for a
// kind of task on a kind of device), with the scope it applies to. Notes are Markdown files with a
// TOML header between `+++` lines (knowledge/*.md, or a folder named by --knowledge; docs/knowledge.md).
#pragma once

#include <string>
#include <vector>

#include "core/expected.hpp"

namespace kevo {

// Where a note applies. Each list left empty matches anything; a list with entries matches when
// one entry does (tasks, categories, regimes, bounds, languages: exact names; devices: "gpu",
// "cpu", or a word found in the device's name, vendor or architecture, case ignored).
struct NoteScope {
    std::vector<std::string> tasks, categories, regimes, bounds, languages, devices;
};

struct KnowledgeNote {
    std::string id;      // the file name without .md: unique within a library
    std::string title;
    std::string text;    // the Markdown body after the header
    NoteScope scope;
    std::string source;  // where its facts come from ("docs/best-kernels.md, saxpy")
    bool draft = false;  // written by `kevo knowledge distil`, not yet kept by a person: never shown
    std::string path;    // the file it was read from ("shipped" for the built-in notes)
};

// The note in `text` (a file's contents), or an error naming `path`, the line and the field, and
// what the header accepts.
Expected<KnowledgeNote> parse_note(const std::string& text, const std::string& id, const std::string& path);

// The text of a note file for `note` (header and body), as parse_note reads it back.
std::string note_file_text(const KnowledgeNote& note);

}  // namespace kevo
