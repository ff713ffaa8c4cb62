// See common.hpp.
#include "cli/common.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <charconv>
#include <filesystem>
#include <limits>
#include <iostream>

#include <fmt/format.h>

#include "backend/registry.hpp"
#include "core/interrupt.hpp"
#include "task/task.hpp"

namespace kevo::cli {

void add_device_options(CLI::App& cmd, DeviceOptions& options) {
    cmd.add_option("--backend", options.backend, "cuda, opencl or auto (CUDA if a GPU is found, else OpenCL)")
        ->check(CLI::IsMember(backend_choices()));
    cmd.add_option("--device", options.device, "device index within the backend")->check(whole_range(0, std::numeric_limits<int>::max()));
}

void add_profile_option(CLI::App& cmd, std::string& profile) {
    cmd.add_option("--profile", profile, "size profile: small, paper, large, or trace (the ML pack: production shapes weighted by call count) (default: small on a CPU, large on a GPU)")
        ->check(CLI::IsMember(kProfileNames));
}

void add_json_option(CLI::App& cmd, bool& json) {
    cmd.add_flag("--json", json, "print exactly one JSON document on stdout; human text goes to stderr");
}

void add_noise_options(CLI::App& cmd, int& max_repeat, double& noise_cv) {
    cmd.add_option("--max-repeat", max_repeat,
                   "timed runs per size at most: while a size's cv is above --noise-cv, rounds of --repeat runs are "
                   "added up to this (and 2 s)")
        ->capture_default_str()
        ->check(whole_range(1, 100000));
    cmd.add_option("--noise-cv", noise_cv, "a size whose cv stays above this is reported noisy")
        ->capture_default_str()
        ->check(finite_range(0.0, 10.0));
}

Expected<std::string> backend_for_file(const std::string& requested, const std::string& file) {
    const std::string ext = std::filesystem::path(file).extension().string();
    const std::string by_suffix = ext.size() > 1 ? backend_for_suffix(ext.substr(1)) : std::string();
    if (by_suffix.empty()) return resolve_backend_name(requested);
    if (requested == "auto") return by_suffix;
    auto backend = resolve_backend_name(requested);
    if (!backend) return backend;
    if (*backend != by_suffix) {
        auto b = make_backend(*backend);
        const std::string file_language = language_name(language_for_suffix(ext.substr(1)));
        const char* article = file_language.front() == 'O' ? "an" : "a";  // "an OpenCL C file", "a CUDA C++ file"
        return make_error(fmt::format("{} is {} {} file ({}), but --backend {} compiles {} (.{}); use --backend {} or a "
                                      ".{} file", file, article, file_language, ext,
                                      *backend, language_name(b->language()), language_suffix(b->language()),
                                      by_suffix, language_suffix(b->language())));
    }
    return backend;
}

std::string language_choices() {
    std::string names;
    for (const Language l : languages()) names += (names.empty() ? "" : ", ") + l.name() + " (." + l.suffix() + ")";
    return names;
}

std::string language_of_file(const std::string& file) {
    const std::string ext = std::filesystem::path(file).extension().string();
    const Language language = ext.size() > 1 ? language_for_suffix(ext.substr(1)) : Language();
    return language ? language.name() : std::string();
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

namespace {
bool json_mode = false;
bool json_printed = false;
}  // namespace

void print_json(const nlohmann::json& doc) {
    std::cout << doc.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
    json_printed = true;
}

void set_json_mode(bool on) { json_mode = on; }

int fail(const std::string& message, int exit_status) {
    std::fprintf(stderr, "kevo: %s\n", message.c_str());
    if (json_mode && !json_printed) print_json({{"error", {{"message", message}, {"exit_status", exit_status}}}});
    return exit_status;
}

int fail(const std::string& message) { return fail(message, kExitUsage); }

int fail_unless_interrupted(const std::string& message) {
    return interrupt_requested() ? fail(message, 128 + interrupt_signal()) : fail(message);
}

CLI::Validator whole_range(long long lo, long long hi) {
    const std::string accepted = hi >= std::numeric_limits<int>::max() ? fmt::format("{} or more", lo)
                                                                        : fmt::format("{} to {}", lo, hi);
    return CLI::Validator(
        [lo, hi, accepted](std::string& text) -> std::string {
            long long v = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
            if (ec == std::errc::result_out_of_range || (ec == std::errc() && (v < lo || v > hi)))
                return fmt::format("{} is out of range; accepted: {}", text, accepted);
            if (ec != std::errc() || end != text.data() + text.size())
                return fmt::format("'{}' is not a whole number; accepted: {}", text, accepted);
            return {};
        },
        fmt::format("INT in {}", accepted));
}

CLI::Validator finite_range(double lo, double hi) {
    return CLI::Validator(
        [lo, hi](std::string& text) -> std::string {
            double v = 0;
            try {
                size_t used = 0;
                v = std::stod(text, &used);
                if (used != text.size()) return fmt::format("'{}' is not a number", text);
            } catch (const std::exception&) {
                return fmt::format("'{}' is not a number", text);
            }
            if (!std::isfinite(v)) return fmt::format("'{}' is not a finite number", text);
            if (v < lo || v > hi) return fmt::format("{} is outside [{}, {}]", text, lo, hi);
            return {};
        },
        fmt::format("FINITE in [{}, {}]", lo, hi));
}

std::optional<std::string> nearest_word(const std::string& word, const std::vector<std::string>& known) {
    auto distance = [](const std::string& a, const std::string& b) {
        std::vector<size_t> row(b.size() + 1);
        for (size_t j = 0; j <= b.size(); ++j) row[j] = j;
        for (size_t i = 1; i <= a.size(); ++i) {
            size_t diagonal = row[0];
            row[0] = i;
            for (size_t j = 1; j <= b.size(); ++j) {
                const size_t up = row[j];
                row[j] = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] == b[j - 1] ? 0 : 1)});
                diagonal = up;
            }
        }
        return row[b.size()];
    };
    std::optional<std::string> best;
    size_t best_distance = 0;
    for (const auto& k : known) {
        const size_t d = distance(word, k);
        if (!best || d < best_distance) best = k, best_distance = d;
    }
    // A typo is a few edits away; anything further is a different word.
    if (!best || best_distance > std::max<size_t>(2, word.size() / 3)) return std::nullopt;
    return best;
}

std::string format_bytes(double bytes) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) bytes /= 1024, ++u;
    return fmt::format("{:.{}f} {}", bytes, u == 0 ? 0 : 1, units[u]);
}

}  // namespace kevo::cli
