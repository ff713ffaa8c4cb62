// A plain-text table whose column widths come from its content, so that long task names, device
// names, size labels and numbers never push a row out of line.
#pragma once

#include <string>
#include <vector>

namespace kevo {

class TextTable {
public:
    enum class Align { left, right };
    struct Column {
        std::string header;
        Align align = Align::left;
    };

    explicit TextTable(std::vector<Column> columns) : columns_(std::move(columns)) {}
    // One cell per column (asserted).
    void add_row(std::vector<std::string> cells);
    // Header and rows, columns one space apart; the last column is not padded.
    std::string render() const;

private:
    std::vector<Column> columns_;
    std::vector<std::vector<std::string>> rows_;
};

// `text` broken at spaces into lines of at most `width` characters (a longer word stays whole), the
// first line starting with `first_prefix` and the rest with `indent`; each line ends in "\n".
std::string wrap_words(const std::string& text, size_t width, const std::string& first_prefix, const std::string& indent);

}  // namespace kevo
