// See triton_compiler.hpp. The driver's answer is result.json in its folder; everything it does not
// say there (a deadline passed, a crash, a memory limit reached) is read from how the child ended.
#include "backends/cuda/triton_compiler.hpp"

#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <optional>
#include <sstream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "core/files.hpp"
#include "core/process.hpp"
#include "core/sandbox.hpp"

namespace kevo {

std::string_view triton_compile_script();  // generated from triton_compile.py (cmake/embed.cmake)

namespace {

namespace fs = std::filesystem;

// The compiler's address-space limit: Triton with LLVM loaded maps about 1.5 GiB; a candidate
// that makes it allocate without bound is stopped here. KEVO_TRITON_MEMORY_MB overrides.
unsigned long long memory_limit_bytes() {
    if (const char* v = std::getenv("KEVO_TRITON_MEMORY_MB")) {
        char* end = nullptr;
        const unsigned long long mb = std::strtoull(v, &end, 10);
        if (end != v && mb > 0) return mb << 20;
    }
    return 6ull << 30;
}

// "sm_90" or "sm_90a" -> 90.
Expected<int> compute_capability(const std::string& arch) {
    int cc = 0;
    if (std::sscanf(arch.c_str(), "sm_%d", &cc) != 1 || cc <= 0)
        return make_error(fmt::format("Triton compiles for an NVIDIA architecture such as sm_90, not '{}'", arch));
    return cc;
}

nlohmann::json driver_request(const LanguageCompileRequest& request, int cc) {
    nlohmann::json knobs = nlohmann::json::object();
    for (const auto& d : request.defines) {
        const size_t eq = d.find('=');
        knobs[d.substr(0, eq)] = eq == std::string::npos ? "" : d.substr(eq + 1);
    }
    nlohmann::json kernels = nlohmann::json::array();
    for (const auto& k : request.kernels) {
        nlohmann::json params = nlohmann::json::array();
        for (const auto& p : k.params) params.push_back({{"name", p.name}, {"type", triton_signature_type(p)}});
        kernels.push_back({{"name", k.name}, {"params", params}});
    }
    return {{"source_file", "candidate.py"}, {"source_name", std::string(request.source_name)}, {"knobs", knobs},
            {"arch", cc}, {"triton_version", kTritonVersion}, {"kernels", kernels}};
}

// A private folder for one compilation, removed with its contents when the guard goes.
struct ScratchFolder {
    fs::path path;
    ~ScratchFolder() {
        std::error_code ignored;
        if (!path.empty()) fs::remove_all(path, ignored);
    }
};

Expected<fs::path> make_scratch_folder() {
    std::error_code ec;
    const fs::path base = fs::temp_directory_path(ec);
    if (ec) return make_error("no temporary folder for the Triton compiler: " + ec.message());
    std::string pattern = (base / "kevo-triton-XXXXXX").string();
    if (!::mkdtemp(pattern.data())) return make_error(fmt::format("cannot create {}: {}", pattern, std::strerror(errno)));
    return fs::path(pattern);
}

std::string compile_error_log(const std::string& source_name, int line, const std::string& message) {
    if (line > 0) return fmt::format("{}:{}:1: error: {}\n", source_name, line, message);
    return fmt::format("error: {}\n", message);
}

// The images the driver wrote, one per kernel, and its metadata.
Expected<CompileOutcome> read_images(const fs::path& folder, const nlohmann::json& result) {
    CompileOutcome outcome;
    for (const auto& k : result.at("kernels")) {
        const std::string name = k.at("name").get<std::string>();
        // The launch passes Triton's scratch pointers as null: a kernel that needs scratch memory
        // (device-side tensor descriptors, profiling) is refused, naming kevo's limit, not run wrong.
        for (const char* scratch : {"global_scratch_bytes", "profile_scratch_bytes"})
            if (k.value(scratch, 0) > 0) {
                CompileOutcome refused;
                refused.refused = fmt::format("{} needs {} bytes of Triton {} memory, which kevo does not provide yet",
                                              name, k.value(scratch, 0), scratch);
                return refused;
            }
        auto binary = read_text_file(folder / k.at("cubin").get<std::string>());
        if (!binary) return make_error("the Triton driver reported a cubin it did not write: " + binary.error().message);
        KernelImage image;
        image.kernel = name;
        image.entry = k.at("entry").get<std::string>();
        image.binary = std::move(*binary);
        image.threads_per_block = k.at("num_warps").get<unsigned>() * 32;
        image.dynamic_shared_bytes = k.at("shared_bytes").get<uint64_t>();
        image.trailing_null_params = k.at("hidden_params").get<unsigned>();
        outcome.images.push_back(std::move(image));
    }
    outcome.image_metadata = result.at("kernels").dump();
    return outcome;
}

// What the sandbox could not do, as notes in the compiler's log.
std::string sandbox_notes(const SandboxPlan& plan, const std::string& stderr_text) {
    std::string notes;
    for (const auto& missing : plan.unavailable()) notes += "note: kevo sandbox: " + missing + "\n";
    std::istringstream lines(stderr_text);
    for (std::string line; std::getline(lines, line);)
        if (line.starts_with("kevo sandbox:")) notes += "note: " + line + "\n";
    return notes;
}

// `name` found on PATH, as an absolute path (the compiler runs in a folder of its own, where a
// relative path would name nothing).
std::optional<std::string> on_path(const std::string& name) {
    const char* path = std::getenv("PATH");
    std::istringstream dirs(path ? path : "");
    for (std::string dir; std::getline(dirs, dir, ':');) {
        const fs::path candidate = fs::path(dir.empty() ? "." : dir) / name;
        if (::access(candidate.c_str(), X_OK) == 0) return fs::absolute(candidate).string();
    }
    return std::nullopt;
}

}  // namespace

const char* triton_element_type(ParamType type) {
    switch (type) {
        case ParamType::f32: case ParamType::f32x2: case ParamType::f32x4: return "fp32";  // vectors: consecutive floats
        case ParamType::u32: return "u32";
        case ParamType::i32: return "i32";
        case ParamType::i8: return "i8";
        case ParamType::u8: return "u8";
        case ParamType::bf16: return "bf16";
    }
    return "fp32";
}

std::string triton_signature_type(const SignatureParam& param) {
    return (param.kind == ParamKind::scalar ? "" : "*") + std::string(triton_element_type(param.type));
}

Expected<std::string> triton_python() {
    if (const char* v = std::getenv("KEVO_TRITON_PYTHON"); v && *v) {
        const std::string named(v);
        // A bare name is looked up on PATH; a path is made absolute, symbolic links kept (a virtual
        // environment's python is one, and finds its packages by the path it was started as).
        const auto found = named.find('/') == std::string::npos ? on_path(named) : std::optional(fs::absolute(named).string());
        if (!found || ::access(found->c_str(), X_OK) != 0)
            return make_error(fmt::format("KEVO_TRITON_PYTHON={} is not an executable file", v));
        return *found;
    }
    if (auto python = on_path("python3")) return *python;
    return make_error(fmt::format("no python3 on PATH for Triton candidates: install Triton {} (pip install triton=={}) "
                                  "and set KEVO_TRITON_PYTHON to that Python",
                                  kTritonVersion, kTritonVersion));
}

Expected<CompileOutcome> compile_triton(const LanguageCompileRequest& request) {
    const auto start = std::chrono::steady_clock::now();
    auto python = triton_python();
    if (!python) return python.error();
    auto cc = compute_capability(request.arch);
    if (!cc) return cc.error();
    auto made = make_scratch_folder();
    if (!made) return made.error();
    ScratchFolder folder{*made};
    const fs::path script = folder.path / "kevo_triton_compile.py";
    for (const auto& [file, text] : {std::pair<fs::path, std::string>{folder.path / "candidate.py", std::string(request.source)},
                                     {folder.path / "request.json", driver_request(request, *cc).dump()},
                                     {script, std::string(triton_compile_script())}})
        if (auto written = write_file_atomic(file, text); !written) return written.error();

    const SandboxPlan sandbox(SandboxOptions{true, folder.path.string()});
    SpawnOptions options;
    options.executable = *python;
    options.args = {"-I", script.string()};  // -I: no user site, no PYTHON* variables, no script folder on sys.path
    options.description = "the Triton compiler";
    options.working_dir = folder.path.string();
    // Only what the compiler needs: kevo's own environment (an API key, a proxy's address) stays out.
    const char* path = std::getenv("PATH");
    options.inherit_environment = false;
    options.env = {{"PATH", path ? path : "/usr/bin:/bin"}, {"HOME", folder.path.string()},
                   {"TMPDIR", folder.path.string()}, {"TRITON_HOME", folder.path.string()},
                   {"TRITON_CACHE_DIR", (folder.path / "cache").string()}, {"PYTHONDONTWRITEBYTECODE", "1"},
                   {"LANG", "C.UTF-8"}};
    if (const char* libraries = std::getenv("LD_LIBRARY_PATH")) options.env.push_back({"LD_LIBRARY_PATH", libraries});
    options.stdin_to = StreamTo::null;
    options.stdout_to = StreamTo::pipe;
    options.stderr_to = StreamTo::pipe;
    options.address_space_bytes = memory_limit_bytes();
    options.sandbox = &sandbox;
    auto child = Process::spawn(options);
    if (!child) return child.error();
    // Inside the stage's own deadline, so that this verdict (the compiler hung) comes first.
    const double deadline = std::max(1.0, request.timeout_s * 0.9);
    const Captured run = child->communicate("", deadline);

    const std::string name(request.source_name);
    CompileOutcome outcome;
    outcome.log = sandbox_notes(sandbox, run.err);
    auto finish = [&](CompileOutcome o) {
        o.log = outcome.log + o.log;
        o.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
        return o;
    };
    if (run.timed_out) {
        outcome.log += compile_error_log(name, 0, fmt::format("the Triton compiler exceeded its {:.0f} s deadline and was "
                                                              "killed (the candidate makes the compiler hang)", deadline));
        return finish(CompileOutcome{});
    }
    auto text = read_text_file(folder.path / "result.json");
    if (!text) {
        const std::string tail = run.err.size() > 2000 ? run.err.substr(run.err.size() - 2000) : run.err;
        outcome.log += compile_error_log(name, 0, fmt::format("the Triton compiler {} without an answer (memory limit {} MiB): {}",
                                                              run.status.describe(), memory_limit_bytes() >> 20, tail));
        return finish(CompileOutcome{});
    }
    nlohmann::json result;
    try {
        result = nlohmann::json::parse(*text);
        const std::string verdict = result.at("outcome").get<std::string>();
        const std::string message = result.value("message", "");
        const int line = result.value("line", 0);
        if (verdict == "environment") return make_error(message);
        if (verdict == "ok") {
            auto images = read_images(folder.path, result);
            if (!images) return images.error();
            return finish(std::move(*images));
        }
        if (verdict == "rejected") {
            CompileOutcome refused;
            refused.refused = line > 0 ? fmt::format("line {}: {}", line, message) : message;
            return finish(std::move(refused));
        }
        CompileOutcome failed;
        failed.log = compile_error_log(name, line, message);
        return finish(std::move(failed));
    } catch (const nlohmann::json::exception& e) {
        return make_error(fmt::format("the Triton driver's answer cannot be read: {}", e.what()));
    }
}

}  // namespace kevo
