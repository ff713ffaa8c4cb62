// The cuBLASLt peers of the ML pack's GEMM tasks, at the task's shape (M, N, K), by routine (the
// peer table's names, peers.cpp, and the tasks that declare them):
//   gemm_bf16      ("cublaslt_bf16", gemm_bf16) -> bf16 operands, fp32 accumulate, bf16 out;
//   gemm_int8      ("cublaslt_int8", gemm_w8a8) -> int32 out: the per-token and per-channel scale
//                     epilogue is not in the peer, so the peer does slightly less than the task;
//   gemm_fp8_block ("cublaslt_fp8_block", gemm_fp8_block) -> fp8 e4m3 with BLK128x128_32F (weights)
//                     and VEC128_32F (activations) block scales (CUDA 12.9+), or a peer that did not
//                     run, with the reason.
// Inputs are drawn here (the same distributions as the tasks'), and each peer's output is checked at
// sampled elements against dot products in double (peer_checks.hpp) before any ratio is quoted.
#pragma once

#include <string>

#include "backend/vendor_routines.hpp"
#include "bench/peers.hpp"

namespace kevo {

// The cuBLASLt GEMM `routine` (gemm_bf16, gemm_int8 or gemm_fp8_block) at `size` (its params M, N, K).
PeerTiming time_gemm_peer(Device& device, CacheFlusher& flusher, VendorRoutine routine, const SizeSpec& size, int warmup,
                          int repeat);

}  // namespace kevo
