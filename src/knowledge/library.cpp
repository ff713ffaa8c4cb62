// See library.hpp. A folder's note files are its *.md files (not those of folders inside it), read
// in name order; two notes of one id cannot occur, since an id is a file name.
#include "knowledge/library.hpp"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "core/files.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;

Expected<void> add_note(KnowledgeLibrary& library, const std::string& text, const std::string& id, const std::string& path) {
    auto note = parse_note(text, id, path);
    if (!note) return note.error();
    if (note->draft) library.drafts.push_back(id);
    else library.notes.push_back(std::move(*note));
    return {};
}

Expected<void> load_shipped(KnowledgeLibrary& library) {
    for (const auto& [name, text] : shipped_note_files()) {
        const fs::path file(name);
        if (auto ok = add_note(library, std::string(text), file.stem().string(), "shipped:" + file.string()); !ok)
            return ok;
    }
    return {};
}

Expected<void> load_folder(KnowledgeLibrary& library, const std::string& folder) {
    std::error_code ec;
    if (!fs::exists(folder, ec))
        return make_error(fmt::format("--knowledge {}: no such folder (give a folder of note files, *.md, or \"{}\" or "
                                      "\"{}\")",
                                      folder, kShippedKnowledge, kNoKnowledge));
    if (!fs::is_directory(folder, ec))
        return make_error(fmt::format("--knowledge {}: not a folder (give a folder of note files, *.md, or \"{}\" or \"{}\")",
                                      folder, kShippedKnowledge, kNoKnowledge));
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(folder, ec))
        if (entry.is_regular_file() && entry.path().extension() == ".md") files.push_back(entry.path());
    if (ec) return make_error(fmt::format("--knowledge {}: cannot list the folder: {}", folder, ec.message()));
    std::sort(files.begin(), files.end());
    for (const auto& file : files) {
        auto text = read_text_file(file);
        if (!text) return text.error();
        if (auto ok = add_note(library, *text, file.stem().string(), file.string()); !ok) return ok;
    }
    return {};
}

}  // namespace

Expected<KnowledgeLibrary> load_knowledge(const std::string& setting) {
    KnowledgeLibrary library;
    library.setting = setting.empty() ? std::string(kShippedKnowledge) : setting;
    if (library.setting == kNoKnowledge) return library;
    auto loaded = library.setting == kShippedKnowledge ? load_shipped(library) : load_folder(library, library.setting);
    if (!loaded) return loaded.error();
    return library;
}

}  // namespace kevo
