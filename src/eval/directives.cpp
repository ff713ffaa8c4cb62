// Parser and resolver for `// kevo:` launch and tune directives (see directives.hpp).
#include "eval/directives.hpp"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <sstream>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kevo {

namespace {

std::vector<std::string> split(std::string_view text, char sep) {
    std::vector<std::string> parts;
    size_t start = 0;
    while (true) {
        const size_t pos = text.find(sep, start);
        parts.emplace_back(text.substr(start, pos == std::string_view::npos ? std::string_view::npos : pos - start));
        if (pos == std::string_view::npos) break;
        start = pos + 1;
    }
    return parts;
}

bool is_identifier(std::string_view s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    return std::all_of(s.begin(), s.end(), [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

std::optional<uint64_t> parse_positive(std::string_view s) {
    uint64_t v = 0;
    auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc() || ptr != s.data() + s.size() || v == 0) return std::nullopt;
    return v;
}

// A launch value: a positive integer, a knob name, or a product of them ("PT*G", "2*BM*BK"), so that
// a geometry or a shared-memory size that follows from several knobs needs no knob of its own.
bool is_value_term(std::string_view s) {
    const auto factors = split(s, '*');
    return std::all_of(factors.begin(), factors.end(),
                       [](const std::string& f) { return parse_positive(f) || is_identifier(f); });
}

Expected<void> parse_launch(std::istringstream& words, int line, Directives& out) {
    LaunchDirective d;
    d.line = line;
    if (!(words >> d.kernel) || !is_identifier(d.kernel))
        return make_error(fmt::format("line {}: `kevo: launch` needs a kernel name, e.g. `// kevo: launch heat_step block=32,8`", line));
    std::string item;
    while (words >> item) {
        const auto eq = item.find('=');
        if (eq == std::string::npos)
            return make_error(fmt::format("line {}: `{}` is not KEY=VALUE; expected block=, per_thread=, grid= or smem=", line, item));
        const std::string key = item.substr(0, eq);
        if (key == "smem") {
            const std::string value = item.substr(eq + 1);
            if (!is_value_term(value))
                return make_error(fmt::format("line {}: smem value '{}' is not a positive byte count, a knob name or a "
                                              "product of them, e.g. smem=98304 or smem=STAGES*16384", line, value));
            d.smem = value;
            continue;
        }
        auto parts = split(std::string_view(item).substr(eq + 1), ',');
        if (parts.empty() || parts.size() > 3)
            return make_error(fmt::format("line {}: {} takes 1 to 3 comma-separated values", line, key));
        for (const auto& p : parts)
            if (!is_value_term(p))
                return make_error(fmt::format("line {}: {} value '{}' is not a positive integer, a knob name or a product "
                                              "of them (e.g. PT*G)", line, key, p));
        if (key == "block") d.block = parts;
        else if (key == "per_thread") d.per_thread = parts;
        else if (key == "grid") d.grid = parts;
        else return make_error(fmt::format("line {}: unknown launch key '{}'; expected block, per_thread, grid or smem", line, key));
    }
    for (const auto& existing : out.launches)
        if (existing.kernel == d.kernel)
            return make_error(fmt::format("line {}: kernel '{}' already has a launch directive (line {})", line, d.kernel, existing.line));
    out.launches.push_back(std::move(d));
    return {};
}

Expected<void> parse_tune(std::istringstream& words, int line, Directives& out) {
    TuneKnob k;
    k.line = line;
    if (!(words >> k.name) || !is_identifier(k.name))
        return make_error(fmt::format("line {}: `kevo: tune` needs a knob name, e.g. `// kevo: tune TILE 16 32 64`", line));
    std::string value;
    while (words >> value) {
        const bool plain = std::all_of(value.begin(), value.end(), [](char c) {
            return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '-';
        });
        if (!plain) return make_error(fmt::format("line {}: knob {} value '{}' may hold only letters, digits, '_', '.', '-'", line, k.name, value));
        k.values.push_back(value);
    }
    if (k.values.empty()) return make_error(fmt::format("line {}: knob {} lists no values", line, k.name));
    for (const auto& existing : out.knobs)
        if (existing.name == k.name)
            return make_error(fmt::format("line {}: knob {} is declared twice (first on line {})", line, k.name, existing.line));
    out.knobs.push_back(std::move(k));
    return {};
}

// sm_XYa (digits, then 'a'): NVRTC's architecture-specific targets.
bool is_arch_specific(std::string_view arch) {
    if (arch.size() < 6 || !arch.starts_with("sm_") || arch.back() != 'a') return false;
    const auto digits = arch.substr(3, arch.size() - 4);
    return std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(static_cast<unsigned char>(c)); });
}

Expected<void> parse_target(std::istringstream& words, int line, Directives& out) {
    TargetDirective t;
    t.line = line;
    std::string extra;
    if (!(words >> t.arch) || !is_arch_specific(t.arch) || (words >> extra))
        return make_error(fmt::format("line {}: `kevo: target` takes one architecture-specific target, e.g. "
                                      "`// kevo: target sm_90a`", line));
    if (out.target)
        return make_error(fmt::format("line {}: the target is declared twice (first on line {})", line, out.target->line));
    out.target = std::move(t);
    return {};
}

// "sm_90" or "sm_90a" -> "90"; empty when the text is not an sm_ architecture.
std::string arch_digits(std::string_view arch) {
    if (!arch.starts_with("sm_")) return {};
    arch.remove_prefix(3);
    size_t n = 0;
    while (n < arch.size() && std::isdigit(static_cast<unsigned char>(arch[n]))) ++n;
    return std::string(arch.substr(0, n));
}

std::string capability(const std::string& digits) {
    if (digits.size() < 2) return digits;
    return digits.substr(0, digits.size() - 1) + "." + digits.back();
}

// The value of a launch term: each factor's knob value or number, multiplied. `what` names the key
// and kernel ("block of 'hmc_step'") in errors.
Expected<uint64_t> resolve_term(const std::string& text, const std::map<std::string, std::string>& knobs,
                                const std::string& what) {
    constexpr uint64_t kLimit = uint64_t{1} << 40;  // far above any geometry or byte count a device takes
    uint64_t product = 1;
    for (const auto& factor : split(text, '*')) {
        std::string value = factor;
        if (auto it = knobs.find(factor); it != knobs.end()) value = it->second;
        else if (is_identifier(factor))
            return make_error(fmt::format("{} names '{}', which is not a declared knob", what, factor));
        auto number = parse_positive(value);
        if (!number) return make_error(fmt::format("{}: '{}' is not a positive integer", what, value));
        if (*number > kLimit / product) return make_error(fmt::format("{}: '{}' is too large", what, text));
        product *= *number;
    }
    return product;
}

Expected<uint64_t> resolve_bytes(const std::string& text, const std::map<std::string, std::string>& knobs,
                                 const std::string& kernel) {
    return resolve_term(text, knobs, fmt::format("smem of '{}'", kernel));
}

Expected<Dim3> resolve_dim(const std::vector<std::string>& parts, const std::map<std::string, std::string>& knobs,
                           const std::string& kernel, const char* key) {
    uint64_t v[3] = {1, 1, 1};
    for (size_t i = 0; i < parts.size(); ++i) {
        auto value = resolve_term(parts[i], knobs, fmt::format("{} of '{}'", key, kernel));
        if (!value) return value.error();
        v[i] = *value;
    }
    return Dim3{v[0], v[1], v[2]};
}

}  // namespace

Expected<Directives> parse_directives(std::string_view source, std::string_view comment) {
    Directives out;
    std::istringstream lines{std::string(source)};
    std::string text;
    int line = 0;
    while (std::getline(lines, text)) {
        ++line;
        const auto slash = text.find(comment);
        if (slash == std::string::npos) continue;
        auto rest = std::string_view(text).substr(slash + comment.size());
        while (!rest.empty() && std::isspace(static_cast<unsigned char>(rest.front()))) rest.remove_prefix(1);
        if (!rest.starts_with("kevo:")) continue;
        std::istringstream words{std::string(rest.substr(5))};
        std::string verb;
        words >> verb;
        if (verb != "launch" && verb != "tune" && verb != "target") {
            // Prose such as `// kevo: this kernel is naive`. Noted, so that a misspelt directive is seen.
            std::string note = fmt::format("line {}: `// kevo: {}` is not a directive (only `kevo: launch`, `kevo: tune` "
                                           "and `kevo: target` are); read as a comment", line, verb);
            out.notes.push_back(std::move(note));
            continue;
        }
        Expected<void> parsed = verb == "launch" ? parse_launch(words, line, out)
                                : verb == "tune" ? parse_tune(words, line, out)
                                                 : parse_target(words, line, out);
        if (!parsed) return parsed.error();
    }
    return out;
}

Expected<std::map<std::string, std::string>> knob_values(const Directives& d,
                                                         const std::map<std::string, std::string>& overrides) {
    std::map<std::string, std::string> values;
    for (const auto& k : d.knobs) values[k.name] = k.values.front();
    for (const auto& [name, value] : overrides) {
        if (!values.count(name)) {
            std::vector<std::string> declared;
            for (const auto& k : d.knobs) declared.push_back(k.name);
            return make_error(fmt::format("knob '{}' is not declared by the candidate (declared: {})", name,
                                          declared.empty() ? std::string("none") : fmt::format("{}", fmt::join(declared, ", "))));
        }
        values[name] = value;
    }
    return values;
}

Expected<Geometry> resolve_geometry(const Directives& d, const KernelSpec& kernel,
                                    const std::map<std::string, std::string>& knobs) {
    Geometry g;
    g.block = kernel.default_block;
    auto it = std::find_if(d.launches.begin(), d.launches.end(), [&](const auto& l) { return l.kernel == kernel.name; });
    if (it == d.launches.end()) return g;
    if (!it->block.empty()) {
        auto block = resolve_dim(it->block, knobs, kernel.name, "block");
        if (!block) return block.error();
        g.block = *block;
    }
    if (!it->per_thread.empty()) {
        auto per_thread = resolve_dim(it->per_thread, knobs, kernel.name, "per_thread");
        if (!per_thread) return per_thread.error();
        g.per_thread = *per_thread;
    }
    if (!it->grid.empty()) {
        auto grid = resolve_dim(it->grid, knobs, kernel.name, "grid");
        if (!grid) return grid.error();
        g.grid = *grid;
    }
    if (!it->smem.empty()) {
        auto bytes = resolve_bytes(it->smem, knobs, kernel.name);
        if (!bytes) return bytes.error();
        g.dynamic_shared_bytes = *bytes;
    }
    return g;
}

Expected<std::string> resolve_target(const Directives& d, Language language, const std::string& device_arch) {
    if (!language->arch_targets && d.target)
        return make_error(fmt::format("line {}: `kevo: target {}` is CUDA-only; {}", d.target->line, d.target->arch,
                                      language->no_arch_targets_note));
    if (!language->dynamic_shared)
        for (const auto& l : d.launches)
            if (!l.smem.empty())
                return make_error(fmt::format("line {}: smem= is CUDA-only; {}", l.line, language->no_dynamic_shared_note));
    if (!language->arch_targets) return std::string();
    if (!d.target) return std::string();
    const std::string wanted = arch_digits(d.target->arch), have = arch_digits(device_arch);
    if (wanted != have)
        return make_error(fmt::format("line {}: target {} runs only on a device of compute capability {}; this device is "
                                      "{} (compute capability {})", d.target->line, d.target->arch, capability(wanted),
                                      device_arch, have.empty() ? "unknown" : capability(have)));
    return d.target->arch;
}

Dim3 grid_for(const Geometry& g, const Dim3& domain) {
    if (g.grid) return *g.grid;
    auto blocks = [](uint64_t cells, uint64_t per_thread, uint64_t block) {
        const uint64_t threads = (cells + per_thread - 1) / per_thread;
        return std::max<uint64_t>(1, (threads + block - 1) / block);
    };
    return {blocks(domain.x, g.per_thread.x, g.block.x), blocks(domain.y, g.per_thread.y, g.block.y),
            blocks(domain.z, g.per_thread.z, g.block.z)};
}

Expected<void> validate_geometry(const std::string& kernel, const Geometry& g, const DeviceInfo& device,
                                 const KernelAttributes& attributes) {
    const Dim3 block = g.threads.value_or(g.block);  // the threads launched, not a precompiled kernel's tile
    const uint64_t threads = block.volume();
    if (device.max_threads_per_block && threads > device.max_threads_per_block)
        return make_error(fmt::format("block {} of '{}' has {} threads; the device allows at most {}",
                                      describe(block, 3), kernel, threads, device.max_threads_per_block));
    if (attributes.max_threads && threads > attributes.max_threads)
        return make_error(fmt::format("block {} of '{}' has {} threads; the compiled kernel allows at most {} "
                                      "(registers: {}, shared bytes: {})",
                                      describe(block, 3), kernel, threads, attributes.max_threads,
                                      attributes.registers, attributes.shared_bytes));
    const uint64_t static_shared = attributes.shared_bytes > 0 ? uint64_t(attributes.shared_bytes) : 0;
    if (g.dynamic_shared_bytes > 0 && device.shared_mem_per_block > 0 &&
        static_shared + g.dynamic_shared_bytes > device.shared_mem_per_block)
        return make_error(fmt::format("smem={} of '{}' with its {} bytes of static shared memory needs {} bytes per "
                                      "block; the device allows at most {} ({} KiB)", g.dynamic_shared_bytes, kernel,
                                      static_shared, static_shared + g.dynamic_shared_bytes, device.shared_mem_per_block,
                                      device.shared_mem_per_block / 1024));
    const uint64_t b[3] = {block.x, block.y, block.z};
    for (int i = 0; i < 3; ++i)
        if (device.max_block[i] && b[i] > device.max_block[i])
            return make_error(fmt::format("block {} of '{}': axis {} is {}; the device allows at most {}",
                                          describe(block, 3), kernel, "xyz"[i], b[i], device.max_block[i]));
    return {};
}

std::string describe(const Dim3& d, unsigned dims) {
    if (dims <= 1 && d.y == 1 && d.z == 1) return fmt::format("{}", d.x);
    if (dims <= 2 && d.z == 1) return fmt::format("{}x{}", d.x, d.y);
    return fmt::format("{}x{}x{}", d.x, d.y, d.z);
}

}  // namespace kevo
