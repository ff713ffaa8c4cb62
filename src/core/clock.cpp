// Wall-clock time stamps (see clock.hpp).
#include "core/clock.hpp"

#include <ctime>

namespace kevo {

std::string utc_now_iso8601() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(text, n);
}

}  // namespace kevo
