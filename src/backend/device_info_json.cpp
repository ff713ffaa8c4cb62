// See device_info_json.hpp.
#include "backend/device_info_json.hpp"

namespace kevo {

nlohmann::json to_json(const DeviceInfo& d) {
    return {{"backend", d.backend}, {"index", d.index}, {"name", d.name}, {"vendor", d.vendor},
            {"driver", d.driver}, {"arch", d.arch}, {"is_cpu", d.is_cpu}, {"compute_units", d.compute_units},
            {"global_mem_bytes", d.global_mem_bytes}, {"max_alloc_bytes", d.max_alloc_bytes},
            {"l2_bytes", d.l2_bytes}, {"shared_mem_per_block", d.shared_mem_per_block},
            {"max_threads_per_block", d.max_threads_per_block}, {"max_block", d.max_block},
            {"max_grid", d.max_grid}, {"clock_mhz", d.clock_mhz}};
}

DeviceInfo device_info_from_json(const nlohmann::json& j) {
    DeviceInfo d;
    d.backend = j.value("backend", "");
    d.index = j.value("index", 0);
    d.name = j.value("name", "");
    d.vendor = j.value("vendor", "");
    d.driver = j.value("driver", "");
    d.arch = j.value("arch", "");
    d.is_cpu = j.value("is_cpu", false);
    d.compute_units = j.value("compute_units", 0);
    d.global_mem_bytes = j.value("global_mem_bytes", uint64_t{0});
    d.max_alloc_bytes = j.value("max_alloc_bytes", uint64_t{0});
    d.l2_bytes = j.value("l2_bytes", uint64_t{0});
    d.shared_mem_per_block = j.value("shared_mem_per_block", uint64_t{0});
    d.max_threads_per_block = j.value("max_threads_per_block", 0u);
    if (j.contains("max_block")) d.max_block = j["max_block"].get<std::array<uint64_t, 3>>();
    if (j.contains("max_grid")) d.max_grid = j["max_grid"].get<std::array<uint64_t, 3>>();
    d.clock_mhz = j.value("clock_mhz", 0);
    return d;
}

}  // namespace kevo
