// The outlier recipes (see outliers.hpp). Every draw is rng::bits / uniform / normal of
// (seed, stream, index), so a trial's inputs are the same on every machine and thread count.
#include "task/outliers.hpp"

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cmath>
#include <limits>
#include <numeric>
#include <unordered_map>

#include "core/parallel.hpp"
#include "core/rng.hpp"

namespace kevo::outliers {

std::vector<size_t> pick_distinct(size_t n, size_t count, uint64_t seed, uint64_t stream) {
    assert(count <= n);
    // A partial Fisher-Yates shuffle of the identity permutation that stores only swapped entries,
    // so picking few of many costs little.
    std::unordered_map<size_t, size_t> swapped;
    const auto value_at = [&](size_t position) {
        auto it = swapped.find(position);
        return it == swapped.end() ? position : it->second;
    };
    std::vector<size_t> out;
    out.reserve(count);
    for (size_t i = 0; i < count; ++i) {
        const size_t j = i + static_cast<size_t>(rng::bits(seed, stream, i) % (n - i));
        const size_t vi = value_at(i), vj = value_at(j);
        swapped[j] = vi;
        out.push_back(vj);
    }
    std::sort(out.begin(), out.end());
    return out;
}

size_t plant_spikes(std::span<float> data, const Spikes& spikes, uint64_t seed, uint64_t stream) {
    std::atomic<size_t> planted{0};
    parallel_for(data.size(), [&](size_t begin, size_t end) {
        size_t part = 0;
        for (size_t i = begin; i < end; ++i) {
            if (rng::uniform(seed, stream, 2 * i) >= spikes.probability) continue;
            double v = rng::normal(seed, stream, 2 * i + 1) * spikes.scale;
            if (spikes.clamp > 0) v = std::clamp(v, -spikes.clamp, spikes.clamp);
            data[i] = static_cast<float>(v);
            ++part;
        }
        planted += part;
    });
    return planted;
}

std::vector<size_t> plant_massive_channels(std::span<float> data, size_t rows, size_t cols, size_t count, double magnitude,
                                           uint64_t seed, uint64_t stream) {
    assert(data.size() == rows * cols);
    const auto channels = pick_distinct(cols, std::min(count, cols), seed, stream);
    const auto m = static_cast<float>(magnitude);
    parallel_for(rows, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r)
            for (size_t c : channels) data[r * cols + c] *= m;
    });
    return channels;
}

void set_constant_rows(std::span<float> data, size_t cols, std::span<const size_t> rows, float value) {
    for (size_t r : rows) std::fill_n(data.begin() + static_cast<std::ptrdiff_t>(r * cols), cols, value);
}

void shift_rows(std::span<float> data, size_t cols, std::span<const size_t> rows, float offset) {
    for (size_t r : rows)
        for (size_t c = 0; c < cols; ++c) data[r * cols + c] += offset;
}

void plant_ties_and_neg_inf(std::span<float> data, size_t cols, std::span<const size_t> rows, size_t ties, size_t masked,
                            uint64_t seed, uint64_t stream) {
    assert(ties + masked + 1 <= cols);
    for (size_t k = 0; k < rows.size(); ++k) {
        std::span<float> row = data.subspan(rows[k] * cols, cols);
        const auto top = static_cast<size_t>(std::max_element(row.begin(), row.end()) - row.begin());
        // Positions other than the maximum's: the first `ties` repeat it, the next `masked` are -inf.
        auto picks = pick_distinct(cols - 1, ties + masked, seed, stream * 1000003 + k);
        for (auto& p : picks) p += p >= top;
        std::vector<size_t> order(picks.size());
        std::iota(order.begin(), order.end(), size_t{0});
        std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
            return rng::bits(seed, stream + 1, picks[a]) < rng::bits(seed, stream + 1, picks[b]);
        });
        for (size_t i = 0; i < order.size(); ++i)
            row[picks[order[i]]] = i < ties ? row[top] : -std::numeric_limits<float>::infinity();
    }
}

std::vector<int32_t> skewed_routing(size_t tokens, size_t experts, size_t k, size_t used, double skew, uint64_t seed,
                                    uint64_t stream) {
    assert(k <= used && used <= experts);
    const auto ids = pick_distinct(experts, used, seed, stream);  // which experts get tokens
    std::vector<size_t> by_rank(ids.begin(), ids.end());
    std::sort(by_rank.begin(), by_rank.end(), [&](size_t a, size_t b) {
        return rng::bits(seed, stream + 1, a) < rng::bits(seed, stream + 1, b);
    });
    std::vector<double> cumulative(used);
    double total = 0;
    for (size_t r = 0; r < used; ++r) cumulative[r] = total += 1.0 / std::pow(static_cast<double>(r + 1), skew);
    std::vector<int32_t> out(tokens * k);
    parallel_rows(tokens, [&](size_t begin, size_t end) {
        for (size_t t = begin; t < end; ++t) {
            std::vector<bool> taken(used, false);
            uint64_t draw = 0;
            for (size_t j = 0; j < k; ++j) {
                size_t rank;
                do {  // redraw a taken rank: k distinct experts per token
                    const double u = rng::uniform(seed, stream + 2, t * 4096 + draw++) * total;
                    rank = static_cast<size_t>(std::upper_bound(cumulative.begin(), cumulative.end(), u) - cumulative.begin());
                    rank = std::min(rank, used - 1);
                } while (taken[rank]);
                taken[rank] = true;
                out[t * k + j] = static_cast<int32_t>(by_rank[rank]);
            }
        }
    });
    return out;
}

namespace {

size_t saturate(std::span<int8_t> data, double fraction, uint64_t seed, uint64_t stream, int8_t low, int8_t high) {
    size_t set = 0;
    for (size_t i = 0; i < data.size(); ++i) {
        if (rng::uniform(seed, stream, 2 * i) >= fraction) continue;
        data[i] = rng::uniform(seed, stream, 2 * i + 1) < 0.5 ? low : high;
        ++set;
    }
    return set;
}

}  // namespace

size_t saturate_int8(std::span<int8_t> data, double fraction, uint64_t seed, uint64_t stream) {
    return saturate(data, fraction, seed, stream, -127, 127);
}

size_t saturate_int4(std::span<int8_t> data, double fraction, uint64_t seed, uint64_t stream) {
    return saturate(data, fraction, seed, stream, -8, 7);
}

}  // namespace kevo::outliers
