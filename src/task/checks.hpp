// Helpers shared by the task definitions: the comparators behind the checks (max-abs against the
// reference's magnitude, per element against each element's own scale, relative L2, bf16 outputs
// in ulps beyond their own rounding, bit-exact, the quantisation triple; all with NaN/Inf
// detection and messages that say where), index formatters for those messages, the decoding of
// narrow output types, and the draw of an outlier constant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "task/task.hpp"

namespace kevo {

// tolerance = abs + rel * max(rel_floor, max |want|). TASKS.md's first draft wrote saxpy's rule as
// 1e-5 * max(1, max|ref|), i.e. {0, 1e-5, 1}; heat2d's as 1e-4 + 1e-5*max|ref|, i.e. {1e-4, 1e-5, 0}.
// A stencil relative to the larger of its initial and final magnitude is {0, rel, max|u_0|}.
struct Tolerance {
    double abs = 0;
    double rel = 0;
    double rel_floor = 0;

    double resolve(double max_abs_want) const;
};

// Names a flat element index in a message: "[17]", "(x=17, y=0)", "body 5 (y)".
using IndexFormatter = std::function<std::string(int64_t)>;

IndexFormatter flat_index();
// Row-major grid with x fastest: "(x=17, y=0)" for 2-D, "(x=1, y=2, z=3)" when nz > 1 is given.
IndexFormatter grid_index(uint64_t nx, uint64_t ny, uint64_t nz = 1);
// Arrays of float4 records: "body 5 (y)".
IndexFormatter vec4_index(std::string noun);

// Compares got against want element by element, in parallel. Fails with kind "nan" (worst_index =
// first non-finite element of got) when got holds NaN or Inf anywhere, with kind "size" when the
// lengths differ, and with kind "max_abs" when max |got - want| exceeds the tolerance. A passing
// result also carries kind "max_abs", the largest error and where it was.
CheckResult check_max_abs(std::span<const float> got, std::span<const float> want, const Tolerance& tolerance,
                          const IndexFormatter& where = flat_index());

// Per element: element i passes when |got_i - want_i| <= abs + rel * scale(i), where scale(i) is
// what FP32 rounding at that element is proportional to (saxpy: |a x_i| + |y_i|; lbm: |f_ref_i|;
// fft3d: the rms of the whole spectrum). One large value then cannot set the scale for the others.
struct ElementTolerance {
    double abs = 0;
    double rel = 0;

    double at(double scale) const { return abs + rel * scale; }
};
using ElementScale = std::function<double(size_t)>;

ElementScale own_magnitude(std::span<const float> want);  // |want_i|
ElementScale constant_scale(double scale);                // the same for every element

// Fails like check_max_abs on NaN/Inf and on a length mismatch, with kind "per_element" when any
// element exceeds its tolerance. error and tolerance are those of the element nearest to failing
// (largest error/tolerance), so tolerance/error is the check's margin.
CheckResult check_per_element(std::span<const float> got, std::span<const float> want, const ElementTolerance& tolerance,
                              const ElementScale& scale, const IndexFormatter& where = flat_index());

// ||got - want||_2 <= bound * ||want||_2, sums in float64: a small error spread over every element
// (a scale factor, a slightly wrong constant) fails even where no single element stands out.
// Kind "rel_l2"; error is ||got - want|| / ||want||, tolerance the bound. NaN/Inf fail as above.
CheckResult check_relative_l2(std::span<const float> got, std::span<const float> want, double bound);

// The failing result of two, or of two passing (or two failing) ones the one with the larger
// error / tolerance (the smaller margin, or further outside). For tasks that apply two rules and
// report the one that binds; ties go to the first.
CheckResult binding(CheckResult a, CheckResult b);

// sqrt(mean of v_i^2), in float64.
double rms(std::span<const float> values);
// max |v_i| (0 for none). A stencil's check scales its tolerance by the larger of this over the
// initial state and over the reference: rounding happened at the magnitudes the run went through,
// which a decaying or spreading field no longer shows at its end.
double max_magnitude(std::span<const float> values);

// A bf16 output against its reference. The output's own rounding to bf16 is unavoidable and the
// same for every correct kernel, so element i's error is what lies beyond it:
//   excess_i = max(0, |got_i - want_i| - own_rounding * ulp(want_i))      (ulp: bf16_ulp)
// and element i passes when excess_i <= ulps * ulp(want_i) + rel * scale(i). own_rounding is 0.5
// when want is the exact value (a CPU reference in double, stored as float) and 1 when want is
// itself a bf16 result (a device reference). `rel * scale(i)` is the floor where terms cancel
// (rope's x1 cos - x2 sin near 0, where an ulp of the result is far below the fp32 error of
// its terms). Kind "bf16_ulp"; error and tolerance are those of the element nearest to failing,
// so tolerance / error is the margin. NaN or Inf in got fails as in check_max_abs.
struct Bf16Tolerance {
    double ulps = 0;
    double rel = 0;
};
CheckResult check_bf16_per_element(std::span<const uint16_t> got, std::span<const float> want, const Bf16Tolerance& tolerance,
                                   const ElementScale& scale, double own_rounding,
                                   const IndexFormatter& where = flat_index());

// A reference for a narrow output: a CPU reference holds exact values as floats, a device
// reference (the seed's own output) holds the output's bits. Tells them apart by size.
struct ReferenceValues {
    std::vector<float> values;
    double own_rounding = 0.5;  // 0.5 for exact values, 1 for values rounded like the output
};
ReferenceValues bf16_reference_values(const std::vector<std::byte>& ref, size_t count);

// Byte-for-byte equality of got and want, element by element (element_bytes wide). Kind
// "bit_exact"; error = the number of differing elements, tolerance 0; the message names the first.
CheckResult check_bit_exact(const std::vector<std::byte>& got, const std::vector<std::byte>& want, size_t element_bytes,
                            const IndexFormatter& where = flat_index());

// The quantisation triple (KernelBench-X's cosine / relative L1 / RMSE), all in float64:
//   cosine(got, want) >= min_cosine, sum|got - want| / sum|want| <= max_rel_l1,
//   rms(got - want) / rms(want) <= max_rel_rmse  (RMSE relative to rms(ref): the same number as
//   relative L2, bounded separately).
// KernelBench-X's 0.95 / 0.05 / 0.1 are for tasks that quantise inside the kernel; a kevo task gives
// the kernel its quantised operands and scales, so its reference is exact and its thresholds can
// be far tighter: each task sets its own. Kind "cosine", "rel_l1" or "rmse": the binding one (the
// cosine's error and tolerance are 1 - cosine and 1 - min_cosine). NaN/Inf fail as above.
struct QuantThresholds {
    double min_cosine = 0;
    double max_rel_l1 = 0;
    double max_rel_rmse = 0;
};
CheckResult check_quant_triple(std::span<const float> got, std::span<const float> want, const QuantThresholds& thresholds);

// The values of a downloaded buffer of a float type (f32, f16, bf16, f8e4m3) as floats; NaN and
// infinity patterns of each type come out as float NaN and infinity, so every float comparator
// above also checks narrow outputs. Asserts a float type and a whole number of elements.
std::vector<float> decode_floats(ElemType type, const std::vector<std::byte>& bytes);
// A downloaded bf16 buffer as its 16-bit words (its size must be even).
std::span<const uint16_t> as_bf16(const std::vector<std::byte>& bytes);

// Views a downloaded buffer as floats (its size must be a multiple of 4).
std::span<const float> as_floats(const std::vector<std::byte>& bytes);
// Copies floats into the byte form a Reference holds.
std::vector<std::byte> to_bytes(std::span<const float> values);

// "3.1e-2": scientific with one decimal and no padded exponent, as messages show errors.
std::string short_sci(double value);

// An outlier constant: uniform over [lo, hi] with (nominal - gap, nominal + gap) cut out, from a
// uniform u in [0, 1). The gap keeps a kernel that hard-codes the nominal value from passing by luck.
double draw_outlier(double u, double lo, double hi, double nominal, double gap);

}  // namespace kevo
