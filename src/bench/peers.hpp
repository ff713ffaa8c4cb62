// Peers of tasks, timed on the same device with the same protocol as the task's kernels
// (warm-ups, then timed calls each after a cache flush; the median counts). A task names its peers
// in its own folder (TaskSpec::peers); the table in peers.cpp maps each name to its implementation:
// the vendor FFT (fft3d), the vendor BLAS axpy and a plain vectorised kernel (saxpy), cuBLASLt at the
// task's shape for the ML pack's GEMMs (gemm_peers.hpp). Each peer's output
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

// The names of the peer table, in order: what a task may list in TaskSpec::peers.
std::vector<std::string> peer_names();
bool is_peer_name(const std::string& name);

// Every peer the task declares (spec.peers), timed at `size`, in the order declared. Environment
// faults of one peer become its error; a name the table lacks is a peer that did not run, saying so.
std::vector<PeerTiming> time_peers(Device& device, CacheFlusher& flusher, const TaskSpec& spec, const SizeSpec& size,
                                   int warmup, int repeat);

}  // namespace kevo
