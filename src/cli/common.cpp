// See common.hpp.
#include "cli/common.hpp"

#include <cstdio>
#include <iostream>

#include <fmt/format.h>

namespace kevo::cli {

void add_device_options(CLI::App& cmd, DeviceOptions& options) {
    cmd.add_option("--backend", options.backend, "cuda, opencl or auto (CUDA if a GPU is found, else OpenCL)")
        ->check(CLI::IsMember({"auto", "cuda", "opencl"}));
    cmd.add_option("--device", options.device, "device index within the backend")->check(CLI::NonNegativeNumber);
}

void add_profile_option(CLI::App& cmd, std::string& profile) {
    cmd.add_option("--profile", profile, "size profile: small, paper or large (default: small on a CPU, large on a GPU)")
        ->check(CLI::IsMember({"small", "paper", "large"}));
}

void add_json_option(CLI::App& cmd, bool& json) {
    cmd.add_flag("--json", json, "print exactly one JSON document on stdout; human text goes to stderr");
}

std::string resolve_profile(const std::string& requested, const DeviceInfo& device) {
    if (!requested.empty()) return requested;
    return device.is_cpu ? "small" : "large";
}

void say(bool json, const std::string& text) {
    std::FILE* out = json ? stderr : stdout;
    std::fputs(text.c_str(), out);
    if (!text.empty() && text.back() != '\n') std::fputc('\n', out);
    std::fflush(out);
}

void print_json(const nlohmann::json& doc) {
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

int fail(const std::string& message) {
    std::fprintf(stderr, "kevo: %s\n", message.c_str());
    return kExitUsage;
}

std::string format_bytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
    return fmt::format("{:.{}f} {}", bytes, u == 0 ? 0 : 1, units[u]);
}

}  // namespace kevo::cli
