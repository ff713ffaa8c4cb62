// The exact-or-recipe bf16 comparator of the ML numerics contracts (see bf16_recipes.hpp).
#include "task/bf16_recipes.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

#include <fmt/format.h>

#include "core/dtypes.hpp"
#include "core/parallel.hpp"

namespace kevo {
namespace {

// Element i at its nearest reference: the ratio, and the reference value (index -1: exact).
struct Nearest {
    double ratio = std::numeric_limits<double>::infinity();
    double value = 0;
    int which = -1;
};

}  // namespace

double bf16_excess_ratio(double got, double want, double own_rounding, double allowance) {
    const double excess = std::max(0.0, std::fabs(got - want) - own_rounding * bf16_ulp(want));
    if (excess == 0) return 0.0;
    return allowance > 0 ? excess / allowance : std::numeric_limits<double>::infinity();
}

std::pair<double, double> bf16_roundings_near(double v, double rel) {
    const auto round = [](double x) { return static_cast<double>(round_to_bf16(static_cast<float>(x))); };
    return {round(v * (1 - rel)), round(v * (1 + rel))};
}

CheckResult check_bf16_exact_or_recipe(std::span<const uint16_t> got, std::span<const float> want, double own_rounding,
                                       const Bf16Tolerance& tolerance, const ElementScale& scale, const Bf16Recipe& recipe,
                                       const IndexFormatter& where) {
    std::vector<float> got_values(got.size());
    parallel_for(got.size(), [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) got_values[i] = bf16_to_float(got[i]);
    });
    CheckResult r;
    r.kind = "bf16_ulp";
    if (got.size() != want.size()) {
        r.kind = "size";
        r.message = fmt::format("output holds {} values, expected {}", got.size(), want.size());
        return r;
    }
    const auto allowance = [&](size_t i, double value) { return bf16_allowance(tolerance, value, scale(i)); };
    const auto nearest = [&](size_t i) {
        const double g = got_values[i];
        Nearest best{bf16_excess_ratio(g, want[i], own_rounding, allowance(i, want[i])), want[i], -1};
        if (best.ratio == 0) return best;
        RecipeValues values{};
        const size_t n = recipe.values(i, values);
        for (size_t k = 0; k < n; ++k) {
            const double ratio = bf16_excess_ratio(g, values[k], 0.5, allowance(i, values[k]));
            if (ratio < best.ratio) best = {ratio, values[k], static_cast<int>(k)};
        }
        return best;
    };
    // The element nearest to failing; NaN and Inf are found on the way (first index wins).
    int64_t worst = -1, first_bad = -1, bad = 0;
    double worst_ratio = -1;
    std::mutex lock;
    parallel_for(got.size(), [&](size_t begin, size_t end) {
        int64_t part_worst = -1, part_bad_first = -1, part_bad = 0;
        double part_ratio = -1;
        for (size_t i = begin; i < end; ++i) {
            if (!std::isfinite(got_values[i])) {
                if (part_bad_first < 0) part_bad_first = static_cast<int64_t>(i);
                ++part_bad;
                continue;
            }
            const double ratio = nearest(i).ratio;
            if (ratio > part_ratio) part_ratio = ratio, part_worst = static_cast<int64_t>(i);
        }
        std::lock_guard guard(lock);
        bad += part_bad;
        if (part_bad_first >= 0 && (first_bad < 0 || part_bad_first < first_bad)) first_bad = part_bad_first;
        if (part_ratio > worst_ratio || (part_ratio == worst_ratio && part_worst >= 0 && part_worst < worst))
            worst_ratio = part_ratio, worst = part_worst;
    });
    if (first_bad >= 0) {
        const auto i = static_cast<size_t>(first_bad);
        r.kind = "nan";
        r.error = std::numeric_limits<double>::quiet_NaN();
        r.worst_index = first_bad;
        r.message = fmt::format("{} at {} (first of {} non-finite values): expected {:.7g}",
                                std::isnan(got_values[i]) ? "NaN" : "Inf", where(first_bad), bad, want[i]);
        return r;
    }
    r.worst_index = worst;
    if (worst < 0) {
        r.pass = true;
        r.message = "no values to compare";
        return r;
    }
    const auto i = static_cast<size_t>(worst);
    const Nearest at = nearest(i);
    const double rounding = at.which < 0 ? own_rounding : 0.5, ulp = bf16_ulp(at.value);
    r.error = std::max(0.0, std::fabs(got_values[i] - at.value) - rounding * ulp);
    r.tolerance = allowance(i, at.value);
    r.pass = r.error <= r.tolerance;
    const std::string against = at.which < 0 ? std::string("the exact value") : recipe.name;
    r.message = fmt::format("nearest to failing: {}, nearest admitted reference {} ({:.7g}): |err| {} ulp, {} ulp beyond "
                            "the output's own rounding ({} ulp), against {} ulp + {} x scale {}; got {:.7g}, exact {:.7g}",
                            where(worst), against, at.value, short_sci(std::fabs(got_values[i] - at.value) / ulp),
                            short_sci(r.error / ulp), rounding, short_sci(tolerance.ulps), short_sci(tolerance.rel),
                            short_sci(scale(i)), got_values[i], want[i]);
    return r;
}

void take_nearer(std::span<float> want, std::span<const float> other, std::span<const uint16_t> got, double own_rounding,
                 const Bf16Tolerance& tolerance, const ElementScale& scale) {
    const auto ratio = [&](size_t i, double g, double w) {
        return bf16_excess_ratio(g, w, own_rounding, bf16_allowance(tolerance, w, scale(i)));
    };
    const size_t count = std::min({want.size(), other.size(), got.size()});
    for (size_t i = 0; i < count; ++i) {
        const double g = bf16_to_float(got[i]);
        if (ratio(i, g, other[i]) < ratio(i, g, want[i])) want[i] = other[i];
    }
}

}  // namespace kevo
