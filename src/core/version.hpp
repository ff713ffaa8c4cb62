// kevo's version, in one place: `kevo --version`, the User-Agent of HTTP requests, and part of
// every saved result's identity (a bench state file from another version is re-measured, not reused).
#pragma once

namespace kevo {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace kevo
