// Reads and writes a note file (see note.hpp): a `+++` line, a TOML header, a `+++` line, then the
// Markdown body. The header's keys are checked one by one, so a misspelt key is an error that lists
// the accepted ones rather than a scope silently left open.
#include <algorithm>
#include <sstream>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/toml_parse.hpp"
#include "knowledge/note.hpp"

namespace kevo {
namespace {

constexpr std::string_view kFence = "+++";
const char* const kKeys = "title, tasks, categories, regimes, bounds, languages, devices, source, draft";

struct Split {
    std::string header, body;
    int body_line = 0;
};

// The header between the first two fence lines and the body after them.
Expected<Split> split_note(const std::string& text, const std::string& path) {
    const auto line_end = [&](size_t from) { return std::min(text.find('\n', from), text.size()); };
    const auto is_fence = [&](size_t from) {
        std::string_view line(text.data() + from, line_end(from) - from);
        if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
        return line == kFence;
    };
    if (text.empty() || !is_fence(0))
        return make_error(fmt::format("{}:1: a note starts with a line `+++`, then its TOML header (title = \"...\"), "
                                      "then `+++` and the note's text",
                                      path));
    int line = 2;
    for (size_t at = line_end(0) + 1; at < text.size(); at = line_end(at) + 1, ++line) {
        if (!is_fence(at)) continue;
        const size_t header_start = line_end(0) + 1;
        // An empty first line stands for the opening fence, so that TOML's line numbers are the file's.
        return Split{"\n" + text.substr(header_start, at - header_start), text.substr(std::min(text.size(), line_end(at) + 1)),
                     line + 1};
    }
    return make_error(fmt::format("{}: the header has no closing `+++` line", path));
}

class HeaderReader {
public:
    explicit HeaderReader(const std::string& path) : path_(path) {}

    Expected<void> read(const toml::table& header, KnowledgeNote& note) const {
        for (const auto& [key, node] : header) {
            const std::string k(key.str());
            Expected<void> ok = {};
            if (k == "title") ok = text(node, k, note.title);
            else if (k == "source") ok = text(node, k, note.source);
            else if (k == "draft") ok = flag(node, k, note.draft);
            else if (k == "tasks") ok = words(node, k, note.scope.tasks);
            else if (k == "categories") ok = words(node, k, note.scope.categories);
            else if (k == "regimes") ok = words(node, k, note.scope.regimes);
            else if (k == "bounds") ok = bounds(node, note.scope.bounds);
            else if (k == "languages") ok = words(node, k, note.scope.languages);
            else if (k == "devices") ok = words(node, k, note.scope.devices);
            else ok = error(node, k, fmt::format("is not a key of a note's header; the keys are: {}", kKeys));
            if (!ok) return ok;
        }
        if (note.title.empty()) return make_error(fmt::format("{}: the header has no title: add title = \"...\"", path_));
        return {};
    }

private:
    std::string path_;

    Error error(const toml::node& node, std::string_view key, const std::string& what) const {
        const auto line = node.source().begin.line;
        return make_error(fmt::format("{}:{}: {} {}", path_, line > 0 ? std::to_string(line) : "?", key, what));
    }

    Expected<void> text(const toml::node& node, std::string_view key, std::string& out) const {
        if (!node.is_string() || node.as_string()->get().empty()) return error(node, key, "must be a non-empty string");
        out = **node.as_string();
        return {};
    }

    Expected<void> flag(const toml::node& node, std::string_view key, bool& out) const {
        if (!node.is_boolean()) return error(node, key, "must be true or false");
        out = **node.as_boolean();
        return {};
    }

    Expected<void> words(const toml::node& node, std::string_view key, std::vector<std::string>& out) const {
        const auto* list = node.as_array();
        if (!list) return error(node, key, "must be a list of strings: [\"a\", \"b\"]");
        for (const auto& item : *list) {
            if (!item.is_string() || item.as_string()->get().empty())
                return error(item, key, "must hold only non-empty strings");
            out.push_back(**item.as_string());
        }
        return {};
    }

    Expected<void> bounds(const toml::node& node, std::vector<std::string>& out) const {
        if (auto ok = words(node, "bounds", out); !ok) return ok;
        for (const auto& b : out)
            if (b != "bandwidth" && b != "compute")
                return error(node, "bounds", fmt::format("holds \"{}\"; a bound is \"bandwidth\" or \"compute\"", b));
        return {};
    }
};

// A value as TOML writes it (toml++'s formatter: quoting and escaping are its business).
template <typename Node>
std::string toml_text(const Node& node) {
    std::ostringstream out;
    out << toml::toml_formatter{node};
    return out.str();
}

std::string toml_string(const std::string& value) { return toml_text(toml::value<std::string>(value)); }

std::string toml_list(const std::vector<std::string>& values) {
    toml::array list;
    for (const auto& v : values) list.push_back(v);
    return toml_text(list);
}

}  // namespace

Expected<KnowledgeNote> parse_note(const std::string& text, const std::string& id, const std::string& path) {
    auto split = split_note(text, path);
    if (!split) return split.error();
    auto header = parse_toml(split->header, path);
    if (!header) return header.error();
    KnowledgeNote note;
    note.id = id;
    note.path = path;
    if (auto ok = HeaderReader(path).read(*header, note); !ok) return ok.error();
    note.text = split->body;
    while (!note.text.empty() && (note.text.back() == '\n' || note.text.back() == ' ')) note.text.pop_back();
    const size_t first = note.text.find_first_not_of("\n ");
    note.text = first == std::string::npos ? std::string() : note.text.substr(first);
    if (note.text.empty()) return make_error(fmt::format("{}:{}: the note has no text after its header", path, split->body_line));
    return note;
}

std::string note_file_text(const KnowledgeNote& note) {
    std::string out = fmt::format("+++\ntitle = {}\n", toml_string(note.title));
    const auto list = [&](const char* key, const std::vector<std::string>& values) {
        if (!values.empty()) out += fmt::format("{} = {}\n", key, toml_list(values));
    };
    list("tasks", note.scope.tasks);
    list("categories", note.scope.categories);
    list("regimes", note.scope.regimes);
    list("bounds", note.scope.bounds);
    list("languages", note.scope.languages);
    list("devices", note.scope.devices);
    if (!note.source.empty()) out += fmt::format("source = {}\n", toml_string(note.source));
    if (note.draft) out += "draft = true\n";
    out += "+++\n" + note.text + "\n";
    return out;
}

}  // namespace kevo
