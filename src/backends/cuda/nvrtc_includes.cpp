// See nvrtc_includes.hpp.
#include "backends/cuda/nvrtc_includes.hpp"

#include <cstdlib>
#include <filesystem>

namespace kevo::cuda {

std::vector<std::string> nvrtc_include_options() {
    static const std::vector<std::string> options = [] {
        std::vector<std::string> candidates;
        for (const char* variable : {"CUDA_HOME", "CUDA_PATH"})
            if (const char* root = std::getenv(variable); root && *root) candidates.push_back(std::string(root) + "/include");
        candidates.push_back("/usr/local/cuda/include");
        candidates.push_back("/usr/include");
        for (const auto& dir : candidates) {
            std::error_code ec;
            if (std::filesystem::exists(std::filesystem::path(dir) / "cuda_bf16.h", ec))
                return std::vector<std::string>{"--include-path=" + dir};
        }
        return std::vector<std::string>{};
    }();
    return options;
}

}  // namespace kevo::cuda
