// Outlier recipes for the ML tasks' Trial::outlier cases: the input patterns that break kernels
// which are right on well-behaved random data. Each recipe edits data in place, deterministically
// from (seed, stream) through kevo::rng, on row-major [rows, cols] float data; the task rounds to
// its storage type afterwards. The recipes:
//   spikes            KernelBench-X's rand_tensor(mode="outlier"): each element, with probability p,
//                     becomes randn * scale, clamped to +-clamp.
//   massive channels  a few columns hold values hundreds of times the rest, in every row (the
//                     "massive activations" of LLM hidden states, Sun et al. 2024).
//   constant rows     rows with zero variance (all one value; value 0 for an all-zero row).
//   large logits      rows shifted by a large offset (softmax without the max subtraction overflows).
//   ties and -inf     rows with repeated maxima and masked (-inf) entries.
//   skewed routing    top-k expert ids drawn from a Zipf-like law, with some experts never chosen.
//   saturating ints   int8 values at +-127 and int4 at -8 (the ends of the symmetric ranges).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace kevo::outliers {

struct Spikes {
    double probability = 0.001;  // KernelBench-X's defaults: p 0.001, scale 50, no clamp
    double scale = 50;
    double clamp = 0;  // 0: none; KernelBench-X's quantisation tasks use p 0.01, scale 10, clamp 10
};
// Returns how many elements were replaced.
size_t plant_spikes(std::span<float> data, const Spikes& spikes, uint64_t seed, uint64_t stream);

// `count` distinct columns (drawn from the seed) multiplied by `magnitude` in every row; returns them.
std::vector<size_t> plant_massive_channels(std::span<float> data, size_t rows, size_t cols, size_t count, double magnitude,
                                           uint64_t seed, uint64_t stream);

// Sets the given rows to `value` everywhere.
void set_constant_rows(std::span<float> data, size_t cols, std::span<const size_t> rows, float value);

// Adds `offset` to every element of the given rows.
void shift_rows(std::span<float> data, size_t cols, std::span<const size_t> rows, float offset);

// In each given row: the row's maximum is copied to `ties` further random positions, and `masked`
// other random positions become -inf (never all of the row). Positions come from the seed.
void plant_ties_and_neg_inf(std::span<float> data, size_t cols, std::span<const size_t> rows, size_t ties, size_t masked,
                            uint64_t seed, uint64_t stream);

// top-k expert ids for `tokens` tokens over `experts` experts, k distinct ids per token, drawn with
// weights 1 / (rank + 1)^skew over the first `used` experts (a random permutation decides which
// ids those are); the other experts get no token at all. Row-major [tokens, k].
std::vector<int32_t> skewed_routing(size_t tokens, size_t experts, size_t k, size_t used, double skew, uint64_t seed,
                                    uint64_t stream);

// Sets a fraction of the values to the ends of the symmetric int8 range (+-127), or of int4 to -8
// (and +7), at positions drawn from the seed; returns how many were set.
size_t saturate_int8(std::span<int8_t> data, double fraction, uint64_t seed, uint64_t stream);
size_t saturate_int4(std::span<int8_t> data, double fraction, uint64_t seed, uint64_t stream);

// `count` distinct indices in [0, n), drawn from the seed (count <= n), ascending.
std::vector<size_t> pick_distinct(size_t n, size_t count, uint64_t seed, uint64_t stream);

}  // namespace kevo::outliers
