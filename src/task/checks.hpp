// Helpers shared by the task definitions: the comparators behind the checks (max-abs against the
// reference's magnitude, per element against each element's own scale, relative L2; all with
// NaN/Inf detection and messages that say where), index formatters for those messages, and the
// draw of an outlier constant.
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
