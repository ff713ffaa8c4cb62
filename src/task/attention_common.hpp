// What the ML pack's two attention operators (attention_prefill, attention_decode_paged) share: the
// exact softmax-weighted sum of one query row in double, from the values the device holds, and the
// check rule of both (per element, beyond the bf16 output's own rounding, relative to |ref| + rms(ref)
// plus the floor of a P rounded once to bf16, sum_j p_j |v_j|).
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
// kAttentionRel * (|ref_i| + rms(ref)) + kSingleBf16P * sum_j p_j |v_j,i|. The first term, 2^-7 (the
// research note's rule), is what fp32 softmax needs: an fp32 kernel and one that carries P as two
// bf16 (hi + lo) are >= 100 times inside at the outlier trial's large logits. The second admits
// FlashAttention-2/3's and cuDNN's recipe, P rounded once to bf16 before the P V product (the
// normaliser l from the fp32 P): each p_j is then off by at most 2^-8 p_j, so the output by at most
// 2^-8 sum_j p_j |v_j|, and 2^-7 of it leaves that recipe a margin of 2 in the worst case (the
// rounding errors' signs are random: 4.3 to 6 measured at small on PoCL). A skipped or shifted causal mask, a wrong GQA
// mapping, a dropped token and a fixed scale are still off by far more (docs/ml-checks.md).
inline constexpr double kAttentionRel = 0x1.0p-7;
inline constexpr double kSingleBf16P = 0x1.0p-7;

// out[0, d) = sum_j softmax_j(scale * q . k_j) v_j over n keys, in double with the maximum
// subtracted; abs_out[0, d) (when given) = sum_j softmax_j |v_j|, the single-bf16-P floor's scale.
// key(j) and value(j) return pointers to d floats.
template <class KeyAt, class ValueAt>
void attend_row(const float* q, size_t d, double scale, size_t n, const KeyAt& key, const ValueAt& value, float* out,
                float* abs_out = nullptr) {
    std::vector<double> logits(n), acc(d, 0.0), abs_acc(d, 0.0);
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
        for (size_t e = 0; e < d; ++e) acc[e] += p * v[e], abs_acc[e] += p * std::fabs(v[e]);
    }
    for (size_t e = 0; e < d; ++e) out[e] = static_cast<float>(acc[e] / sum);
    if (abs_out)
        for (size_t e = 0; e < d; ++e) abs_out[e] = static_cast<float>(abs_acc[e] / sum);
}

// The rule above on a bf16 output (got) against its reference bytes (exact floats from the CPU, or
// the seed's bf16 output at device-reference sizes). abs_weighted holds sum_j p_j |v_j| per element
// (the CPU reference's second result), or an upper bound of it where the reference is the device's.
// kind "bf16_ulp".
CheckResult check_attention_output(const std::vector<std::byte>& got, const std::vector<std::byte>& want_bytes, size_t count,
                                   std::span<const float> abs_weighted, const IndexFormatter& where);

}  // namespace kevo
