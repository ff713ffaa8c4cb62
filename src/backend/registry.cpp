// Backend registry: one line per backend.
#include "backend/registry.hpp"

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace kevo {

std::unique_ptr<Backend> make_cuda_backend();
std::unique_ptr<Backend> make_opencl_backend();

namespace {
struct Entry {
    const char* name;
    std::unique_ptr<Backend> (*make)();
};
constexpr Entry kBackends[] = {
    {"cuda", &make_cuda_backend},
    {"opencl", &make_opencl_backend},
};
}  // namespace

std::vector<std::string> backend_names() {
    std::vector<std::string> names;
    for (const auto& e : kBackends) names.emplace_back(e.name);
    return names;
}

std::vector<std::string> backend_choices() {
    std::vector<std::string> choices = {"auto"};
    for (auto& name : backend_names()) choices.push_back(std::move(name));
    return choices;
}

std::unique_ptr<Backend> make_backend(const std::string& name) {
    for (const auto& e : kBackends)
        if (name == e.name) return e.make();
    return nullptr;
}

Expected<std::string> resolve_backend_name(const std::string& requested) {
    if (requested == "auto") {
        if (auto cuda = make_backend("cuda"); cuda && !cuda->probe().empty()) return std::string("cuda");
        return std::string("opencl");
    }
    if (make_backend(requested)) return requested;
    return make_error(fmt::format("unknown backend '{}'; expected one of: auto, {}", requested,
                                  fmt::join(backend_names(), ", ")));
}

std::string backend_for_suffix(const std::string& suffix) {
    const Language language = language_for_suffix(suffix);
    return language ? language->backend : std::string();
}

}  // namespace kevo
