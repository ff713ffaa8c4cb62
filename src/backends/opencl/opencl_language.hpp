// OpenCL C's language descriptor, for the languages that reuse OpenCL's compiler under another
// suffix (a test-only language does; see opencl_language.cpp).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "backend/kernel_language.hpp"

namespace kevo {

KernelLanguage opencl_language();
std::string opencl_signature(std::string_view name, const std::vector<SignatureParam>& params);

}  // namespace kevo
