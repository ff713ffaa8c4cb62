// Kernels kevo itself runs (calibration, L2 flush), embedded from src/eval/kernels/.
#pragma once

#include <string_view>

namespace kevo {

// Source of an embedded file such as "calibrate.cu"; empty if there is none.
std::string_view builtin_kernel(std::string_view file);

}  // namespace kevo
