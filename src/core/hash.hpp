// Content hashes for caches (compiled modules, references) and candidate identity.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace kevo {

// 64-bit FNV-1a followed by a final mix; stable across machines and runs.
uint64_t hash64(std::string_view data, uint64_t seed = 0);
uint64_t hash_bytes(const void* data, size_t bytes, uint64_t seed = 0);
// A checksum of large data computed over 1 MiB chunks in parallel (a different value from
// hash_bytes; compare it only with itself).
uint64_t hash_bytes_parallel(const void* data, size_t bytes);

// 16 hex digits.
std::string hex64(uint64_t value);

}  // namespace kevo
