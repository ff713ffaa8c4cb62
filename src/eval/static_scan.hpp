// The cheapest gate: refuse what must never reach the compiler (file reads through #include,
// dynamic parallelism, oversized sources) and flag what deserves a second look (timer reads,
// mutable device globals). Works on the source text only.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"

namespace kevo {

inline constexpr size_t kMaxSourceBytes = 256 * 1024;

struct ScanResult {
    bool accepted = true;
    std::string reason;  // why it was refused, naming the line
    int line = 0;
    std::vector<std::string> warnings;
};

ScanResult scan_source(std::string_view source, Language language);

// Headers a candidate may include, per language (everything else is refused): the language's scan rules.
const std::vector<std::string>& include_allow_list(Language language);

}  // namespace kevo
