// parallel_for over std::thread; see parallel.hpp.
#include "core/parallel.hpp"

#include <algorithm>
#include <thread>
#include <vector>

namespace kevo {

unsigned hardware_threads() { return std::max(1u, std::thread::hardware_concurrency()); }

void parallel_for(size_t n, const std::function<void(size_t, size_t)>& body, size_t min_chunk) {
    const size_t max_chunks = std::max<size_t>(1, n / std::max<size_t>(1, min_chunk));
    const size_t chunks = std::min<size_t>(hardware_threads(), max_chunks);
    if (chunks <= 1) {
        if (n > 0) body(0, n);
        return;
    }
    std::vector<std::thread> threads;
    threads.reserve(chunks - 1);
    const size_t step = (n + chunks - 1) / chunks;
    for (size_t c = 1; c < chunks; ++c) {
        const size_t begin = c * step, end = std::min(n, begin + step);
        if (begin < end) threads.emplace_back(body, begin, end);
    }
    body(0, std::min(n, step));
    for (auto& t : threads) t.join();
}

}  // namespace kevo
