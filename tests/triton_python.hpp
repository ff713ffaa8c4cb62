// The pinned Triton for the tests: scripts/install-deps.sh puts it in .venv-triton (KEVO_TRITON_PYTHON
// may name another Python). A test that needs it skips where it is not installed, except in CI
// (CI=true), where it fails: the setup script installs it there.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

namespace kevo::test {

inline std::optional<std::string> find_triton_python() {
    if (const char* v = std::getenv("KEVO_TRITON_PYTHON"); v && *v) return std::string(v);
    const std::string venv = std::string(KEVO_SOURCE_DIR) + "/.venv-triton/bin/python";
    if (::access(venv.c_str(), X_OK) == 0) return venv;
    return std::nullopt;
}

}  // namespace kevo::test

// Sets KEVO_TRITON_PYTHON for the calling test (kevo and its children read it), or skips / fails.
#define KEVO_REQUIRE_TRITON()                                                                                   \
    const auto kevo_triton_python = ::kevo::test::find_triton_python();                                         \
    if (!kevo_triton_python) {                                                                                  \
        const char* ci = std::getenv("CI");                                                                     \
        if (ci && std::string(ci) == "true")                                                                    \
            FAIL() << "CI=true but Triton 3.6.0 is not installed (scripts/install-deps.sh puts it in "          \
                      ".venv-triton; KEVO_TRITON_PYTHON may name another Python)";                              \
        GTEST_SKIP() << "Triton 3.6.0 is not installed (scripts/install-deps.sh puts it in .venv-triton)";      \
    }                                                                                                           \
    const ::kevo::test::ScopedEnv kevo_triton_env("KEVO_TRITON_PYTHON", *kevo_triton_python)
