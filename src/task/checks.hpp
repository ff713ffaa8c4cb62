// Helpers shared by the task definitions: the generic max-abs comparator behind most checks
// (NaN/Inf detection, tolerance from the reference's magnitude, messages that say where), index
// formatters for those messages, and the draw of an outlier constant.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "task/task.hpp"

namespace kevo {

// tolerance = abs + rel * max(rel_floor, max |want|). TASKS.md writes saxpy's rule as
// 1e-5 * max(1, max|ref|), i.e. {0, 1e-5, 1}; heat2d's as 1e-4 + 1e-5*max|ref|, i.e. {1e-4, 1e-5, 0}.
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
