// See text_table.hpp.
#include "core/text_table.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cassert>

namespace kevo {

void TextTable::add_row(std::vector<std::string> cells) {
    assert(cells.size() == columns_.size());
    rows_.push_back(std::move(cells));
}

std::string TextTable::render() const {
    std::vector<size_t> widths;
    for (const auto& c : columns_) widths.push_back(c.header.size());
    for (const auto& row : rows_)
        for (size_t i = 0; i < row.size(); ++i) widths[i] = std::max(widths[i], row[i].size());
    auto line = [&](auto cell) {
        std::string out;
        for (size_t i = 0; i < columns_.size(); ++i) {
            const std::string& text = cell(i);
            const bool last = i + 1 == columns_.size();
            if (i > 0) out += ' ';
            if (columns_[i].align == Align::right) out += fmt::format("{:>{}}", text, widths[i]);
            else out += last ? text : fmt::format("{:<{}}", text, widths[i]);
        }
        while (!out.empty() && out.back() == ' ') out.pop_back();
        return out + "\n";
    };
    std::string out = line([&](size_t i) -> const std::string& { return columns_[i].header; });
    for (const auto& row : rows_) out += line([&](size_t i) -> const std::string& { return row[i]; });
    return out;
}

std::string wrap_words(const std::string& text, size_t width, const std::string& first_prefix, const std::string& indent) {
    std::string out, line = first_prefix;
    size_t words_on_line = 0;
    size_t at = 0;
    while (at < text.size()) {
        const size_t end = std::min(text.find(' ', at), text.size());
        const std::string word = text.substr(at, end - at);
        at = end + 1;
        if (word.empty()) continue;
        if (words_on_line > 0 && line.size() + 1 + word.size() > width) {
            out += line + "\n";
            line = indent;
            words_on_line = 0;
        }
        line += (words_on_line > 0 ? " " : "") + word;
        ++words_on_line;
    }
    return out + line + "\n";
}

}  // namespace kevo
