// TOML text to a toml++ table, with a syntax error as an Error naming the file, line and column
// (toml++ throws). Included only by the files compiled against toml++ (the study and weights files).
#pragma once

#include <string>

#include <fmt/format.h>
#include <toml++/toml.h>

#include "core/expected.hpp"

namespace kevo {

inline Expected<toml::table> parse_toml(const std::string& text, const std::string& path) {
    try {
        return toml::parse(text, path);
    } catch (const toml::parse_error& e) {
        return make_error(fmt::format("{}:{}:{}: not valid TOML: {}", path, e.source().begin.line, e.source().begin.column,
                                      e.description()));
    }
}

}  // namespace kevo
