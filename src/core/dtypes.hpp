// Host-side conversions between float and the narrow types the ML tasks store: bfloat16, IEEE
// half, fp8 e4m3 (OCP "FN": no infinities, max 448, NaN 0x7f/0xff), int8 and packed int4. Every
// conversion from float rounds to nearest, ties to even, so that inputs are generated and
// references computed from exactly the values a kernel reads.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace kevo {

// bfloat16: the top 16 bits of a float. NaN stays NaN (made quiet); overflow rounds to infinity.
uint16_t float_to_bf16(float value);
float bf16_to_float(uint16_t bits);
// The float nearest to value that bf16 can hold (float_to_bf16 then back).
float round_to_bf16(float value);

// IEEE 754 binary16, with subnormals. Overflow (|value| >= 65520) gives infinity.
uint16_t float_to_f16(float value);
float f16_to_float(uint16_t bits);

// What an fp8 conversion does with a finite value beyond 448 (after rounding): saturate to +-448
// (CUDA's __NV_SATFINITE, what quantisation kernels use) or give NaN (PyTorch's float8_e4m3fn).
enum class Fp8Overflow { saturate, nan };
uint8_t float_to_e4m3(float value, Fp8Overflow overflow = Fp8Overflow::saturate);
float e4m3_to_float(uint8_t bits);
inline constexpr float kE4m3Max = 448.0f;

// int8: round to nearest even, saturate to [-128, 127] (NaN gives 0).
int8_t float_to_i8(float value);

// int4 in [-8, 7], two per byte, the element with the even index in the low nibble. An odd count
// leaves the last high nibble 0. Values outside [-8, 7] are a caller's bug (asserted).
std::vector<uint8_t> pack_i4(std::span<const int8_t> values);
int8_t unpack_i4(std::span<const uint8_t> packed, size_t index);

// The spacing of bf16 values at |value| (one unit in the last place): 2^(e-7) for value in
// [2^e, 2^(e+1)); the subnormal spacing 2^-133 below 2^-126. For checks that count bf16 ulps.
double bf16_ulp(double value);

}  // namespace kevo
