// Kernels kevo itself runs (calibration, L2 flush, checksums, a bench peer), embedded from
// src/eval/kernels/ in every registered language that has them: "flush.cu", "flush.cl".
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend/backend.hpp"

namespace kevo {

// Source of an embedded file such as "calibrate.cu"; empty if there is none.
std::string_view builtin_kernel(std::string_view file);

// The file of built-in kernel `stem` in the device's language: "flush" -> "flush.cu" on CUDA.
std::string builtin_file(const Device& device, std::string_view stem);

// That file compiled on the device. An error when the build embeds no such file (a language without
// it) or the device fails; a module-less outcome (with the log) when it does not compile.
Expected<CompileOutcome> compile_builtin(Device& device, std::string_view stem, const std::vector<std::string>& defines);

}  // namespace kevo
