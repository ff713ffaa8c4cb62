// What the ML pack's two attention operators (attention_prefill, attention_decode_paged) share: the
// exact softmax-weighted sum of one query row in double, from the values the device holds, and the
// check rule of both (per element, beyond the bf16 output's own rounding, relative to |ref| + rms(ref)).
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <limits>
#include <span>
#include <vector>

#include "task/checks.hpp"

namespace kevo {

// An element passes when its error beyond the output's own rounding is at most
// kAttentionRel * (|ref_i| + rms(ref)). 2^-7 (the research note's rule): an fp32 kernel, and a
// tensor-core one that carries P into the P V product as two bf16 (hi + lo), are >= 100 times
// inside at the outlier trial's large logits; P rounded to a single bf16 (2^-9 of |v| per dominant
// key) sits at about 1 on short rows. A skipped or shifted causal mask, a wrong GQA mapping, a
// dropped token and a fixed scale are off by 10 to 1000 times the tolerance (docs/ml-checks.md).
inline constexpr double kAttentionRel = 0x1.0p-7;

// out[0, d) = sum_j softmax_j(scale * q . k_j) v_j over n keys, in double with the maximum
// subtracted. key(j) and value(j) return pointers to d floats.
template <class KeyAt, class ValueAt>
void attend_row(const float* q, size_t d, double scale, size_t n, const KeyAt& key, const ValueAt& value, float* out) {
    std::vector<double> logits(n), acc(d, 0.0);
    double max_logit = -std::numeric_limits<double>::infinity();
    for (size_t j = 0; j < n; ++j) {
        const float* k = key(j);
        double dot = 0;
        for (size_t e = 0; e < d; ++e) dot += static_cast<double>(q[e]) * k[e];
        logits[j] = scale * dot;
        max_logit = std::max(max_logit, logits[j]);
    }
    double sum = 0;
    for (size_t j = 0; j < n; ++j) {
        const double p = std::exp(logits[j] - max_logit);
        sum += p;
        const float* v = value(j);
        for (size_t e = 0; e < d; ++e) acc[e] += p * v[e];
    }
    for (size_t e = 0; e < d; ++e) out[e] = static_cast<float>(acc[e] / sum);
}

// The rule above on a bf16 output (got) against its reference bytes (exact floats from the CPU, or
// the seed's bf16 output at device-reference sizes). kind "bf16_ulp".
CheckResult check_attention_output(const std::vector<std::byte>& got, const std::vector<std::byte>& want_bytes, size_t count,
                                   const IndexFormatter& where);

}  // namespace kevo
