// The pinned Triton for the tests: scripts/install-deps.sh puts it in .venv-triton (KEVO_TRITON_PYTHON
// may name another Python). A test that needs it skips where it is not installed, except in CI
// (CI=true), where it fails: the setup script installs it there.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <optional>
#include <string>

#include "setup_installed.hpp"

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
    if (!kevo_triton_python)                                                                                    \
        KEVO_SKIP_UNLESS_CI("Triton 3.6.0 is not installed (scripts/install-deps.sh puts it in .venv-triton; "   \
                            "KEVO_TRITON_PYTHON may name another Python)");                                     \
    const ::kevo::test::ScopedEnv kevo_triton_env("KEVO_TRITON_PYTHON", *kevo_triton_python)
