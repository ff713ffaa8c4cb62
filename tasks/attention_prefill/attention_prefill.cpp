// ML pack, attention: attention_prefill, causal grouped-query attention over a variable-length batch
// (vLLM's flash_attn_varlen_func for prefill): q [T, Hq, d], k and v [T, Hkv, d] bf16, sequences
// given by cu_seqlens [B+1]; for token i of a sequence and query head h,
// out[i, h] = sum_{j <= i, same sequence} softmax_j(scale * q_i . k_j) v_j with kv head h / (Hq / Hkv),
// fp32 accumulation, rounded once to bf16 (P may be rounded once to bf16 before P V, as FlashAttention
// does: the rule's second term, attention_common.hpp). Tensor-core work: 4 d Hq sum_b L_b (L_b + 1) / 2 bf16
// FLOPs over 2(T Hq + 2 T Hkv) d + 2 T Hq d + 4(B + 1) bytes.
#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/attention_common.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

enum Stream : uint64_t { q_stream = 1, k_stream = 2, v_stream = 3, scale_stream = 4, spike_stream = 5, channel_stream = 8 };

// The large-logit channel of the outlier trial: q and k hold this value in one channel of every row,
// which adds scale * 1600 (>= 99 at every outlier scale) to every logit. Softmax is unchanged by it;
// exp without the maximum subtracted overflows fp32 (e^89 > FLT_MAX). Query head 0 holds -40 there
// instead: every logit of its rows is very negative, and a running maximum that starts at 0 instead
// of -inf underflows every exp.
constexpr float kLogitChannel = 40.0f;

// B sequences of L tokens each (mixed = 0), or B sequences of lengths spread over [1, L] (mixed = 1).
SizeSpec size_of(int64_t b, int64_t l, bool mixed, int64_t hq, int64_t hkv, int64_t d, bool heldout = false,
                 bool device_reference = false) {
    const std::string lengths = mixed ? fmt::format("1-{}", l) : std::to_string(l);
    SizeSpec s{fmt::format("{}x{}x{}x{}x{}", b, lengths, hq, hkv, d), heldout,
               {{"B", b}, {"L", l}, {"mixed", mixed ? 1 : 0}, {"Hq", hq}, {"Hkv", hkv}, {"d", d}}};
    s.device_reference = device_reference;
    return s;
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "attention_prefill";
    s.regime = "ML attention";
    s.pack = "ml";
    s.category = "attention";
    s.order = 115;
    s.bound = Bound::compute;
    s.model = "W = 4 d Hq sum_b L_b (L_b + 1) / 2 bf16 tensor FLOPs (causal pairs only); Q = 2(T Hq + 2 T Hkv) d + "
              "2 T Hq d + 4(B + 1) bytes (q, k, v read, out written, cu_seqlens; B sequences, T tokens)";
    s.tolerance = "bf16 out: per element, error beyond the output's own rounding <= 2^-7 (|ref| + rms(ref)) + 2^-7 "
                  "sum_j p_j |v_j| (admits P rounded once to bf16); NaN or Inf fails";
    s.kernels = {{"attention_prefill",
                  {sig::const_ptr("q", ParamType::bf16), sig::const_ptr("k", ParamType::bf16),
                   sig::const_ptr("v", ParamType::bf16),
                   sig::const_ptr("cu_seqlens", ParamType::i32), sig::ptr("out", ParamType::bf16),
                   sig::value("tokens", ParamType::u32), sig::value("num_seqs", ParamType::u32),
                   sig::value("q_heads", ParamType::u32), sig::value("kv_heads", ParamType::u32),
                   sig::value("head_dim", ParamType::u32), sig::value("scale", ParamType::f32)},
                  2, Dim3{128, 1, 1}}};
    // B x L x Hq x Hkv x d. small: PoCL in well under a second, head-group ratios 1, 4, 2 and 8. paper (CPU reference):
    // LLaMA-3-70B TP8 (8, 1) one 2k prompt, Qwen3-30B-A3B (32, 4) 8 x 512, LLaMA-3-8B (32, 8) 64 short
    // prompts; held out a mixed-length batch. large (the seed on the device as reference): 1 x 8192,
    // 4 x 2048, 64 x 256 and a mixed batch of up to 4096.
    s.profiles["small"] = {size_of(1, 128, false, 4, 4, 64), size_of(4, 64, false, 8, 2, 128),
                           size_of(16, 16, false, 4, 2, 64), size_of(6, 80, true, 8, 1, 128, true)};
    s.profiles["paper"] = {size_of(1, 2048, false, 8, 1, 128), size_of(8, 512, false, 32, 4, 128),
                           size_of(64, 128, false, 32, 8, 128), size_of(8, 600, true, 32, 8, 128, true)};
    s.profiles["large"] = {size_of(1, 8192, false, 32, 8, 128, false, true), size_of(4, 2048, false, 8, 1, 128, false, true),
                           size_of(64, 256, false, 32, 4, 128, false, true),
                           size_of(16, 4096, true, 32, 8, 128, true, true)};
    return s;
}

struct Shape {
    size_t b, l, hq, hkv, d;
    bool mixed;
};

Shape shape_of(const SizeSpec& size) {
    const auto p = [&](const char* n) { return static_cast<size_t>(size.param(n)); };
    return {p("B"), p("L"), p("Hq"), p("Hkv"), p("d"), size.param("mixed") != 0};
}

// The nominal lengths: all L, or (mixed) 1 + (L - 1) k / (B - 1) for k = (5b + 3) mod B, a fixed
// permutation (B coprime to 5) that puts a length-1 sequence and one of length L in every batch.
std::vector<size_t> nominal_lengths(const Shape& s) {
    std::vector<size_t> lengths(s.b, s.l);
    if (!s.mixed || s.b < 2) return lengths;
    for (size_t b = 0; b < s.b; ++b) lengths[b] = 1 + (s.l - 1) * ((5 * b + 3) % s.b) / (s.b - 1);
    return lengths;
}

// The outlier trial's lengths: the same tokens cut into a length-1 sequence and pieces of
// (T - 1) / B + 3 tokens, the last one shorter: lengths that are multiples of no tile.
std::vector<size_t> outlier_lengths(size_t tokens, size_t b) {
    std::vector<size_t> lengths{1};
    const size_t piece = (tokens - 1) / b + 3;
    for (size_t left = tokens - 1; left > 0;) {
        const size_t n = std::min(piece, left);
        lengths.push_back(n);
        left -= n;
    }
    return lengths;
}

std::vector<int32_t> prefix_sums(const std::vector<size_t>& lengths) {
    std::vector<int32_t> cu{0};
    for (size_t n : lengths) cu.push_back(cu.back() + static_cast<int32_t>(n));
    return cu;
}

size_t total(const std::vector<size_t>& lengths) {
    size_t t = 0;
    for (size_t n : lengths) t += n;
    return t;
}

class AttentionPrefillTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        std::vector<size_t> lengths = nominal_lengths(s);
        const size_t t = total(lengths);
        if (trial == Trial::outlier) lengths = outlier_lengths(t, s.b);
        std::vector<float> q(t * s.hq * s.d), k(t * s.hkv * s.d), v(t * s.hkv * s.d);
        rng::fill_normal(q, seed, q_stream, 0.0f, 1.0f);
        rng::fill_normal(k, seed, k_stream, 0.0f, 1.0f);
        rng::fill_normal(v, seed, v_stream, 0.0f, 1.0f);
        double scale = 1.0 / std::sqrt(static_cast<double>(s.d));
        if (trial == Trial::outlier) {
            scale *= draw_outlier(rng::uniform(seed, scale_stream, 0), 0.7, 1.5, 1.0, 0.15);
            plant_large_logits(q, k, s.hq, s.d, seed);
            outliers::plant_spikes(q, {}, seed, spike_stream);
            outliers::plant_spikes(k, {}, seed, spike_stream + 1);
            outliers::plant_spikes(v, {}, seed, spike_stream + 2);
        }
        const std::vector<int32_t> cu = prefix_sums(lengths);
        Case c;
        c.buffers.push_back(make_bf16_buffer("q", BufferRole::input, q));
        c.buffers.push_back(make_bf16_buffer("k", BufferRole::input, k));
        c.buffers.push_back(make_bf16_buffer("v", BufferRole::input, v));
        auto cu_buffer = make_buffer<int32_t>("cu_seqlens", BufferRole::input, ElemType::i32, cu.size());
        std::copy(cu.begin(), cu.end(), cu_buffer.as<int32_t>());
        c.buffers.push_back(std::move(cu_buffer));
        c.buffers.push_back(make_bf16_buffer("out", BufferRole::output, t * s.hq * s.d));
        const auto u = [](size_t x) { return ArgRef::u(static_cast<uint32_t>(x)); };
        c.launches.push_back({"attention_prefill",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::buf(3), ArgRef::buf(4), u(t),
                               u(lengths.size()), u(s.hq), u(s.hkv), u(s.d), ArgRef::f(static_cast<float>(scale))},
                              Dim3{t, s.hq, 1}});
        c.results = {4};
        c.constants = {{"scale", static_cast<double>(static_cast<float>(scale))}};
        double pairs = 0;
        for (size_t n : lengths) pairs += static_cast<double>(n) * static_cast<double>(n + 1) / 2;
        const double flops = 4.0 * static_cast<double>(s.d * s.hq) * pairs;
        c.flops_by_class = {{ComputeClass::tensor_bf16, flops}};
        c.roofline_bytes = 2.0 * static_cast<double>((t * s.hq + 2 * t * s.hkv) * s.d) +
                           2.0 * static_cast<double>(t * s.hq * s.d) + 4.0 * static_cast<double>(cu.size());
        c.work = flops;
        c.working_set_bytes = c.roofline_bytes;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const std::vector<float> q = bf16_values(c.buffers[0]), k = bf16_values(c.buffers[1]), v = bf16_values(c.buffers[2]);
        const int32_t* cu = c.buffers[3].as<int32_t>();
        const size_t seqs = c.buffers[3].count<int32_t>() - 1, t = q.size() / (s.hq * s.d), group = s.hq / s.hkv;
        const double scale = c.constants.at("scale");
        std::vector<float> out(q.size()), abs_weighted(q.size());
        parallel_rows(t * s.hq, [&](size_t begin, size_t end) {
            for (size_t row = begin; row < end; ++row) {
                const size_t i = row / s.hq, h = row % s.hq, kvh = h / group;
                const auto start = static_cast<size_t>(*(std::upper_bound(cu, cu + seqs + 1, static_cast<int32_t>(i)) - 1));
                const auto key = [&](size_t j) { return &k[((start + j) * s.hkv + kvh) * s.d]; };
                const auto value = [&](size_t j) { return &v[((start + j) * s.hkv + kvh) * s.d]; };
                attend_row(&q[row * s.d], s.d, scale, i - start + 1, key, value, &out[row * s.d], &abs_weighted[row * s.d]);
            }
        });
        return Reference{{to_bytes(out), to_bytes(abs_weighted)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 1 || ref.results.empty()) return missing_output();
        const Shape s = shape_of(size);
        const int32_t* cu = c.buffers[3].as<int32_t>();
        const std::vector<float> abs_weighted =
            ref.results.size() > 1 ? std::vector<float>(as_floats(ref.results[1]).begin(), as_floats(ref.results[1]).end())
                                   : bound_abs_weighted(s, c);
        const size_t seqs = c.buffers[3].count<int32_t>() - 1;
        const IndexFormatter where = [&, cu, seqs](int64_t e) {
            const auto u = static_cast<size_t>(e);
            const size_t i = u / (s.hq * s.d);
            const auto b = static_cast<size_t>(std::upper_bound(cu, cu + seqs + 1, static_cast<int32_t>(i)) - cu - 1);
            return fmt::format("(t={}: token {} of sequence {}, head={}, j={})", i, i - static_cast<size_t>(cu[b]), b,
                               u / s.d % s.hq, u % s.d);
        };
        return check_attention_output(outputs[0], ref.results[0], c.buffers[4].count<uint16_t>(), abs_weighted, where);
    }

private:
    // Where the reference is the device's (no sum_j p_j |v_j| from the CPU): its upper bound
    // max_j |v_j| over the keys of the token's sequence, per kv head and channel, O(T Hkv d).
    static std::vector<float> bound_abs_weighted(const Shape& s, const Case& c) {
        const std::vector<float> v = bf16_values(c.buffers[2]);
        const int32_t* cu = c.buffers[3].as<int32_t>();
        const size_t seqs = c.buffers[3].count<int32_t>() - 1, group = s.hq / s.hkv;
        std::vector<float> out(c.buffers[4].count<uint16_t>());
        parallel_rows(seqs, [&](size_t begin, size_t end) {
            std::vector<float> largest(s.hkv * s.d);
            for (size_t b = begin; b < end; ++b) {
                std::fill(largest.begin(), largest.end(), 0.0f);
                const auto first = static_cast<size_t>(cu[b]), last = static_cast<size_t>(cu[b + 1]);
                for (size_t j = first; j < last; ++j)
                    for (size_t e = 0; e < s.hkv * s.d; ++e) largest[e] = std::max(largest[e], std::fabs(v[j * s.hkv * s.d + e]));
                for (size_t i = first; i < last; ++i)
                    for (size_t h = 0; h < s.hq; ++h)
                        for (size_t e = 0; e < s.d; ++e) out[(i * s.hq + h) * s.d + e] = largest[h / group * s.d + e];
            }
        });
        return out;
    }

    // One channel of q and of k set to kLogitChannel in every row (a massive channel in both), the
    // q rows of head 0 to -kLogitChannel (every logit of theirs very negative).
    static void plant_large_logits(std::vector<float>& q, std::vector<float>& k, size_t hq, size_t d, uint64_t seed) {
        const auto channel = static_cast<size_t>(rng::bits(seed, channel_stream, 0) % d);
        for (size_t r = 0; r < q.size() / d; ++r) q[r * d + channel] = r % hq == 0 ? -kLogitChannel : kLogitChannel;
        for (size_t r = 0; r < k.size() / d; ++r) k[r * d + channel] = kLogitChannel;
    }

    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for out";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_attention_prefill_task() { return std::make_unique<AttentionPrefillTask>(); }

}  // namespace kevo
