// Test helpers that read a page of `kevo report --html` the way a reader's eye does: the text of a
// results-table cell, the markup of one figure, how often a mark occurs.
#pragma once

#include <string>

#include <fmt/format.h>

namespace kevo::test {

// The text of the `col` cell of the results row for (task, model).
inline std::string table_cell(const std::string& page, const std::string& task, const std::string& model_escaped,
                       const std::string& col) {
    const std::string row_start = fmt::format("<tr class=\"group\" data-task=\"{}\" data-model=\"{}\"", task, model_escaped);
    const size_t row = page.find(row_start);
    if (row == std::string::npos) return "(no row)";
    const size_t end = page.find("</tr>", row);
    const std::string key = fmt::format("<td data-col=\"{}\">", col);
    const size_t at = page.find(key, row);
    if (at == std::string::npos || at > end) return "(no cell)";
    const size_t from = at + key.size();
    return page.substr(from, page.find("</td>", from) - from);
}

// The svg of the figure with this id.
inline std::string figure_svg(const std::string& page, const std::string& id) {
    const size_t at = page.find("<figure id=\"fig-" + id + "\">");
    if (at == std::string::npos) return {};
    return page.substr(at, page.find("</figure>", at) - at);
}

inline size_t count(const std::string& text, const std::string& what) {
    size_t n = 0;
    for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + what.size())) ++n;
    return n;
}

}  // namespace kevo::test
