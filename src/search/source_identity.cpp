// See source_identity.hpp.
#include "search/source_identity.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "core/hash.hpp"
#include "eval/directives.hpp"
#include "search/knob_defaults.hpp"

namespace kevo {
namespace {

bool word_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

// A line comment (`// ...`, `# ...`) that is a kevo directive (`// kevo: ...`), which must survive
// normalisation.
bool is_directive_comment(std::string_view comment, std::string_view opener) {
    comment.remove_prefix(opener.size());
    while (!comment.empty() && std::isspace(static_cast<unsigned char>(comment.front()))) comment.remove_prefix(1);
    return comment.starts_with("kevo:");
}

// Appends `c` to the line being built, dropping whitespace that separates no two word characters.
// Where indentation is syntax (Python), a line's leading whitespace is kept as written.
class LineBuilder {
public:
    explicit LineBuilder(bool keep_indentation) : keep_indentation_(keep_indentation) {}

    void put(char c) {
        if (std::isspace(static_cast<unsigned char>(c))) {
            if (keep_indentation_ && line_.empty()) indentation_ += c;
            pending_space_ = true;
            return;
        }
        begin_line();
        if (pending_space_ && !line_.empty() && word_char(line_.back()) && word_char(c)) line_ += ' ';
        pending_space_ = false;
        line_ += c;
    }
    void put_verbatim(std::string_view text) {
        begin_line();
        if (pending_space_ && !line_.empty()) line_ += ' ';
        pending_space_ = false;
        line_.append(text);
    }
    // Ends the line: kept unless blank (a line of a comment only is blank).
    void end(std::string& out) {
        if (!line_.empty()) out += line_ + '\n';
        line_.clear();
        indentation_.clear();
        pending_space_ = false;
    }

private:
    void begin_line() {
        if (!line_.empty() || indentation_.empty()) return;
        line_ = indentation_;
        pending_space_ = false;
    }

    bool keep_indentation_;
    std::string line_, indentation_;
    bool pending_space_ = false;
};

}  // namespace

std::string normalised_source(const std::string& source, Language language) {
    const std::string_view line_comment = language->directive_comment;
    const bool block_comments = language->c_family;  // /* ... */
    std::string out;
    LineBuilder line(!language->c_family);
    const size_t n = source.size();
    for (size_t i = 0; i < n; ++i) {
        const char c = source[i];
        if (c == '\n') {
            line.end(out);
        } else if (std::string_view(source).substr(i).starts_with(line_comment)) {
            size_t end = source.find('\n', i);
            if (end == std::string::npos) end = n;
            std::string_view comment(source.data() + i, end - i);
            while (!comment.empty() && std::isspace(static_cast<unsigned char>(comment.back()))) comment.remove_suffix(1);
            if (is_directive_comment(comment, line_comment)) line.put_verbatim(comment);
            i = end - 1;  // the newline, if any, ends the line next
        } else if (block_comments && c == '/' && i + 1 < n && source[i + 1] == '*') {
            const size_t end = source.find("*/", i + 2);
            i = end == std::string::npos ? n : end + 1;
            line.put(' ');  // a block comment separates tokens like a space
        } else if (c == '"' || c == '\'') {
            // A literal is kept as written, escapes included.
            size_t j = i + 1;
            while (j < n && source[j] != c && source[j] != '\n') j += source[j] == '\\' ? 2 : 1;
            j = std::min(j, n - 1);
            line.put_verbatim(std::string_view(source.data() + i, j - i + 1));
            i = j;
        } else {
            line.put(c);
        }
    }
    line.end(out);
    return out;
}

std::string candidate_hash(const std::string& source, const std::map<std::string, std::string>& defines,
                           Language language) {
    std::string text = normalised_source(source, language);
    std::map<std::string, std::string> in_force = defines;
    if (auto directives = parse_directives(source, language->directive_comment))
        if (auto values = knob_values(*directives, defines)) in_force = std::move(*values);
    for (const auto& [k, v] : in_force) text += "\n-D" + k + "=" + v;
    return hex64(hash64(text));
}

}  // namespace kevo
