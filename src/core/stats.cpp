// Median, extremes and coefficient of variation of a sample; geometric mean of scores.
#include "core/stats.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace kevo {

Summary summarize(std::vector<double> samples) {
    Summary s;
    s.count = static_cast<int>(samples.size());
    if (samples.empty()) return s;
    std::sort(samples.begin(), samples.end());
    const size_t n = samples.size();
    s.median = n % 2 ? samples[n / 2] : 0.5 * (samples[n / 2 - 1] + samples[n / 2]);
    s.min = samples.front();
    s.max = samples.back();
    s.mean = std::accumulate(samples.begin(), samples.end(), 0.0) / n;
    double var = 0;
    for (double x : samples) var += (x - s.mean) * (x - s.mean);
    var = n > 1 ? var / (n - 1) : 0;
    s.cv = s.mean > 0 ? std::sqrt(var) / s.mean : 0;
    return s;
}

double geometric_mean(const std::vector<double>& values) {
    if (values.empty()) return 0;
    double log_sum = 0;
    for (double v : values) {
        if (!(v > 0)) return 0;
        log_sum += std::log(v);
    }
    return std::exp(log_sum / values.size());
}

double weighted_geometric_mean(const std::vector<double>& values, const std::vector<double>& weights) {
    if (values.empty() || values.size() != weights.size()) return 0;
    double log_sum = 0, weight_sum = 0;
    for (size_t i = 0; i < values.size(); ++i) {
        if (!(values[i] > 0)) return 0;
        log_sum += weights[i] * std::log(values[i]);
        weight_sum += weights[i];
    }
    return weight_sum > 0 ? std::exp(log_sum / weight_sum) : 0;
}

}  // namespace kevo
