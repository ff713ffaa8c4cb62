// parallel_for over std::thread; see parallel.hpp.
#include "core/parallel.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
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
    // An exception in a chunk (std::bad_alloc in a reference) reaches the caller after every chunk
    // has ended, as it would on one thread, instead of terminating the process.
    std::exception_ptr first;
    std::mutex first_mutex;
    auto guarded = [&](size_t begin, size_t end) {
        try {
            body(begin, end);
        } catch (...) {
            std::lock_guard lock(first_mutex);
            if (!first) first = std::current_exception();
        }
    };
    std::vector<std::thread> threads;
    threads.reserve(chunks - 1);
    const size_t step = (n + chunks - 1) / chunks;
    for (size_t c = 1; c < chunks; ++c) {
        const size_t begin = c * step, end = std::min(n, begin + step);
        if (begin < end) threads.emplace_back(guarded, begin, end);
    }
    guarded(0, std::min(n, step));
    for (auto& t : threads) t.join();
    if (first) std::rethrow_exception(first);
}

void parallel_rows(size_t rows, const std::function<void(size_t, size_t)>& body) { parallel_for(rows, body, 1); }

}  // namespace kevo
