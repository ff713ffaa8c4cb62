// kevo's version: printed by `kevo --version` and part of every saved result's identity (a bench
// state file from another version is re-measured, not reused).
#pragma once

namespace kevo {

inline constexpr const char* kKevoVersion = "0.1.0";

}  // namespace kevo
