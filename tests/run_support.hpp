// Test helpers for the `kevo run` tests: a path in a per-process scratch folder, the OpenCL device
// that is a CPU (PoCL), for tests whose timing margins were measured there (a GPU machine may
// register PoCL after the GPU's own OpenCL platform), the exit status a run's summary implies, and
// waiting for a run in a store to reach an iteration.
#pragma once

#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <optional>
#include <string>
#include <thread>

#include "kevo_process.hpp"
#include "store/store.hpp"

namespace kevo::test {

// `name` in the folder `<temp>/<folder>_<pid>`, which is created.
inline std::string temp_path(const std::string& folder, const std::string& name) {
    const auto dir = std::filesystem::path(::testing::TempDir()) / (folder + "_" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    return (dir / name).string();
}

// A study file `file` of the tuner on saxpy at the small profile over PoCL, one cell per seed
// 1..`seeds`, `iterations` each, one run at a time: the study of the sweep, pool, MPI and SLURM tests.
inline std::string write_saxpy_tuner_study(const std::string& file, const std::string& name, int seeds, int iterations) {
    std::string seed_list;
    for (int s = 1; s <= seeds; ++s) seed_list += (s > 1 ? ", " : "") + std::to_string(s);
    std::ofstream(file) << "name = \"" << name << "\"\nprofile = \"small\"\nbackend = \"opencl\"\ntasks = [\"saxpy\"]\n"
                        << "seeds = [" << seed_list << "]\nconcurrency = 1\n[budget]\niterations = " << iterations << "\n"
                        << "[[models]]\nname = \"tuner\"\nproposer = \"tune\"\n";
    return file;
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

// The id of the newest run in `db` once it has recorded `iterations` iterations; empty when it has
// not within `timeout_s`.
inline std::string wait_for_iterations(const std::string& db, int iterations, double timeout_s) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(std::chrono::milliseconds(50));
        auto store = Store::open(db);
        if (!store) continue;
        auto runs = (*store)->list_runs();
        if (runs && !runs->empty() && runs->front().iterations_done >= iterations) return runs->front().run_id;
    }
    return {};
}

}  // namespace kevo::test
