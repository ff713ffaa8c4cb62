// kevo's version, in one place: `kevo --version` and the User-Agent of HTTP requests.
#pragma once

namespace kevo {

inline constexpr const char* kVersion = "0.1.0";

}  // namespace kevo
