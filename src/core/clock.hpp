// Wall-clock time stamps for records and reports.
#pragma once

#include <string>

namespace kevo {

// Now in UTC, ISO 8601 to the second: "2026-11-30T09:44:33Z".
std::string utc_now_iso8601();

// A unique id for a record: the prefix, the UTC time and a random suffix ("s20261130-094433-3f2a").
std::string timestamped_id(char prefix);

}  // namespace kevo
