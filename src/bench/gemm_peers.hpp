// The cuBLASLt peers of the ML pack's GEMM tasks, at the task's shape (M, N, K):
//   gemm_bf16      -> cuBLASLt bf16 (fp32 accumulate, bf16 out);
//   gemm_w8a8      -> cuBLASLt int8 (int32 out: the per-token and per-channel scale epilogue is not
//                     in the peer, so the peer does slightly less than the task);
//   gemm_fp8_block -> cuBLASLt fp8 e4m3 with BLK128x128_32F (weights) and VEC128_32F (activations)
//                     block scales (CUDA 12.9+), or a peer that did not run, with the reason.
// Inputs are drawn here (the same distributions as the tasks'), and each peer's output is checked at
// sampled elements against dot products in double (peer_checks.hpp) before any ratio is quoted.
#pragma once

#include <string>

#include "bench/peers.hpp"

namespace kevo {

bool is_gemm_peer_task(const std::string& task);

// The one cuBLASLt peer of `task` at `size` (its params M, N, K).
PeerTiming time_gemm_peer(Device& device, CacheFlusher& flusher, const std::string& task, const SizeSpec& size, int warmup,
                          int repeat);

}  // namespace kevo
