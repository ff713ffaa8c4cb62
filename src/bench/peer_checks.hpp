// Checks of a peer's output, so that a ratio against a peer is a ratio against a right answer:
// the axpy peers are compared element by element with a x + y on the host; the FFT peer is
// compared at a few frequency bins with a direct DFT in double precision (a whole host FFT of a
// 512^3 cube would cost more than the bench of the task itself).
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace kevo {

// Why `y_out` is not a x + y_in (the worst element, its value and the expected one); nullopt when right.
std::optional<std::string> check_axpy(const std::vector<float>& x, const std::vector<float>& y_in, float a,
                                      const std::vector<float>& y_out);

using FrequencyBin = std::array<uint64_t, 3>;  // (kx, ky, kz)

// The bins check_fft3d samples for a cube of side n: the zero frequency, one fixed mixed bin and
// two drawn from a fixed stream, all distinct where n allows.
std::vector<FrequencyBin> fft3d_check_bins(uint64_t n);

// Why `out` is not the forward, unnormalised 3-D DFT of `in` at the sampled bins; nullopt when
// right. Both hold n^3 interleaved (re, im) floats, index (k n + j) n + i. Tolerance as the task's:
// 1e-3 + 1e-3 max |X| over the sampled bins.
std::optional<std::string> check_fft3d(const std::vector<float>& in, const std::vector<float>& out, uint64_t n);

}  // namespace kevo
