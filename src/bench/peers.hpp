// Peers of suite tasks, timed on the same device with the same protocol as the task's kernels
// (warm-ups, then timed calls each after a cache flush; the median counts): fft3d against the
// vendor FFT, saxpy against the vendor BLAS axpy and a plain vectorised kernel, the ML pack's GEMMs
// against cuBLASLt at the task's shape (gemm_peers.hpp). Each peer's output
// is checked after its timing (peer_checks.hpp). A peer that cannot run here (no vendor library on
// this backend) is reported with the reason, never dropped silently.
#pragma once

#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "eval/cache_flusher.hpp"
#include "task/task.hpp"

namespace kevo {

struct PeerTiming {
    std::string name;     // "cuFFT", "cuBLAS saxpy", "vectorised kernel"
    std::string library;  // what ran: library label and path, or the kernel's file
    double seconds = 0;   // median of the timed calls; 0 when it did not run
    double seconds_min = 0, seconds_max = 0;
    std::string error;    // why it did not run
    std::string check;    // after it ran: "ok", "wrong output: ..." (then no ratio is quoted), or "" (not checked)
    bool ran() const { return error.empty(); }
    bool right() const { return ran() && check == "ok"; }
};

bool task_has_peers(const std::string& task);

// Every peer of `task` at `size`, in a fixed order. Environment faults of one peer become its error.
std::vector<PeerTiming> time_peers(Device& device, CacheFlusher& flusher, const std::string& task, const SizeSpec& size,
                                   int warmup, int repeat);

}  // namespace kevo
