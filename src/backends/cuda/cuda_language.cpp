// CUDA C++ as a kernel language (see backend/kernel_language.hpp): what the scan, the directives,
// the answer parser, the prompt and the signature check need to know of it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/kernel_language.hpp"

namespace kevo {
namespace {

const char* cuda_type(ParamType type) {
    switch (type) {
        case ParamType::f32: return "float";
        case ParamType::f32x2: return "float2";
        case ParamType::f32x4: return "float4";
        case ParamType::u32: return "unsigned";
        case ParamType::i32: return "int";
        case ParamType::i8: return "signed char";
        case ParamType::u8: return "unsigned char";
        case ParamType::bf16: return "__nv_bfloat16";
    }
    return "?";
}

// extern "C" so that the entry point keeps its name (no C++ mangling) for cuModuleGetFunction.
std::string cuda_signature(std::string_view name, const std::vector<SignatureParam>& params) {
    std::vector<std::string> parts;
    for (const auto& p : params) {
        const char* type = cuda_type(p.type);
        switch (p.kind) {
            case ParamKind::const_pointer: parts.push_back(fmt::format("const {}* {}", type, p.name)); break;
            case ParamKind::pointer: parts.push_back(fmt::format("{}* {}", type, p.name)); break;
            case ParamKind::scalar: parts.push_back(fmt::format("{} {}", type, p.name)); break;
        }
    }
    return fmt::format("extern \"C\" __global__ void {}({})", name, fmt::join(parts, ", "));
}

KernelLanguage cuda_language() {
    KernelLanguage l;
    l.name = "cuda";
    l.display_name = "CUDA C++";
    l.short_name = "CUDA";
    l.suffix = "cu";
    l.backend = "cuda";
    l.backend_default = true;
    l.fence_tag = "cuda";
    // The C-family tags too: a model often labels CUDA (or OpenCL C) code as plain C or C++.
    l.fence_tags = {"cuda", "cu", "cuh", "c", "cpp", "c++", "cxx", "h", "hpp"};
    l.kernel_markers = {"__global__"};
    l.arch_targets = true;
    l.dynamic_shared = true;
    // mma.h: the warp-level matrix API (wmma); cuda_fp8.h: the fp8 types and conversions.
    l.scan.include_allow_list = {"cuda_fp16.h", "cuda_bf16.h", "cuda_fp8.h", "mma.h"};
    l.scan.launch_calls = {"cudaLaunchDevice", "cudaGetParameterBuffer", "cudaDeviceSynchronize", "cudaLaunchKernel",
                           "cudaGraphLaunch"};
    l.scan.launch_calls_what = "dynamic parallelism";
    l.scan.refuse_chevron_launch = true;
    l.scan.global_words = {"__device__", "__managed__"};
    l.signature_check = SignatureCheck::parameter_bytes;
    l.render_signature = &cuda_signature;
    return l;
}

const bool registered = register_language(cuda_language());

}  // namespace
}  // namespace kevo
