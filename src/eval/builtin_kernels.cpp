// See builtin_kernels.hpp. The embedded sources themselves are generated (cmake/embed.cmake).
#include "eval/builtin_kernels.hpp"

#include <fmt/format.h>

namespace kevo {

std::string builtin_file(const Device& device, std::string_view stem) {
    return fmt::format("{}.{}", stem, device.language()->suffix);
}

Expected<CompileOutcome> compile_builtin(Device& device, std::string_view stem, const std::vector<std::string>& defines) {
    const std::string file = builtin_file(device, stem);
    const std::string_view source = builtin_kernel(file);
    if (source.empty()) return make_error(fmt::format("the built-in kernel {} is not embedded in this build", file));
    return device.compile(std::string(source), defines);
}

}  // namespace kevo
