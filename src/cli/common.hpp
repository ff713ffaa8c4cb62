// Options and output helpers shared by the subcommands (CLI.md "Common options").
#pragma once

#include <string>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "core/expected.hpp"

namespace kevo::cli {

// Exit statuses (CLI.md): 0 success, 1 the candidate was rejected, 2 usage or environment error.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRejected = 1;
inline constexpr int kExitUsage = 2;

struct DeviceOptions {
    std::string backend = "auto";
    int device = 0;
};

void add_device_options(CLI::App& cmd, DeviceOptions& options);
void add_profile_option(CLI::App& cmd, std::string& profile);
void add_json_option(CLI::App& cmd, bool& json);

// Resolves --profile's default: small on a CPU device, large on a GPU.
std::string resolve_profile(const std::string& requested, const DeviceInfo& device);

// Human text goes to stderr when --json is set, else to stdout.
void say(bool json, const std::string& text);
void print_json(const nlohmann::json& doc);
// Prints "kevo: <message>" on stderr and returns kExitUsage.
int fail(const std::string& message);

std::string format_bytes(double bytes);

}  // namespace kevo::cli
