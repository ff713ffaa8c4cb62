// A minimal parallel-for over an index range, for CPU references, input generation and checks.
#pragma once

#include <cstddef>
#include <functional>

namespace kevo {

// Splits [0, n) into contiguous chunks, one per hardware thread (at most), and waits for all.
// Small ranges run on the calling thread.
void parallel_for(size_t n, const std::function<void(size_t begin, size_t end)>& body,
                  size_t min_chunk = 1 << 14);

// parallel_for for ranges whose every index is a row of work (an inner loop over a row, a token, a
// head): one index per chunk at least, so that 2048 rows of a GEMM reference use every thread
// (parallel_for's default chunk of 16384 indices ran such ranges on one thread: 100 s of fused_moe's
// check at Mixtral's prefill on the H100, with the GPU idle).
void parallel_rows(size_t rows, const std::function<void(size_t begin, size_t end)>& body);

unsigned hardware_threads();

}  // namespace kevo
