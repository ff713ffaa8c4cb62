// Names for OpenCL status codes, so that every error kevo reports says what the driver said.
#pragma once

#include <CL/cl.h>

#include <string>

namespace kevo::opencl {

// The symbolic name of an OpenCL status code ("CL_INVALID_WORK_GROUP_SIZE"), or "CL_UNKNOWN_ERROR"
// for codes outside the 1.2 headers and the few vendor codes we know.
const char* error_name(cl_int code);

// "CL_INVALID_WORK_GROUP_SIZE (-54)": the name plus the number, since vendors reuse gaps.
std::string error_text(cl_int code);

}  // namespace kevo::opencl
