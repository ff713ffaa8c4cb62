// The include path NVRTC compiles candidates with. NVRTC has no search path of its own (CUDA 13:
// "could not open source file "cuda_bf16.h" (no directories in search list)"), so the headers the
// static scan allows (cuda_fp16.h, cuda_bf16.h) come from the CUDA toolkit's include directory.
#pragma once

#include <string>
#include <vector>

namespace kevo::cuda {

// {"--include-path=DIR"} for the first of $CUDA_HOME/include, $CUDA_PATH/include,
// /usr/local/cuda/include and /usr/include that holds cuda_bf16.h; empty when none does (a
// candidate that includes it then fails to compile, with NVRTC's message).
std::vector<std::string> nvrtc_include_options();

}  // namespace kevo::cuda
