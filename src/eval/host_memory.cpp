// See host_memory.hpp.
#include "eval/host_memory.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <string>

namespace kevo {

uint64_t available_host_bytes() {
    if (const char* fixed = std::getenv("KEVO_HOST_MEMORY_BYTES"); fixed && *fixed) return std::strtoull(fixed, nullptr, 10);
    std::ifstream meminfo("/proc/meminfo");
    std::string key;
    uint64_t kib = 0;
    std::string unit;
    while (meminfo >> key >> kib >> unit)
        if (key == "MemAvailable:") return kib * 1024;
    const long pages = ::sysconf(_SC_AVPHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
    return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : UINT64_MAX;
}

}  // namespace kevo
