// Options and output helpers shared by the subcommands (CLI.md "Common options").
#pragma once

#include <optional>
#include <string>
#include <vector>

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
// --max-repeat and --noise-cv: the noise rule of an evaluation (kevo eval, and every evaluation of kevo run).
void add_noise_options(CLI::App& cmd, int& max_repeat, double& noise_cv);

// The backend for a candidate file: under --backend auto its extension decides (.cu: cuda, .cl:
// opencl); an explicit backend whose language does not match the extension is a usage error (a
// CUDA file is not an OpenCL compile error). Files with other extensions follow --backend.
Expected<std::string> backend_for_file(const std::string& requested, const std::string& file);
// The registered language a file's suffix names ("triton" for a .py file); empty when none does.
std::string language_of_file(const std::string& file);
// The registered languages for a help text or an error: "cuda (.cu), opencl (.cl), triton (.py)".
std::string language_choices();

// Resolves --profile's default: small on a CPU device, large on a GPU.
std::string resolve_profile(const std::string& requested, const DeviceInfo& device);

// Human text goes to stderr when --json is set, else to stdout.
void say(bool json, const std::string& text);
void print_json(const nlohmann::json& doc);
// --json was given: an error then also prints one JSON document on stdout,
// {"error": {"message": ..., "exit_status": 2}}, unless a document was printed already.
void set_json_mode(bool on);
// Prints "kevo: <message>" on stderr (and the JSON error document in JSON mode); returns kExitUsage.
int fail(const std::string& message);
int fail(const std::string& message, int exit_status);
// fail(), with the signal's exit status (128 + its number) when Ctrl-C or SIGTERM caused the error:
// an interrupted `--json` command still prints one document ({"error": ...}) and stops as the
// signal would. Commands that call it install the interrupt handlers first.
int fail_unless_interrupted(const std::string& message);

// A CLI11 check that a number is finite and within [lo, hi] (CLI::Range lets NaN through).
CLI::Validator finite_range(double lo, double hi);
// A CLI11 check that a value is a whole number within [lo, hi]; its message names the value and the
// accepted range ("'abc' is not a whole number; accepted: 1 to 10000"; hi = INT_MAX reads "or more").
CLI::Validator whole_range(long long lo, long long hi);

// The known word nearest to `word` by edit distance, when it is near enough to be a likely typo.
std::optional<std::string> nearest_word(const std::string& word, const std::vector<std::string>& known);

std::string format_bytes(double bytes);

}  // namespace kevo::cli
