// A candidate's kernel must take the parameters the task passes (the signature in the task's
// KernelSpec, rendered in the candidate's language). A kernel that takes others would fail at launch (CL_INVALID_ARG_INDEX) or read
// garbage and be called "incorrect"; comparing the compiled kernel's parameter list with the
// declared one names the fault instead, with both signatures.
//
// How they are compared is the language's SignatureCheck. typed_parameters (OpenCL) with kernel-arg info: the count, and per parameter pointer or scalar, the address space
// of pointers and the element type, signedness aside (`int nx` where the task passes `uint nx`
// reads the same bits) and, for pointers, vector width aside (`float4*` where the task passes a
// float buffer is a vectorised kernel, not a wrong one). Without kernel-arg info, and with parameter_bytes (CUDA), the count;
// with parameter_bytes also each parameter's size in bytes (a pointer is 8, a float 4, ...).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"
#include "task/task.hpp"

namespace kevo {

struct DeclaredParam {
    std::string address_space;  // OpenCL: "global", "local", "constant" or "private"; CUDA: empty
    std::string type;           // element type of a pointer, else the scalar type: "float", "uint", "float4"
    bool pointer = false;
    bool is_const = false;
    std::string name;
};

// The parameters of a declaration such as "__kernel void k(__global const float* x, uint n)".
std::vector<DeclaredParam> parse_signature(std::string_view declaration);

// The task's declared parameters against the compiled kernel's; a sentence naming both signatures
// when they disagree ("kernel 'heat_step' takes (global float* u, int nx) but the task passes
// (...)"), nothing when they agree or the backend could not list the parameters.
std::optional<std::string> signature_mismatch(const KernelSpec& kernel, Language language, const KernelParams& compiled);

}  // namespace kevo
