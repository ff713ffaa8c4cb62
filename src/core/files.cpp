// See files.hpp.
#include "core/files.hpp"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace kevo {

Expected<std::string> read_text_file(const std::filesystem::path& path) {
    std::error_code ec;
    if (!std::filesystem::exists(path, ec)) return make_error(fmt::format("{}: no such file", path.string()));
    if (std::filesystem::is_directory(path, ec)) return make_error(fmt::format("{}: is a directory, expected a file", path.string()));
    std::ifstream in(path, std::ios::binary);
    if (!in) return make_error(fmt::format("{}: cannot be opened for reading", path.string()));
    std::ostringstream buffer;
    buffer << in.rdbuf();
    return buffer.str();
}

Expected<void> write_file_atomic(const std::filesystem::path& path, std::string_view contents) {
    std::error_code ec;
    if (path.has_parent_path()) std::filesystem::create_directories(path.parent_path(), ec);
    const auto tmp = path.string() + fmt::format(".tmp{}", ::getpid());
    {
        std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
        if (!out) return make_error(fmt::format("{}: cannot be opened for writing", tmp));
        out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
        if (!out) return make_error(fmt::format("{}: write failed (disk full?)", tmp));
    }
    std::filesystem::rename(tmp, path, ec);
    if (ec) return make_error(fmt::format("{}: rename failed: {}", path.string(), ec.message()));
    return {};
}

std::filesystem::path cache_dir(std::string_view sub) {
    std::filesystem::path base;
    if (const char* env = std::getenv("KEVO_CACHE_DIR"); env && *env) base = env;
    else if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg) base = std::filesystem::path(xdg) / "kevo";
    else if (const char* home = std::getenv("HOME"); home && *home) base = std::filesystem::path(home) / ".cache" / "kevo";
    else base = std::filesystem::temp_directory_path() / "kevo-cache";
    if (!sub.empty()) base /= sub;
    std::error_code ec;
    std::filesystem::create_directories(base, ec);
    return base;
}

}  // namespace kevo
