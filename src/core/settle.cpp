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
    double best = 0, second = 0;
    while (static_cast<int>(s.passes.size()) < rules.max_passes) {
        auto value = pass();
        if (!value) return value.error();
        s.passes.push_back(*value);
        if (*value > best) second = best, best = *value;
        else if (*value > second) second = *value;
        if (s.passes.size() >= 2 && best - second <= rules.agreement * best) {
            s.agreed = true;
            break;
        }
    }
    s.value = best;
    s.spread = relative_spread(s.passes);
    return s;
}

}  // namespace kevo
