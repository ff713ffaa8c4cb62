// Test helper: parse `// kevo:` directives expecting success (parse_ok) or a refusal (parse_error,
// its message; "" when the source was accepted, so the EXPECTs that follow fail readably).
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "eval/directives.hpp"

namespace kevo::test {

inline Directives parse_ok(std::string_view source) {
    auto parsed = parse_directives(source);
    EXPECT_TRUE(parsed.has_value()) << (parsed ? "" : parsed.error().message);
    return parsed ? *parsed : Directives{};
}

inline std::string parse_error(std::string_view source) {
    auto parsed = parse_directives(source);
    EXPECT_FALSE(parsed.has_value()) << "accepted:\n" << source;
    return parsed ? std::string() : parsed.error().message;
}

}  // namespace kevo::test
