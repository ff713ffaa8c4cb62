// Triton as a kernel language (see backend/kernel_language.hpp): a Python file of @triton.jit
// functions with `# kevo:` directives, compiled ahead of time on the host by the pinned Triton
// (triton_compiler.hpp) into cubins that the CUDA backend loads.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/kernel_language.hpp"
#include "backends/cuda/triton_compiler.hpp"

namespace kevo {
namespace {

const char* triton_type(ParamType type) {
    switch (type) {
        case ParamType::f32: return "fp32";
        case ParamType::f32x2: return "fp32 pairs";
        case ParamType::f32x4: return "fp32 quadruples";
        case ParamType::u32: return "u32";
        case ParamType::i32: return "i32";
        case ParamType::i8: return "i8";
        case ParamType::u8: return "u8";
        case ParamType::bf16: return "bf16";
    }
    return "?";
}

// Triton's parameters carry no types: the rendering names them in order, and says in a comment what
// kevo passes for each (pointers as `*fp32`, scalars by value); tl.constexpr parameters may follow.
std::string triton_signature(std::string_view name, const std::vector<SignatureParam>& params) {
    std::vector<std::string> names, types;
    for (const auto& p : params) {
        names.push_back(p.name);
        types.push_back(fmt::format("{}: {}{}{}", p.name, p.kind == ParamKind::scalar ? "" : "*", triton_type(p.type),
                                    p.kind == ParamKind::const_pointer ? " (read only)" : ""));
    }
    return fmt::format("@triton.jit\ndef {}({}, ...tl.constexpr parameters)  # {}", name, fmt::join(names, ", "),
                       fmt::join(types, ", "));
}

KernelLanguage triton_language() {
    KernelLanguage l;
    l.name = "triton";
    l.display_name = "Triton";
    l.short_name = "Triton";
    l.suffix = "py";
    l.backend = "cuda";
    l.backend_default = false;  // a CUDA device compiles CUDA C++ unless the candidate is a .py file
    l.fence_tag = "python";
    l.fence_tags = {"python", "py", "triton"};
    l.kernel_markers = {"@triton.jit"};
    l.directive_comment = "#";
    l.no_arch_targets_note = "Triton picks its instructions for the device's architecture itself";
    l.no_dynamic_shared_note = "Triton sizes a kernel's shared memory itself";
    l.c_family = false;  // the syntax-tree check in triton_compile.py replaces the C scan
    l.signature_check = SignatureCheck::parameter_bytes;
    l.render_signature = &triton_signature;
    l.compile = &compile_triton;
    return l;
}

const bool registered = register_language(triton_language());

}  // namespace
}  // namespace kevo
