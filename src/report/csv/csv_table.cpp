// See csv_table.hpp.
#include "report/csv/csv_table.hpp"

#include <cassert>
#include <cmath>

#include <fmt/format.h>

#include "core/files.hpp"

namespace kevo {

namespace {
std::string line(const std::vector<std::string>& fields) {
    std::string out;
    for (size_t i = 0; i < fields.size(); ++i) out += (i ? "," : "") + csv_field(fields[i]);
    return out + "\r\n";
}
}  // namespace

void CsvTable::add_row(std::vector<std::string> fields) {
    assert(fields.size() == header_.size() && "one field per column");
    rows_.push_back(std::move(fields));
}

std::string CsvTable::render() const {
    std::string out = line(header_);
    for (const auto& r : rows_) out += line(r);
    return out;
}

Expected<void> CsvTable::write(const std::string& path) const {
    return write_file_atomic(path, render());
}

std::string csv_field(const std::string& value) {
    if (value.find_first_of(",\"\r\n") == std::string::npos) return value;
    std::string out = "\"";
    for (char c : value) {
        if (c == '"') out += '"';
        out += c;
    }
    return out + "\"";
}

std::string csv_number(double value) { return std::isfinite(value) ? fmt::format("{}", value) : std::string(); }
std::string csv_number(const std::optional<double>& value) { return value ? csv_number(*value) : std::string(); }
std::string csv_bool(bool value) { return value ? "true" : "false"; }

}  // namespace kevo
