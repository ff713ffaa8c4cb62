// JSON form of DeviceInfo (worker protocol, `kevo devices --json`, stored runs).
#pragma once

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"

namespace kevo {

nlohmann::json to_json(const DeviceInfo& d);
DeviceInfo device_info_from_json(const nlohmann::json& j);

}  // namespace kevo
