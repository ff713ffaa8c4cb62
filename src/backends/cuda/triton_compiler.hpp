// Triton candidates compiled ahead of time on the host: kevo's driver script (triton_compile.py,
// embedded) runs under the pinned Triton in a child process with a deadline, a memory limit, an
// empty working folder, no network and no writes outside that folder. It checks the candidate's
// syntax tree before any of it runs, then compiles each of the task's kernels to a cubin for the
// requested architecture (no GPU needed), which the CUDA backend loads.
#pragma once

#include <string>

#include "backend/backend.hpp"

namespace kevo {

// The Triton version kevo's driver, its seeds and its checks are written against (the H200 image's).
inline constexpr const char* kTritonVersion = "3.6.0";

// Triton's name of a parameter's element type ("fp32", "bf16"; a float2 or float4 buffer is fp32), and
// the type in a Triton signature: "*fp32" for a pointer, "u32" for a scalar.
const char* triton_element_type(ParamType type);
std::string triton_signature_type(const SignatureParam& param);

// The Python that runs Triton: $KEVO_TRITON_PYTHON, else python3 on PATH. An error says how to set it.
Expected<std::string> triton_python();

// Compiles a Triton candidate. The candidate's faults (refused by the syntax check, a compile error,
// the compiler hanging past the deadline or running out of its memory) are the outcome; an
// environment fault (no Python, the wrong Triton, no temporary folder) is an error.
Expected<CompileOutcome> compile_triton(const LanguageCompileRequest& request);

}  // namespace kevo
