// Test helpers for the `kevo run` tests: a path in a per-process scratch folder, the OpenCL device
// that is a CPU (PoCL), for tests whose timing margins were measured there (a GPU machine may
// register PoCL after the GPU's own OpenCL platform), and the exit status a run's summary implies.
#pragma once

#include <unistd.h>

#include <filesystem>
#include <optional>
#include <string>

#include "kevo_process.hpp"

namespace kevo::test {

// `name` in the folder `<temp>/<folder>_<pid>`, which is created.
inline std::string temp_path(const std::string& folder, const std::string& name) {
    const auto dir = std::filesystem::path(::testing::TempDir()) / (folder + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

inline std::optional<int> opencl_cpu_device() {
    const auto doc = run_kevo({"devices", "--json"}).json();
    if (!doc.is_object()) return std::nullopt;
    for (const auto& backend : doc.value("backends", nlohmann::json::array()))
        if (backend.value("name", "") == "opencl")
            for (const auto& device : backend.value("devices", nlohmann::json::array()))
                if (device.value("is_cpu", false)) return device.value("index", 0);
    return std::nullopt;
}

// `kevo run` exits 1 when the search's best failed the gate, else 0 (docs/cli.md).
inline int run_exit_status(const nlohmann::json& summary) {
    return summary.is_object() && summary.value("outcome", "") == "best_failed_gate" ? 1 : 0;
}

}  // namespace kevo::test
