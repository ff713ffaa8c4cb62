// The files shipped in each folder packs/<pack>/ (its weights.toml), embedded into the binary at
// configure time by cmake/embed.cmake, so that an installed kevo has them.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace kevo {

// The text of packs/<pack>/<file>; empty if absent.
std::string_view pack_file(std::string_view pack, std::string_view file);
// The packs that ship at least one file, by name.
std::vector<std::string> packs_with_files();

}  // namespace kevo
