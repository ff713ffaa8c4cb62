// See settle.hpp.
#include "core/settle.hpp"

#include <algorithm>
#include <cassert>
#include <cmath>

#include "core/stats.hpp"

namespace kevo {

double relative_spread(std::vector<double> values) {
    if (values.size() < 2) return 0;
    const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
    const double median = summarize(values).median;
    return median > 0 ? (*hi - *lo) / median : 0;
}

Expected<Settled> settle(const std::function<Expected<double>()>& pass, const SettleRules& rules) {
    assert(rules.max_passes >= 2 && rules.agreement > 0);
    Settled s;
    while (static_cast<int>(s.passes.size()) < rules.max_passes) {
        auto value = pass();
        if (!value) return value.error();
        s.passes.push_back(*value);
        const size_t n = s.passes.size();
        if (n >= 2) {
            const double a = s.passes[n - 2], b = s.passes[n - 1];
            if (std::fabs(a - b) <= rules.agreement * std::max(a, b)) {
                s.agreed = true;
                break;
            }
        }
    }
    s.value = s.passes.back();
    s.spread = relative_spread(s.passes);
    return s;
}

}  // namespace kevo
