// The list of compiled-in backends. Adding a backend adds one line to registry.cpp.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"

namespace kevo {

std::vector<std::string> backend_names();
// "auto" and the backend names: what --backend and a study's backend key accept.
std::vector<std::string> backend_choices();
// nullptr for an unknown name.
std::unique_ptr<Backend> make_backend(const std::string& name);

// Resolves "auto" (CUDA when it has a device, else OpenCL) and validates the name.
Expected<std::string> resolve_backend_name(const std::string& requested);

// The backend whose kernel language uses this file suffix ("cu" -> cuda); empty when none does.
std::string backend_for_suffix(const std::string& suffix);

}  // namespace kevo
