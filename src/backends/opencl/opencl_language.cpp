// OpenCL C as a kernel language (see backend/kernel_language.hpp): what the scan, the directives,
// the answer parser, the prompt and the signature check need to know of it.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backends/opencl/opencl_language.hpp"

namespace kevo {

namespace {

// bf16 travels as its bits: OpenCL C has no bf16 type, so a kernel reads ushort and widens.
const char* opencl_type(ParamType type) {
    switch (type) {
        case ParamType::f32: return "float";
        case ParamType::f32x2: return "float2";
        case ParamType::f32x4: return "float4";
        case ParamType::u32: return "uint";
        case ParamType::i32: return "int";
        case ParamType::i8: return "char";
        case ParamType::u8: return "uchar";
        case ParamType::bf16: return "ushort";
    }
    return "?";
}

}  // namespace

// Also the rendering of the languages that reuse OpenCL's compiler (a test-only language does).
std::string opencl_signature(std::string_view name, const std::vector<SignatureParam>& params) {
    std::vector<std::string> parts;
    for (const auto& p : params) {
        const char* type = opencl_type(p.type);
        switch (p.kind) {
            case ParamKind::const_pointer: parts.push_back(fmt::format("__global const {}* {}", type, p.name)); break;
            case ParamKind::pointer: parts.push_back(fmt::format("__global {}* {}", type, p.name)); break;
            case ParamKind::scalar: parts.push_back(fmt::format("{} {}", type, p.name)); break;
        }
    }
    return fmt::format("__kernel void {}({})", name, fmt::join(parts, ", "));
}

KernelLanguage opencl_language() {
    KernelLanguage l;
    l.name = "opencl";
    l.display_name = "OpenCL C";
    l.short_name = "OpenCL";
    l.suffix = "cl";
    l.backend = "opencl";
    l.backend_default = true;
    l.fence_tag = "opencl";
    l.fence_tags = {"opencl", "cl", "opencl-c", "clc"};
    l.kernel_markers = {"__kernel", "kernel void"};
    l.no_arch_targets_note = "OpenCL has no architecture-specific targets";
    l.no_dynamic_shared_note = "an OpenCL kernel declares its __local arrays with a fixed size instead";
    l.scan.launch_calls = {"enqueue_kernel", "get_default_queue", "enqueue_marker"};
    l.scan.launch_calls_what = "device-side enqueue";
    l.scan.global_words = {"__global", "global"};
    l.scan.globals_at_file_scope_only = true;
    l.signature_check = SignatureCheck::typed_parameters;
    l.render_signature = &opencl_signature;
    return l;
}

namespace {
const bool registered = register_language(opencl_language());
}  // namespace

}  // namespace kevo
