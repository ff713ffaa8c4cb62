// Drives NVRTC: options, the compile, the log and the CUBIN.
#include "backends/cuda/nvrtc_compile.hpp"

#include "backends/cuda/nvrtc_api.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cctype>
#include <chrono>

namespace kevo::cuda {
namespace {

// "sm_90" / "sm_90a" -> 90; -1 when the text is not a real (CUBIN-producing) architecture.
int arch_number(const std::string& arch) {
    if (arch.size() < 5 || arch.rfind("sm_", 0) != 0) return -1;
    size_t i = 3;
    int number = 0;
    while (i < arch.size() && std::isdigit(static_cast<unsigned char>(arch[i])))
        number = number * 10 + (arch[i++] - '0');
    if (i == 3) return -1;
    if (i < arch.size() && !(i + 1 == arch.size() && std::islower(static_cast<unsigned char>(arch[i])))) return -1;
    return number;
}

bool valid_define(const std::string& define) {
    auto name = define.substr(0, define.find('='));
    if (name.empty() || std::isdigit(static_cast<unsigned char>(name[0]))) return false;
    return std::all_of(name.begin(), name.end(),
                       [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; });
}

// Checks the arch against what this NVRTC can emit, for a clearer message than INVALID_OPTION.
Expected<void> check_supported(const NvrtcApi& api, int number, const std::string& arch) {
    if (!api.nvrtcGetNumSupportedArchs || !api.nvrtcGetSupportedArchs) return {};
    int count = 0;
    if (api.nvrtcGetNumSupportedArchs(&count) != NVRTC_SUCCESS || count <= 0) return {};
    std::vector<int> archs(static_cast<size_t>(count));
    if (api.nvrtcGetSupportedArchs(archs.data()) != NVRTC_SUCCESS) return {};
    if (std::find(archs.begin(), archs.end(), number) != archs.end()) return {};
    return make_error(fmt::format("NVRTC {}.{} cannot compile for {}; it supports sm_{}", api.major, api.minor, arch,
                                  fmt::join(archs, ", sm_")));
}

class Program {
public:
    Program(const NvrtcApi& api) : api_(api) {}
    ~Program() {
        if (program_) api_.nvrtcDestroyProgram(&program_);
    }
    Program(const Program&) = delete;
    Program& operator=(const Program&) = delete;
    nvrtcProgram* out() { return &program_; }
    nvrtcProgram get() const { return program_; }

private:
    const NvrtcApi& api_;
    nvrtcProgram program_ = nullptr;
};

std::string program_log(const NvrtcApi& api, nvrtcProgram program) {
    size_t size = 0;
    if (api.nvrtcGetProgramLogSize(program, &size) != NVRTC_SUCCESS || size <= 1) return {};
    std::string log(size, '\0');
    if (api.nvrtcGetProgramLog(program, log.data()) != NVRTC_SUCCESS) return {};
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
}

}  // namespace

Expected<NvrtcOutput> nvrtc_compile(const std::string& source, const std::vector<std::string>& defines,
                                    const std::string& arch) {
    std::string why;
    const NvrtcApi* api = load_nvrtc_api(why);
    if (!api) return make_error(why);
    int number = arch_number(arch);
    if (number < 0)
        return make_error(
            fmt::format("'{}' is not a CUDA architecture NVRTC can build a CUBIN for (expected sm_XY)", arch));
    if (auto ok = check_supported(*api, number, arch); !ok) return ok.error();

    std::vector<std::string> options = {"--gpu-architecture=" + arch, "-std=c++17", "-lineinfo"};
    // Only for the allow-listed headers: the static scan refuses every other #include.
    if (!api->include_dir.empty()) options.push_back("--include-path=" + api->include_dir);
    for (const auto& define : defines) {
        if (!valid_define(define))
            return make_error(fmt::format("invalid define '{}': expected NAME or NAME=VALUE", define));
        options.push_back("-D" + define);
    }
    std::vector<const char*> option_ptrs;
    for (const auto& o : options) option_ptrs.push_back(o.c_str());

    auto start = std::chrono::steady_clock::now();
    Program program(*api);
    nvrtcResult r = api->nvrtcCreateProgram(program.out(), source.c_str(), "candidate.cu", 0, nullptr, nullptr);
    if (r != NVRTC_SUCCESS)
        return make_error(fmt::format("nvrtcCreateProgram failed: {}", api->nvrtcGetErrorString(r)));
    r = api->nvrtcCompileProgram(program.get(), static_cast<int>(option_ptrs.size()), option_ptrs.data());

    NvrtcOutput out;
    out.log = program_log(*api, program.get());
    if (r == NVRTC_SUCCESS) {
        size_t size = 0;
        nvrtcResult rs = api->nvrtcGetCUBINSize(program.get(), &size);
        std::vector<char> cubin(size);
        if (rs == NVRTC_SUCCESS && size > 0) rs = api->nvrtcGetCUBIN(program.get(), cubin.data());
        if (rs != NVRTC_SUCCESS || size == 0)
            return make_error(fmt::format("NVRTC produced no CUBIN for {}: {}", arch, api->nvrtcGetErrorString(rs)));
        out.cubin = std::move(cubin);
    } else if (r != NVRTC_ERROR_COMPILATION) {
        return make_error(fmt::format("NVRTC {}.{} failed ({}) with options {}{}{}", api->major, api->minor,
                                      api->nvrtcGetErrorString(r), fmt::join(options, " "),
                                      out.log.empty() ? "" : ":\n", out.log));
    }
    out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    return out;
}

}  // namespace kevo::cuda

#else

namespace kevo::cuda {

Expected<NvrtcOutput> nvrtc_compile(const std::string&, const std::vector<std::string>&, const std::string&) {
    return make_error("kevo was built without the CUDA headers");
}

}  // namespace kevo::cuda

#endif
