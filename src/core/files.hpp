// File helpers: whole-file read, atomic write (a crash never leaves half a file), cache folders.
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "core/expected.hpp"

namespace kevo {

Expected<std::string> read_text_file(const std::filesystem::path& path);
Expected<void> write_file_atomic(const std::filesystem::path& path, std::string_view contents);

// $KEVO_CACHE_DIR, else $XDG_CACHE_HOME/kevo, else ~/.cache/kevo; created on demand.
std::filesystem::path cache_dir(std::string_view sub = {});

}  // namespace kevo
