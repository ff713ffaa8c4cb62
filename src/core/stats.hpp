// Summary statistics of repeated timings: median with its spread.
#pragma once

#include <vector>

namespace kevo {

struct Summary {
    double median = 0, min = 0, max = 0, mean = 0;
    double cv = 0;  // coefficient of variation: standard deviation / mean
    int count = 0;
};

Summary summarize(std::vector<double> samples);

// Geometric mean; 0 when any value is not positive.
double geometric_mean(const std::vector<double>& values);
// exp(sum w_i ln v_i / sum w_i); 0 when any value is not positive. Equal weights: geometric_mean.
double weighted_geometric_mean(const std::vector<double>& values, const std::vector<double>& weights);

}  // namespace kevo
