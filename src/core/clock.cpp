// Wall-clock time stamps (see clock.hpp).
#include "core/clock.hpp"

#include <ctime>
#include <string_view>

#include <fmt/format.h>

#include "core/rng.hpp"

namespace kevo {

std::string utc_now_iso8601() {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char text[32];
    const size_t n = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &utc);
    return std::string(text, n);
}

std::string timestamped_id(char prefix) {
    const std::time_t now = std::time(nullptr);
    std::tm utc{};
    gmtime_r(&now, &utc);
    char stamp[32];
    const size_t n = std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
    return fmt::format("{}{}-{:04x}", prefix, std::string_view(stamp, n), rng::fresh_seed() & 0xFFFF);
}

}  // namespace kevo
