// Triton as a kernel language (see backend/kernel_language.hpp): a Python file of @triton.jit
// functions with `# kevo:` directives, compiled ahead of time on the host by the pinned Triton
// (triton_compiler.hpp) into cubins that the CUDA backend loads.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/kernel_language.hpp"
#include "backends/cuda/triton_compiler.hpp"

namespace kevo {
namespace {

// A float2 or float4 buffer is passed as consecutive floats; the rendering says how they group.
const char* vector_note(ParamType type) {
    return type == ParamType::f32x2 ? " pairs" : type == ParamType::f32x4 ? " quadruples" : "";
}

// Triton's parameters carry no types: the rendering names them in order, and says in a comment what
// kevo passes for each (pointers as `*fp32`, scalars by value); tl.constexpr parameters may follow.
std::string triton_signature(std::string_view name, const std::vector<SignatureParam>& params) {
    std::vector<std::string> names, types;
    for (const auto& p : params) {
        names.push_back(p.name);
        types.push_back(fmt::format("{}: {}{}{}", p.name, triton_signature_type(p), vector_note(p.type),
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
    l.knob_binding = "given to the kernel's tl.constexpr parameter NAME; the knobs num_warps and num_stages set "
                     "the compile's warps per program and pipeline stages";
    l.launch_note = "In Triton, `block=` is the tile one program covers (the grid divides the domain by it); a "
                    "program runs num_warps x 32 threads (default num_warps 4), and indexing inside the tile is "
                    "tl.arange's.";
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
