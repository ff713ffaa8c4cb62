// What scripts/install-deps.sh installs (LiteLLM, Triton) is required in CI: a test that needs one
// skips itself where it is missing, except under CI=true, where it fails.
#pragma once

#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

namespace kevo::test {
inline bool in_ci() {
    const char* ci = std::getenv("CI");
    return ci && std::string(ci) == "true";
}
}  // namespace kevo::test

// Fails the calling test under CI=true, else skips it; `why` says what is missing and how to get it.
#define KEVO_SKIP_UNLESS_CI(why)                                           \
    do {                                                                   \
        if (::kevo::test::in_ci()) FAIL() << "CI=true but " << (why);      \
        GTEST_SKIP() << (why);                                             \
    } while (0)
