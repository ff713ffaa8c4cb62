// CUDA C++ source to CUBIN with NVRTC; needs no GPU.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "core/expected.hpp"

namespace kevo::cuda {

struct NvrtcOutput {
    std::optional<std::vector<char>> cubin;  // absent when the source did not compile
    std::string log;
    double seconds = 0;
};

// Compiles `source` as "candidate.cu" for `arch` ("sm_90") with -std=c++17 -lineinfo, the CUDA
// toolkit's include path (found beside libnvrtc: nvrtc_api.cpp) and -D for each NAME=VALUE in `defines`. A source that fails to compile is an outcome (no cubin, the log says why);
// an Error means NVRTC itself is missing or refused the options.
Expected<NvrtcOutput> nvrtc_compile(const std::string& source, const std::vector<std::string>& defines,
                                    const std::string& arch);

}  // namespace kevo::cuda
