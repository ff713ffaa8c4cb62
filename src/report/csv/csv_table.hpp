// A flat table written as RFC 4180 CSV: a header row, then one line per row, CRLF line ends, a
// field quoted when it holds a comma, a quote, CR or LF (its quotes doubled). Numbers are written
// in their shortest exact form; an absent value is an empty field.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/expected.hpp"

namespace kevo {

class CsvTable {
public:
    explicit CsvTable(std::vector<std::string> header) : header_(std::move(header)) {}

    // One field per header column (asserted).
    void add_row(std::vector<std::string> fields);
    std::string render() const;
    Expected<void> write(const std::string& path) const;
    size_t rows() const { return rows_.size(); }

private:
    std::vector<std::string> header_;
    std::vector<std::vector<std::string>> rows_;
};

std::string csv_field(const std::string& value);
std::string csv_number(double value);  // empty when not finite
std::string csv_number(const std::optional<double>& value);
std::string csv_bool(bool value);      // "true" / "false"

}  // namespace kevo
