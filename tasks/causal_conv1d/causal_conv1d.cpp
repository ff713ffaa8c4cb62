// ML pack, short convolution: causal_conv1d, the width-4 causal depthwise convolution of Qwen3-Next's
// gated-delta-net layers and of Mamba/Mamba2 hybrids (Dao-AILab causal-conv1d; vLLM's
// causal_conv1d_fn for prefill and causal_conv1d_update for decode), with SiLU applied and the
// per-sequence conv state kept in a cache of lines. One task, two kernels, two size families:
//   conv1d_prefill  varlen prefill over x [T, dim] (token-major, channels contiguous: vLLM's layout,
//                   whose x is a transposed [tokens, dim] tensor), sequences given by query_start_loc;
//                   a sequence's window before its first token reads its cache line when
//                   has_initial_state is set, zeros otherwise, never the previous sequence; its
//                   line is then overwritten with its last 3 inputs (state and x concatenated).
//   conv1d_update   decode, one token per sequence: x [B, dim], the line shifted by one in place.
// out[t, c] = silu(w[c,0] x[t-3, c] + w[c,1] x[t-2, c] + w[c,2] x[t-1, c] + w[c,3] x[t, c] + b[c]).
// The conv cache is [lines, 3, dim] bf16 (vLLM allocates it as (pool, width - 1, dim) and views it
// transposed), slot 0 the oldest. Bandwidth-bound. The contract: out within half an ulp beyond its
// own rounding of the fp32 value (the sum in the order above, then silu in fp32), with a floor of
// 2^-15 (|b| + sum |w x|); the whole cache bit-exact.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <numeric>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr size_t kWidth = 4, kState = kWidth - 1;

// Production accumulates the five terms in fp32 in its own order (vLLM's Triton kernel starts from
// the bias; Dao's CUDA kernel sums the taps then adds it, FMA or not) and takes silu with its own exp
// (expf, __expf, tl.exp). The products of two bf16 are exact in fp32, so any order is within
// 4 * 2^-24 S of the exact sum (S = |b| + sum |w x|) and within 2^-21 S of the reference's order;
// silu' <= 1.1 and an approximate exp adds at most ~|s| 2^-24 relative. Beyond the output's own
// rounding, half an ulp of the value plus the floor 2^-15 S admits all of it at least 50x over where
// the sum cancels (the floor binds), and ~10^4x elsewhere (the half ulp binds). A wrong kernel moves
// a term: a reversed tap, a missing bias, a window across a sequence start are off by ~|w x| ~ S/4,
// four orders beyond. A bf16 accumulator (2^-9 S per add) fails too.
constexpr Bf16Tolerance kTolerance{0.5, 0x1.0p-15};

enum Stream : uint64_t {
    x_stream = 1, weight_stream = 2, bias_stream = 3, cache_stream = 4, length_stream = 5, flag_stream = 6,
    line_stream = 7, spike_stream = 8, channel_stream = 9, cache_spike_stream = 10, order_stream = 11
};

struct Shape {
    bool decode = false;
    size_t dim = 0, tokens = 0, seqs = 0;  // decode: tokens = seqs = batch
    size_t lines() const { return 2 * seqs + 3; }  // more cache lines than sequences: untouched ones too
};

Shape shape_of(const SizeSpec& size) {
    return {size.param("decode") != 0, static_cast<size_t>(size.param("dim")), static_cast<size_t>(size.param("tokens")),
            static_cast<size_t>(size.param("seqs"))};
}

SizeSpec prefill(int64_t dim, int64_t t, int64_t seqs, bool heldout = false) {
    return {fmt::format("prefill-d{}-T{}x{}", dim, t, seqs), heldout,
            {{"decode", 0}, {"dim", dim}, {"tokens", t}, {"seqs", seqs}}};
}
SizeSpec decode(int64_t dim, int64_t b, bool heldout = false) {
    return {fmt::format("decode-d{}-B{}", dim, b), heldout, {{"decode", 1}, {"dim", dim}, {"tokens", b}, {"seqs", b}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "causal_conv1d";
    s.regime = "ML short convolution";
    s.pack = "ml";
    s.category = "conv";
    s.order = 134;
    s.bound = Bound::bandwidth;
    s.model = "prefill: 4 B per x element (read x, write out) + 10 B per channel (weight, bias) + 6 B per channel "
              "per sequence written to the cache and per sequence read from it + 12 B per sequence of indices; "
              "decode: 16 B per element (x, out, a 3-token line read and written) + 10 B per channel + 4 B per row";
    s.tolerance = "out: bf16 within 0.5 ulp beyond its own rounding of the fp32 value (taps summed oldest first, then "
                  "the bias, silu in fp32), floor 2^-15 (|b| + sum |w x|); conv cache bit-exact over every line; NaN "
                  "or Inf fails";
    const auto bf = ParamType::bf16;
    s.kernels = {{"conv1d_prefill",
                  {sig::const_ptr("x", bf), sig::const_ptr("weight", bf), sig::const_ptr("bias", bf),
                   sig::ptr("conv_states", bf), sig::const_ptr("query_start_loc", ParamType::i32),
                   sig::const_ptr("cache_indices", ParamType::i32), sig::const_ptr("has_initial_state", ParamType::i32),
                   sig::ptr("out", bf), sig::value("dim", ParamType::u32), sig::value("tokens", ParamType::u32),
                   sig::value("seqs", ParamType::u32)},
                  2,
                  Dim3{256, 1, 1}},
                 {"conv1d_update",
                  {sig::const_ptr("x", bf), sig::const_ptr("weight", bf), sig::const_ptr("bias", bf),
                   sig::ptr("conv_state", bf), sig::const_ptr("conv_state_indices", ParamType::i32), sig::ptr("out", bf),
                   sig::value("dim", ParamType::u32), sig::value("batch", ParamType::u32)},
                  2,
                  Dim3{256, 1, 1}}};
    // Qwen3-Next-80B-A3B's conv dim is 2 * 16 * 128 (q, k) + 32 * 128 (v) = 8192 at TP1, 4096 at TP2.
    // small: PoCL in seconds, varlen batches of 5-6 prompts and a decode batch. paper: a TP2 batch of
    // 8 prompts, single-token decode (Atrex's trace calls T = 1 17910 times) and a batch of 64; held
    // out a TP2 decode batch of 128. large: one 14807-token prompt (the top of the review's range), 16
    // prompts at TP2, a 256-row decode batch; held out 4 prompts of ~1k at TP1.
    s.profiles["small"] = {prefill(256, 160, 5), prefill(640, 67, 6), decode(512, 16), prefill(384, 97, 5, true)};
    s.profiles["paper"] = {prefill(4096, 2048, 8), decode(8192, 1), decode(8192, 64), decode(4096, 128, true)};
    s.profiles["large"] = {prefill(8192, 14807, 1), prefill(4096, 8192, 16), decode(8192, 256),
                           prefill(8192, 4096, 4, true)};
    return s;
}

// Sequence lengths summing to T. Nominal: every sequence at least 4 tokens, so every window that
// reaches before a start does so from a token the sequence owns. Outlier: sequences 1, 2, 3 (where
// there are at least 5) have 1, 2 and 3 tokens: the written line then mixes the initial state (or
// zeros) with the sequence's tokens.
std::vector<size_t> lengths_of(const Shape& s, uint64_t seed, Trial trial) {
    std::vector<size_t> fixed(s.seqs, 0);
    if (trial == Trial::outlier && s.seqs >= 5)
        for (size_t k = 1; k <= 3; ++k) fixed[k] = k;
    size_t free_tokens = s.tokens, free_seqs = 0;
    for (size_t f : fixed) free_tokens -= f, free_seqs += f == 0;
    std::vector<double> u(s.seqs);
    double sum = 0;
    for (size_t k = 0; k < s.seqs; ++k)
        if (!fixed[k]) sum += u[k] = 0.5 + rng::uniform(seed, length_stream, k);
    std::vector<size_t> len(s.seqs);
    const size_t spare = free_tokens - 4 * free_seqs;  // sizes keep T >= 4 seqs + 6
    size_t given = 0, last = 0;
    for (size_t k = 0; k < s.seqs; ++k) {
        if (fixed[k]) {
            len[k] = fixed[k];
            continue;
        }
        len[k] = 4 + static_cast<size_t>(std::floor(static_cast<double>(spare) * u[k] / sum));
        given += len[k], last = k;
    }
    len[last] += free_tokens - given;
    return len;
}

// has_initial_state per sequence. Sequence 0 continues a cached prefix and sequence 1 starts fresh
// (its line holds another request's stale state, which it must not read); the rest are drawn. In
// the outlier trial the three short sequences are: 1 token continuing, 2 tokens fresh, 3 continuing.
std::vector<int32_t> flags_of(const Shape& s, uint64_t seed, Trial trial) {
    std::vector<int32_t> f(s.seqs);
    for (size_t k = 0; k < s.seqs; ++k) f[k] = rng::uniform(seed, flag_stream, k) < 0.5;
    if (s.seqs >= 1) f[0] = 1;
    if (s.seqs >= 2) f[1] = 0;
    if (trial == Trial::outlier && s.seqs >= 5) f[1] = 1, f[2] = 0, f[3] = 1;
    return f;
}

// `count` distinct cache lines in a seeded order.
std::vector<int32_t> lines_of(const Shape& s, uint64_t seed) {
    auto picked = outliers::pick_distinct(s.lines(), s.seqs, seed, line_stream);
    std::vector<size_t> order(picked.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return rng::bits(seed, order_stream, a) < rng::bits(seed, order_stream, b);
    });
    std::vector<int32_t> out(picked.size());
    for (size_t k = 0; k < picked.size(); ++k) out[k] = static_cast<int32_t>(picked[order[k]]);
    return out;
}

HostBuffer i32_buffer(std::string name, const std::vector<int32_t>& values) {
    auto b = make_buffer<int32_t>(std::move(name), BufferRole::input, ElemType::i32, values.size());
    std::copy(values.begin(), values.end(), b.as<int32_t>());
    return b;
}

float silu(float s) { return s / (1.0f + std::exp(-s)); }

// The reference of one output: the taps oldest first, then the bias, each sum rounded to fp32 (the
// products of bf16 values are exact), silu in fp32; and its scale |b| + sum |w x|.
struct OneOutput {
    float value;
    double scale;
};
OneOutput conv_one(const float* w, float b, const float window[kWidth]) {
    float acc = w[0] * window[0];
    double scale = std::fabs(static_cast<double>(w[0]) * window[0]) + std::fabs(b);
    for (size_t k = 1; k < kWidth; ++k) {
        acc += w[k] * window[k];
        scale += std::fabs(static_cast<double>(w[k]) * window[k]);
    }
    acc += b;
    return {silu(acc), scale};
}

// Buffer indices of the two families.
enum PrefillBuf { p_x, p_weight, p_bias, p_cache, p_qsl, p_lines, p_flags, p_out };
enum DecodeBuf { d_x, d_weight, d_bias, d_cache, d_lines, d_out };

class CausalConv1dTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        std::vector<float> x(s.tokens * s.dim), weight(s.dim * kWidth), bias(s.dim), cache(s.lines() * kState * s.dim);
        rng::fill_normal(x, seed, x_stream, 0.0f, 1.0f);
        rng::fill_normal(weight, seed, weight_stream, 0.0f, 0.5f);
        rng::fill_normal(bias, seed, bias_stream, 0.0f, 0.5f);
        rng::fill_normal(cache, seed, cache_stream, 0.0f, 1.0f);
        if (trial == Trial::outlier) {
            // Large magnitudes: spikes, and a few channels ~300x the rest in x and in every cache
            // line alike (massive activations persist across tokens). With weights ~0.5 their sums
            // reach a few hundred, far into both silu tails (exp(-s) overflows fp32 below -88.7 and
            // exp(s) above 88.7).
            outliers::plant_spikes(x, {0.01, 30, 0}, seed, spike_stream);
            outliers::plant_spikes(cache, {0.01, 30, 0}, seed, cache_spike_stream);
            const auto channels = outliers::plant_massive_channels(x, s.tokens, s.dim, 4, 300, seed, channel_stream);
            for (size_t row = 0; row < s.lines() * kState; ++row)
                for (size_t c : channels) cache[row * s.dim + c] *= 300.0f;
        }
        Case c;
        c.buffers.push_back(make_bf16_buffer("x", BufferRole::input, x));
        c.buffers.push_back(make_bf16_buffer("weight", BufferRole::input, weight));
        c.buffers.push_back(make_bf16_buffer("bias", BufferRole::input, bias));
        const auto lines = lines_of(s, seed);
        const double d = static_cast<double>(s.dim);
        if (s.decode) {
            c.buffers.push_back(make_bf16_buffer("conv_state", BufferRole::state, cache));
            c.buffers.push_back(i32_buffer("conv_state_indices", lines));
            c.buffers.push_back(make_bf16_buffer("out", BufferRole::output, s.tokens * s.dim));
            c.launches.push_back({"conv1d_update",
                                  {ArgRef::buf(d_x), ArgRef::buf(d_weight), ArgRef::buf(d_bias), ArgRef::buf(d_cache),
                                   ArgRef::buf(d_lines), ArgRef::buf(d_out), ArgRef::u(static_cast<uint32_t>(s.dim)),
                                   ArgRef::u(static_cast<uint32_t>(s.tokens))},
                                  Dim3{s.dim, s.tokens, 1}});
            c.results = {d_out, d_cache};
            c.constants = {{"cache_lines", static_cast<double>(s.lines())}};
            c.work = 16.0 * d * static_cast<double>(s.tokens) + 10.0 * d + 4.0 * static_cast<double>(s.tokens);
        } else {
            const auto len = lengths_of(s, seed, trial);
            std::vector<int32_t> qsl(s.seqs + 1, 0);
            for (size_t k = 0; k < s.seqs; ++k) qsl[k + 1] = qsl[k] + static_cast<int32_t>(len[k]);
            const auto flags = flags_of(s, seed, trial);
            c.buffers.push_back(make_bf16_buffer("conv_states", BufferRole::state, cache));
            c.buffers.push_back(i32_buffer("query_start_loc", qsl));
            c.buffers.push_back(i32_buffer("cache_indices", lines));
            c.buffers.push_back(i32_buffer("has_initial_state", flags));
            c.buffers.push_back(make_bf16_buffer("out", BufferRole::output, s.tokens * s.dim));
            c.launches.push_back({"conv1d_prefill",
                                  {ArgRef::buf(p_x), ArgRef::buf(p_weight), ArgRef::buf(p_bias), ArgRef::buf(p_cache),
                                   ArgRef::buf(p_qsl), ArgRef::buf(p_lines), ArgRef::buf(p_flags), ArgRef::buf(p_out),
                                   ArgRef::u(static_cast<uint32_t>(s.dim)), ArgRef::u(static_cast<uint32_t>(s.tokens)),
                                   ArgRef::u(static_cast<uint32_t>(s.seqs))},
                                  Dim3{s.dim, s.tokens, 1}});
            c.results = {p_out, p_cache};
            const double continued = static_cast<double>(std::count(flags.begin(), flags.end(), 1));
            c.constants = {{"continued_sequences", continued}};
            c.work = 4.0 * d * static_cast<double>(s.tokens) + 10.0 * d +
                     6.0 * d * (static_cast<double>(s.seqs) + continued) + 12.0 * static_cast<double>(s.seqs) + 4.0;
        }
        c.working_set_bytes = c.work;
        return c;
    }

    HostFootprint host_footprint(const SizeSpec& size) const override {
        const Shape s = shape_of(size);
        const uint64_t elems = uint64_t(s.tokens) * s.dim, cache = uint64_t(s.lines()) * kState * s.dim;
        // bf16 x and out, the cache; the reference's floats (x, cache, out, scales) and the check's.
        return {4 * elems + 2 * cache, 24 * elems + 12 * cache};
    }

    // results: out (fp32 values, unrounded), the cache after the run (bf16 bits), and the scale of
    // every output (|b| + sum |w x|, as floats) for the check.
    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const std::vector<float> x = bf16_values(c.buffers[0]), w = bf16_values(c.buffers[1]), b = bf16_values(c.buffers[2]);
        const std::vector<float> cache = bf16_values(c.buffers[3]);
        const auto* cache_bits = c.buffers[3].as<uint16_t>();
        std::vector<float> out(s.tokens * s.dim), scale(s.tokens * s.dim);
        std::vector<std::byte> next = c.buffers[3].data;
        auto* next_bits = reinterpret_cast<uint16_t*>(next.data());
        const auto& xbits = c.buffers[0];
        const int32_t* lines = c.buffers[s.decode ? static_cast<int>(d_lines) : static_cast<int>(p_lines)].as<int32_t>();
        const size_t dim = s.dim;
        if (s.decode) {
            parallel_rows(s.tokens, [&](size_t begin, size_t end) {
                for (size_t r = begin; r < end; ++r) {
                    const auto line = static_cast<size_t>(lines[r]);
                    for (size_t ch = 0; ch < dim; ++ch) {
                        float window[kWidth];
                        for (size_t k = 0; k < kState; ++k) window[k] = cache[(line * kState + k) * dim + ch];
                        window[kState] = x[r * dim + ch];
                        const auto o = conv_one(&w[ch * kWidth], b[ch], window);
                        out[r * dim + ch] = o.value, scale[r * dim + ch] = static_cast<float>(o.scale);
                        // The line shifts by one: the oldest drops out, the new token enters last.
                        for (size_t k = 0; k + 1 < kState; ++k)
                            next_bits[(line * kState + k) * dim + ch] = cache_bits[(line * kState + k + 1) * dim + ch];
                        next_bits[(line * kState + kState - 1) * dim + ch] = xbits.as<uint16_t>()[r * dim + ch];
                    }
                }
            });
        } else {
            const int32_t* qsl = c.buffers[p_qsl].as<int32_t>();
            const int32_t* flags = c.buffers[p_flags].as<int32_t>();
            // Position p of sequence q's concatenation (the window before it, its tokens) counted
            // from -3: p < 0 is its line when it continues a prefix, else zero.
            auto before = [&](size_t q, ptrdiff_t p, size_t ch) {
                return flags[q] ? cache[(static_cast<size_t>(lines[q]) * kState + static_cast<size_t>(kState + p)) * dim + ch] : 0.0f;
            };
            parallel_rows(s.tokens, [&](size_t begin, size_t end) {
                for (size_t t = begin; t < end; ++t) {
                    const auto q = static_cast<size_t>(std::upper_bound(qsl, qsl + s.seqs + 1, static_cast<int32_t>(t)) - qsl) - 1;
                    const auto j = static_cast<ptrdiff_t>(t) - qsl[q];
                    for (size_t ch = 0; ch < dim; ++ch) {
                        float window[kWidth];
                        for (size_t k = 0; k < kWidth; ++k) {
                            const ptrdiff_t p = j + static_cast<ptrdiff_t>(k) - static_cast<ptrdiff_t>(kState);
                            window[k] = p < 0 ? before(q, p, ch) : x[(static_cast<size_t>(qsl[q]) + static_cast<size_t>(p)) * dim + ch];
                        }
                        const auto o = conv_one(&w[ch * kWidth], b[ch], window);
                        out[t * dim + ch] = o.value, scale[t * dim + ch] = static_cast<float>(o.scale);
                    }
                }
            });
            // Each line afterwards: the last 3 positions of its sequence's concatenation, oldest first
            // (the line's own values, or zeros, where the sequence has fewer than 3 tokens).
            for (size_t q = 0; q < s.seqs; ++q) {
                const auto line = static_cast<size_t>(lines[q]);
                const auto n = static_cast<ptrdiff_t>(qsl[q + 1] - qsl[q]);
                for (size_t k = 0; k < kState; ++k) {
                    const ptrdiff_t p = n - static_cast<ptrdiff_t>(kState) + static_cast<ptrdiff_t>(k);
                    for (size_t ch = 0; ch < dim; ++ch) {
                        uint16_t v = 0;
                        if (p >= 0) v = xbits.as<uint16_t>()[(static_cast<size_t>(qsl[q]) + static_cast<size_t>(p)) * dim + ch];
                        else if (flags[q]) v = cache_bits[(line * kState + static_cast<size_t>(static_cast<ptrdiff_t>(kState) + p)) * dim + ch];
                        next_bits[(line * kState + k) * dim + ch] = v;
                    }
                }
            }
        }
        return Reference{{to_bytes(out), std::move(next), to_bytes(scale)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 2 || ref.results.size() != 3) return missing_output();
        const Shape s = shape_of(size);
        const int out_index = s.decode ? static_cast<int>(d_out) : static_cast<int>(p_out);
        // Names an output element by its sequence and position in it (prefill) or its row (decode).
        std::vector<int32_t> qsl;
        if (!s.decode) qsl.assign(c.buffers[p_qsl].as<int32_t>(), c.buffers[p_qsl].as<int32_t>() + s.seqs + 1);
        const size_t dim = s.dim;
        const IndexFormatter where = [&, dim](int64_t e) {
            const auto t = static_cast<size_t>(e) / dim, ch = static_cast<size_t>(e) % dim;
            if (s.decode) return fmt::format("(row={}, c={})", t, ch);
            const auto q = static_cast<size_t>(std::upper_bound(qsl.begin(), qsl.end(), static_cast<int32_t>(t)) - qsl.begin()) - 1;
            return fmt::format("(t={}, c={}): sequence {} token {} of {}", t, ch, q, t - static_cast<size_t>(qsl[q]),
                               qsl[q + 1] - qsl[q]);
        };
        const auto want = bf16_reference_values(ref.results[0], c.buffers[out_index].count<uint16_t>());
        const auto scales = as_floats(ref.results[2]);
        const ElementScale scale = [scales](size_t e) { return static_cast<double>(scales[e]); };
        CheckResult out = check_bf16_per_element(as_bf16(outputs[0]), want.values, kTolerance, scale, want.own_rounding, where);
        if (!out.pass) {
            out.message = "out: " + out.message;
            return out;
        }
        // The cache: every line, written or not.
        const int32_t* lines = c.buffers[s.decode ? static_cast<int>(d_lines) : static_cast<int>(p_lines)].as<int32_t>();
        std::vector<int64_t> owner(s.lines(), -1);
        for (size_t q = 0; q < s.seqs; ++q) owner[static_cast<size_t>(lines[q])] = static_cast<int64_t>(q);
        const int32_t* flags = s.decode ? nullptr : c.buffers[p_flags].as<int32_t>();
        const IndexFormatter at = [&, dim](int64_t e) {
            const auto line = static_cast<size_t>(e) / (kState * dim), k = static_cast<size_t>(e) / dim % kState,
                       ch = static_cast<size_t>(e) % dim;
            std::string whose = "untouched: no sequence maps to it";
            if (owner[line] >= 0) {
                const auto q = static_cast<size_t>(owner[line]);
                whose = s.decode ? fmt::format("row {}", q)
                                 : fmt::format("sequence {} of {} tokens, {}", q, qsl[q + 1] - qsl[q],
                                               flags[q] ? "continuing" : "fresh");
            }
            return fmt::format("line {} ({}), slot {} (0 oldest), c={}", line, whose, k, ch);
        };
        CheckResult state = check_bit_exact(outputs[1], ref.results[1], sizeof(uint16_t), at);
        if (!state.pass) {
            state.message = (s.decode ? "conv_state: " : "conv_states: ") + state.message;
            return state;
        }
        out.message = "out: " + out.message + fmt::format("; cache bit-exact ({} lines)", s.lines());
        return out;
    }

private:
    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for out and the conv cache";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_causal_conv1d_task() { return std::make_unique<CausalConv1dTask>(); }

}  // namespace kevo
