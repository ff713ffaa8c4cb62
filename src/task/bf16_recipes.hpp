// The bf16 comparator of the ML numerics contracts (docs/ml-checks.md): an output element passes
// against the exact value, as check_bf16_per_element has it, or against the value a named
// production recipe computes before its final rounding (vLLM's silu_and_mul, rms_norm, rotary
// embedding), each within the same tolerance beyond its own rounding. The exact reference stays
// the one the margin is reported against when it binds; a recipe only admits what it computes.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <utility>

#include "core/dtypes.hpp"
#include "task/checks.hpp"

namespace kevo {

// The values a recipe may hold for element i before its final bf16 rounding. An intermediate
// rounding whose input lies within an fp32 kernel's error of a bf16 midpoint may go either way, so
// a recipe can offer both (at most kMaxRecipeValues); it returns how many it wrote.
inline constexpr size_t kMaxRecipeValues = 4;
using RecipeValues = std::array<double, kMaxRecipeValues>;
using RecipeAt = std::function<size_t(size_t i, RecipeValues& values)>;

struct Bf16Recipe {
    std::string name;  // in messages: "vLLM's bf16(silu(g)) * u"
    RecipeAt values;
};

// One element's error against one reference value as the bf16 rules measure it: the excess beyond
// own_rounding ulp of want, over the allowance (0 when within the rounding; infinite over a zero
// allowance). The allowance of the contracts is ulps * ulp(want) + rel * scale.
double bf16_excess_ratio(double got, double want, double own_rounding, double allowance);
inline double bf16_allowance(const Bf16Tolerance& tolerance, double want, double scale) {
    return tolerance.ulps * bf16_ulp(want) + tolerance.rel * scale;
}

// Where a device reference gives two admitted recipes' values (the seed's and a task's
// recipe_reference kernel's), element i is judged against the nearer: want[i] becomes other[i]
// where got[i]'s excess ratio against it is smaller. Nearer by the rule's own measure, not in ulps
// alone, which picks the wrong one where a dot product cancels to near 0 (a tiny value's ulps are
// tiny). Both are bf16 values rounded like the output (own_rounding of each).
void take_nearer(std::span<float> want, std::span<const float> other, std::span<const uint16_t> got, double own_rounding,
                 const Bf16Tolerance& tolerance, const ElementScale& scale);

// Element i's error is the smaller of its error against want (beyond own_rounding ulp, as in
// check_bf16_per_element) and against each recipe value (beyond 0.5 ulp: a recipe value is exact,
// not yet rounded), each relative to its own allowance ulps * ulp(value) + rel * scale(i). Kind
// "bf16_ulp"; error and tolerance are those of the element nearest to failing, and the message says
// which reference admitted it. NaN or Inf in got fails as everywhere.
CheckResult check_bf16_exact_or_recipe(std::span<const uint16_t> got, std::span<const float> want, double own_rounding,
                                       const Bf16Tolerance& tolerance, const ElementScale& scale, const Bf16Recipe& recipe,
                                       const IndexFormatter& where = flat_index());

// The bf16 values that rounding any x within relative distance rel of v can give: the rounding of
// v(1 - rel) and of v(1 + rel), equal unless v lies near a midpoint (then the two neighbours).
std::pair<double, double> bf16_roundings_near(double v, double rel);

}  // namespace kevo
