// The check rule of the ML pack's attention operators (attention_common.hpp).
#include "task/attention_common.hpp"

namespace kevo {

CheckResult check_attention_output(const std::vector<std::byte>& got, const std::vector<std::byte>& want_bytes, size_t count,
                                   std::span<const float> abs_weighted, const IndexFormatter& where) {
    const ReferenceValues want = bf16_reference_values(want_bytes, count);
    const double signal = rms(want.values);
    const ElementScale scale = [&](size_t i) {
        return std::fabs(static_cast<double>(want.values[i])) + signal + kSingleBf16P / kAttentionRel * abs_weighted[i];
    };
    return check_bf16_per_element(as_bf16(got), want.values, Bf16Tolerance{0, kAttentionRel}, scale, want.own_rounding,
                                  where);
}

}  // namespace kevo
