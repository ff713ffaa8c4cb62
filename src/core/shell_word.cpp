// See shell_word.hpp.
#include "core/shell_word.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

namespace kevo {

std::string shell_word(const std::string& word) {
    const bool plain = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("-_./:=+,@%").find(c) != std::string_view::npos;
    });
    if (plain) return word;
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

std::string shell_command(const std::vector<std::string>& words) {
    std::string out;
    for (const auto& w : words) out += (out.empty() ? "" : " ") + shell_word(w);
    return out;
}

}  // namespace kevo
