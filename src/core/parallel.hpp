// A minimal parallel-for over an index range, for CPU references, input generation and checks.
#pragma once

#include <cstddef>
#include <functional>

namespace kevo {

// Splits [0, n) into contiguous chunks, one per hardware thread (at most), and waits for all.
// Small ranges run on the calling thread.
void parallel_for(size_t n, const std::function<void(size_t begin, size_t end)>& body,
                  size_t min_chunk = 1 << 14);

unsigned hardware_threads();

}  // namespace kevo
