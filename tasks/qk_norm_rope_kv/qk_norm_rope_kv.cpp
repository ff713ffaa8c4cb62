// ML pack, normalization: qk_norm_rope_kv, Qwen3's per-head Q/K RMSNorm fused with rope and the
// KV-cache write in one launch (rtp-llm's fused QKV kernel, TensorRT-LLM's fusedQKNormRope, Atrex's
// fused_qk_rmsnorm): from the packed projection qkv [T, (Hq + 2 Hkv) d] bf16 (q heads, then k heads,
// then v heads), every q and k head is RMS-normalised over its own d values (fp32 sum of squares,
// eps, its own gamma: q_weight for q, k_weight for k), then rotated by rope's neox pairing with the
// cos/sin of its token's position (tasks/rope's fp32 cos_sin_cache); q goes to q_out [T, Hq, d], k to
// key_cache[slot] and v, as is, to value_cache[slot] (tasks/kv_cache_write's paged layout, slot -1:
// a padding token that writes nothing). Bandwidth-bound: 4T Hq d + 8M Hkv d + 4Td + 8T + 4d bytes for
// M mapped tokens. The contract: q and the written k within half an ulp (plus a floor where the rope
// terms cancel) beyond their own rounding of the exact value or of a production recipe (the normed
// value rounded to bf16 before rope, as vLLM's separate q_norm and rotary kernels do, with rope in
// fp32 or in vLLM's bf16 arithmetic); v and every untouched slot bit-exact.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <memory>
#include <span>
#include <string>

#include <fmt/format.h>

#include "core/dtypes.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/bf16_buffer.hpp"
#include "task/bf16_recipes.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

// Within 1 ulp of the exact value (0.5 beyond the output's own rounding), plus 1e-4 of the rope
// terms |n1 c| + |n2 s| where they cancel. A fused fp32 kernel (the norm kept in fp32 into the
// rotation: TensorRT-LLM's and vLLM's fused_qk_norm_rope) is off the exact value by an fp32 sum of
// d squares, an rsqrt and four products, ~1e-6 of the terms at worst: >= 100x inside even at a
// cancellation, >1000x elsewhere. A kernel that rounds the normed value to bf16 first (vLLM's
// q_norm / k_norm as RMSNorm kernels, bf16(bf16(x inv_rms) w), or one rounding of x inv_rms w, then
// its rotary kernel in fp32 or in its bf16 arithmetic) is up to ~3 ulp from exact and is admitted
// against its own value instead (the recipe below), where it is exact but for the same fp32 noise.
// Every wrong kernel the tests hold is off by whole percent: a norm over the whole row or with the
// other head's gamma, rope on v, a head left unnormalised, eps dropped (0/0 at the all-zero head) or
// taken as a lower bound (sqrt 2 at the head whose mean square is eps), a position one row short.
constexpr Bf16Tolerance kTolerance{0.5, 1e-4};
// The recipe's x inv_rms (or x inv_rms w) is fp32: ~2^-20 relative; where it lies within 2^-14 of a
// bf16 midpoint both neighbours are the recipe's (as tasks/add_rmsnorm).
constexpr double kNormRounding = 0x1.0p-14;
constexpr double kEps = 1e-6;            // Qwen3's rms_norm_eps; a kernel parameter all the same
constexpr double kNominalTheta = 1e6;    // Qwen3's rope_theta
constexpr double kOutlierTheta = 5e5;    // LLaMA-3's: the cache differs between trials
constexpr size_t kBlockSize = 16;        // slots per cache block; block 0 is vLLM's null block, never mapped

enum Stream : uint64_t { qkv_stream = 1, q_weight_stream = 2, k_weight_stream = 3, position_stream = 4,
                         cache_stream = 5, slot_stream = 7, skip_stream = 9, spike_stream = 10, channel_stream = 12,
                         head_stream = 13 };

SizeSpec size_of(int64_t t, int64_t hq, int64_t hkv, bool heldout = false, int64_t d = 128) {
    return {fmt::format("{}x{}x{}x{}", t, hq, hkv, d), heldout, {{"T", t}, {"Hq", hq}, {"Hkv", hkv}, {"d", d}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "qk_norm_rope_kv";
    s.regime = "ML normalization";
    s.pack = "ml";
    s.category = "normalization";
    s.order = 104;
    s.bound = Bound::bandwidth;
    s.model = "4T Hq d + 8M Hkv d + 4Td + 8T + 4d B (q read and q_out written for all T tokens; k and v read and "
              "written to the caches for the M mapped ones; bf16; one fp32 cos/sin row, a position and a slot per "
              "token; both gammas)";
    s.tolerance = "q_out and the written key_cache rows within 0.5 ulp + 1e-4 x (|n1 c| + |n2 s|) beyond their own "
                  "rounding of the exact value or of the normed value rounded to bf16 first (vLLM's "
                  "bf16(bf16(x inv_rms) w) or bf16(x inv_rms w)) then rope in fp32 or in vLLM's bf16 arithmetic; "
                  "value_cache and untouched key_cache slots bit-exact; NaN or Inf fails";
    s.kernels = {{"qk_norm_rope_kv",
                  {sig::const_ptr("qkv", ParamType::bf16), sig::const_ptr("q_weight", ParamType::bf16),
                   sig::const_ptr("k_weight", ParamType::bf16), sig::const_ptr("positions", ParamType::i32),
                   sig::const_ptr("cos_sin_cache", ParamType::f32), sig::const_ptr("slot_mapping", ParamType::i32),
                   sig::ptr("q_out", ParamType::bf16), sig::ptr("key_cache", ParamType::bf16),
                   sig::ptr("value_cache", ParamType::bf16), sig::value("head_dim", ParamType::u32),
                   sig::value("q_heads", ParamType::u32), sig::value("kv_heads", ParamType::u32),
                   sig::value("tokens", ParamType::u32), sig::value("eps", ParamType::f32)},
                  2, Dim3{128, 1, 1}}};
    // T x Hq x Hkv x d, d = 128 (every Qwen3). small: Qwen3-8B/4B (32, 8) decode, 8B at TP4 (8, 2),
    // Qwen3-30B-A3B (32, 4); held out Qwen3-14B (40, 8). paper: single-token decode of 30B-A3B (the
    // launch-bound call Atrex counts most), a 128-sequence decode batch of 8B, an 8192-token prefill
    // chunk of Qwen3-32B (64, 8); held out 14B prefill of odd length. large: 16k-token prefill chunks.
    s.profiles["small"] = {size_of(1, 32, 8), size_of(16, 8, 2), size_of(64, 32, 4), size_of(23, 40, 8, true)};
    s.profiles["paper"] = {size_of(1, 32, 4), size_of(128, 32, 8), size_of(8192, 64, 8),
                           size_of(3000, 40, 8, true)};
    s.profiles["large"] = {size_of(16384, 32, 8), size_of(16384, 64, 8), size_of(16384, 32, 4),
                           size_of(12000, 40, 8, true)};
    return s;
}

struct Shape {
    size_t t, hq, hkv, d;
    size_t heads() const { return hq + 2 * hkv; }
    size_t row() const { return heads() * d; }      // one token's qkv
    size_t kv_row() const { return hkv * d; }       // one slot of a cache
    size_t max_pos() const { return std::max<size_t>(2048, 2 * t); }
    // Three slots per token, in whole blocks, plus the null block (as tasks/kv_cache_write).
    size_t slots() const { return kBlockSize * (1 + (3 * t + kBlockSize - 1) / kBlockSize); }
};

Shape shape_of(const SizeSpec& size) {
    return {static_cast<size_t>(size.param("T")), static_cast<size_t>(size.param("Hq")),
            static_cast<size_t>(size.param("Hkv")), static_cast<size_t>(size.param("d"))};
}

// Buffer indices, in the signature's order.
enum Buf : size_t { b_qkv = 0, b_q_weight, b_k_weight, b_positions, b_cache, b_slots, b_q_out, b_key_cache,
                    b_value_cache };

// cos and sin of pos * theta^(-2i/d) in double, stored as fp32 (tasks/rope's cache).
std::vector<float> cos_sin_cache(size_t max_pos, size_t d, double theta) {
    std::vector<float> cache(max_pos * d);
    const size_t half = d / 2;
    parallel_for(max_pos, [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p)
            for (size_t i = 0; i < half; ++i) {
                const double angle =
                    static_cast<double>(p) * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
                cache[p * d + i] = static_cast<float>(std::cos(angle));
                cache[p * d + half + i] = static_cast<float>(std::sin(angle));
            }
    });
    return cache;
}

// Distinct slots outside the null block, the cache's last slot among them. Nominal (a prefill chunk):
// every token mapped. Outlier (a padded decode batch): token T/2 and a quarter of the others padding
// (-1) among mapped tokens, and a padded tail of T/8 (a CUDA graph's batch padding); token 0 stays
// mapped, and so does every token of a batch under 4.
std::vector<int32_t> slot_mapping(const Shape& s, uint64_t seed, Trial trial) {
    const auto picked = outliers::pick_distinct(s.slots() - kBlockSize, s.t, seed, slot_stream);
    std::vector<size_t> order(s.t);
    for (size_t i = 0; i < s.t; ++i) order[i] = i;
    std::sort(order.begin(), order.end(), [&](size_t a, size_t b) {
        return rng::bits(seed, slot_stream + 1, a) < rng::bits(seed, slot_stream + 1, b);
    });
    const bool pad = trial == Trial::outlier && s.t >= 4;
    const size_t tail = pad ? std::max<size_t>(1, s.t / 8) : 0;
    std::vector<int32_t> map(s.t);
    for (size_t t = 0; t < s.t; ++t) {
        const bool padding = pad && t > 0 && (t + tail >= s.t || t == s.t / 2 || rng::uniform(seed, skip_stream, t) < 0.25);
        map[t] = padding ? -1 : static_cast<int32_t>(kBlockSize + picked[order[t]]);
    }
    const auto last_slot = static_cast<int32_t>(s.slots() - 1);
    const auto first = std::find_if(map.begin(), map.end(), [](int32_t v) { return v >= 0; });
    if (first != map.end() && std::find(map.begin(), map.end(), last_slot) == map.end()) *first = last_slot;
    return map;
}

// The exact normalisation of every q and k head: inv_rms of head h of token t, from the stored bf16
// values, at [t * (Hq + Hkv) + h] (k heads after the q heads).
std::vector<double> inv_rms_of(const Shape& s, std::span<const float> qkv, double eps) {
    const size_t normed = s.hq + s.hkv;
    std::vector<double> inv(s.t * normed);
    parallel_for(inv.size(), [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r) {
            const float* x = qkv.data() + (r / normed) * s.row() + (r % normed) * s.d;
            double sum = 0;
            for (size_t j = 0; j < s.d; ++j) sum += static_cast<double>(x[j]) * x[j];
            inv[r] = 1.0 / std::sqrt(sum / static_cast<double>(s.d) + eps);
        }
    });
    return inv;
}

// What one output element (element j of head h, a q head or a k head, of token t) is made of.
struct Element {
    double x1, x2;       // the pair's stored inputs (x_i, x_{i+d/2})
    double w1, w2;       // their gammas
    double inv;          // the head's exact inv_rms
    double c, s;         // the fp32 cos and sin of the token's position
    bool second;         // j is the i + d/2 element

    double n1() const { return x1 * inv * w1; }
    double n2() const { return x2 * inv * w2; }
    double exact() const { return second ? n2() * c + n1() * s : n1() * c - n2() * s; }
    double terms() const { return std::fabs(n1() * c) + std::fabs(n2() * s); }
};

class Inputs {
public:
    Inputs(const Shape& s, const Case& c)
        : s_(s), qkv_(bf16_values(c.buffers[b_qkv])), wq_(bf16_values(c.buffers[b_q_weight])),
          wk_(bf16_values(c.buffers[b_k_weight])), positions_(c.buffers[b_positions].as<int32_t>()),
          cache_(c.buffers[b_cache].as<float>()), inv_(inv_rms_of(s, qkv_, c.constants.at("eps"))) {}

    // Element j of normed head h (h < Hq: q head h; else k head h - Hq) of token t.
    Element at(size_t t, size_t h, size_t j) const {
        const size_t half = s_.d / 2, i = j % half;
        const float* x = qkv_.data() + t * s_.row() + h * s_.d;
        const std::vector<float>& w = h < s_.hq ? wq_ : wk_;
        const float* cs = cache_ + static_cast<size_t>(positions_[t]) * s_.d;
        return {x[i], x[half + i], w[i], w[half + i], inv_[t * (s_.hq + s_.hkv) + h], cs[i], cs[half + i], j >= half};
    }

    std::span<const float> qkv() const { return qkv_; }

private:
    Shape s_;
    std::vector<float> qkv_, wq_, wk_;
    const int32_t* positions_;
    const float* cache_;
    std::vector<double> inv_;
};

double bf16_round(double v) { return static_cast<double>(round_to_bf16(static_cast<float>(v))); }

// The bf16 values a kernel that rounds a normed value n = x inv_rms w to bf16 before rope may hold:
// one rounding of the fp32 n (an fp32 RMSNorm kernel), or vLLM's and HF's bf16(bf16(x inv_rms) w);
// both neighbours where the fp32 value lies near a midpoint. Returns how many (distinct), up to 4.
size_t rounded_norms(double x, double inv, double w, std::array<double, 4>& out) {
    size_t n = 0;
    const auto add = [&](double v) {
        if (std::find(out.begin(), out.begin() + static_cast<std::ptrdiff_t>(n), v) == out.begin() + static_cast<std::ptrdiff_t>(n))
            out[n++] = v;
    };
    const auto [lo, hi] = bf16_roundings_near(x * inv * w, kNormRounding);
    add(lo), add(hi);
    const auto [a, b] = bf16_roundings_near(x * inv, kNormRounding);
    add(bf16_round(a * w)), add(bf16_round(b * w));  // a bf16 times a bf16: exact in double
    return n;
}

// The admitted recipe value nearest to got (by the check's own measure): every rounded n1 and n2,
// each rotated in fp32 (exact up to fp32 noise, which the floor holds) or in vLLM's bf16
// arithmetic (cos and sin rounded to bf16, each product rounded, then their sum; or one product
// kept exact in a fused multiply-add, as nvcc contracts __hsub(__hmul, __hmul)).
double nearest_recipe_value(const Element& e, double got) {
    std::array<double, 4> n1{}, n2{};
    const size_t count1 = rounded_norms(e.x1, e.inv, e.w1, n1), count2 = rounded_norms(e.x2, e.inv, e.w2, n2);
    const double scale = e.terms(), c16 = bf16_round(e.c), s16 = bf16_round(e.s);
    double best = e.exact(), best_ratio = std::numeric_limits<double>::infinity();
    const auto consider = [&](double v) {
        const double ratio = bf16_excess_ratio(got, v, 0.5, bf16_allowance(kTolerance, v, scale));
        if (ratio < best_ratio) best_ratio = ratio, best = v;
    };
    for (size_t a = 0; a < count1; ++a)
        for (size_t b = 0; b < count2; ++b) {
            const double v1 = n1[a], v2 = n2[b];
            consider(e.second ? v2 * e.c + v1 * e.s : v1 * e.c - v2 * e.s);
            const double first = e.second ? v2 * c16 : v1 * c16;      // bf16 x bf16: exact
            const double other = e.second ? v1 * s16 : -(v2 * s16);
            consider(bf16_round(first) + bf16_round(other));
            consider(first + bf16_round(other));
            consider(bf16_round(first) + other);
        }
    return best;
}

class QkNormRopeKvTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        std::vector<float> qkv(s.t * s.row()), q_weight(s.d), k_weight(s.d), cache(s.slots() * s.kv_row());
        rng::fill_normal(qkv, seed, qkv_stream, 0.0f, 1.0f);
        // Qwen3's q_norm and k_norm gammas are far from 1 and from each other.
        rng::fill_normal(q_weight, seed, q_weight_stream, 1.0f, 0.3f);
        rng::fill_normal(k_weight, seed, k_weight_stream, 1.5f, 0.5f);
        const auto map = slot_mapping(s, seed, trial);
        auto positions = make_buffer<int32_t>("positions", BufferRole::input, ElemType::i32, s.t);
        int32_t* pos = positions.as<int32_t>();
        double theta = kNominalTheta;
        std::map<std::string, double> special;  // where the outlier trial's zero and eps heads are
        if (trial == Trial::nominal) {
            // A prefill chunk: consecutive positions from a random start.
            const auto start = static_cast<size_t>(rng::bits(seed, position_stream, 0) % (s.max_pos() - s.t + 1));
            for (size_t t = 0; t < s.t; ++t) pos[t] = static_cast<int32_t>(start + t);
        } else {
            // A decode batch: each token at its own position, the cache's last row (token 0) and
            // first (token 1) among them; another theta; spikes; two massive channels in every head
            // (Qwen3's q and k carry a few hundred-fold channels: why it norms them); one q head and
            // one k head of a mapped token all zero (0 / sqrt(0 + eps) = 0: keep eps), and one of each
            // whose mean square is eps (add eps: neither drop it nor take it as a lower bound).
            theta = kOutlierTheta;
            for (size_t t = 0; t < s.t; ++t)
                pos[t] = static_cast<int32_t>(rng::bits(seed, position_stream, t) % s.max_pos());
            pos[0] = static_cast<int32_t>(s.max_pos() - 1);
            if (s.t > 1) pos[1] = 0;
            outliers::plant_spikes(qkv, {}, seed, spike_stream);
            outliers::plant_massive_channels(qkv, s.t * s.heads(), s.d, 2, 100, seed, channel_stream);
            std::vector<size_t> mapped;
            for (size_t t = 0; t < s.t; ++t)
                if (map[t] >= 0) mapped.push_back(t);
            const auto token = [&](uint64_t k) { return mapped[rng::bits(seed, head_stream, k) % mapped.size()]; };
            const auto head = [&](uint64_t k, size_t first, size_t count) {
                return first + rng::bits(seed, head_stream + 1, k) % count;
            };
            const size_t zq = head(0, 0, s.hq), zk = head(1, s.hq, s.hkv), tz = token(0), te = token(1);
            size_t eq = head(2, 0, s.hq), ek = head(3, s.hq, s.hkv);
            if (eq == zq && s.hq > 1) eq = (zq + 1) % s.hq;
            if (ek == zk && s.hkv > 1) ek = s.hq + (zk - s.hq + 1) % s.hkv;
            const auto head_row = [&](size_t t, size_t h) { return std::span<float>(qkv).subspan(t * s.row() + h * s.d, s.d); };
            std::vector<float> z(s.d);
            for (const size_t h : {eq, ek}) {
                if (te == tz && (h == zq || h == zk)) continue;
                // sqrt(eps) z, z ~ N(0, 1): a mean square of ~eps, in bf16's normal range.
                rng::fill_normal(z, seed, head_stream + 2 + h, 0.0f, static_cast<float>(std::sqrt(kEps)));
                std::copy(z.begin(), z.end(), head_row(te, h).begin());
            }
            for (const size_t h : {zq, zk}) std::fill_n(head_row(tz, h).begin(), s.d, 0.0f);
            special = {{"zero_heads_token", static_cast<double>(tz)}, {"zero_q_head", static_cast<double>(zq)},
                       {"zero_k_head", static_cast<double>(zk - s.hq)}, {"eps_heads_token", static_cast<double>(te)}};
        }
        const std::vector<float> cs = cos_sin_cache(s.max_pos(), s.d, theta);
        auto cs_buffer = make_buffer<float>("cos_sin_cache", BufferRole::input, ElemType::f32, cs.size());
        std::copy(cs.begin(), cs.end(), cs_buffer.as<float>());
        auto slots = make_buffer<int32_t>("slot_mapping", BufferRole::input, ElemType::i32, s.t);
        std::copy(map.begin(), map.end(), slots.as<int32_t>());
        Case c;
        c.buffers.push_back(make_bf16_buffer("qkv", BufferRole::input, qkv));
        c.buffers.push_back(make_bf16_buffer("q_weight", BufferRole::input, q_weight));
        c.buffers.push_back(make_bf16_buffer("k_weight", BufferRole::input, k_weight));
        c.buffers.push_back(std::move(positions));
        c.buffers.push_back(std::move(cs_buffer));
        c.buffers.push_back(std::move(slots));
        c.buffers.push_back(make_bf16_buffer("q_out", BufferRole::output, s.t * s.hq * s.d));
        // The caches start full of other sequences' entries, so an untouched slot has contents to keep.
        rng::fill_normal(cache, seed, cache_stream, 0.0f, 1.0f);
        c.buffers.push_back(make_bf16_buffer("key_cache", BufferRole::state, cache));
        rng::fill_normal(cache, seed, cache_stream + 1, 0.0f, 1.0f);
        c.buffers.push_back(make_bf16_buffer("value_cache", BufferRole::state, cache));
        const auto u = [](size_t v) { return ArgRef::u(static_cast<uint32_t>(v)); };
        std::vector<ArgRef> args;
        for (int b = 0; b <= static_cast<int>(b_value_cache); ++b) args.push_back(ArgRef::buf(b));
        for (const size_t v : {s.d, s.hq, s.hkv, s.t}) args.push_back(u(v));
        args.push_back(ArgRef::f(static_cast<float>(kEps)));
        c.launches.push_back({"qk_norm_rope_kv", std::move(args), Dim3{s.row(), s.t, 1}});
        c.results = {b_q_out, b_key_cache, b_value_cache};
        const auto mapped = static_cast<double>(std::count_if(map.begin(), map.end(), [](int32_t v) { return v >= 0; }));
        const auto t = static_cast<double>(s.t), d = static_cast<double>(s.d);
        c.constants = std::move(special);
        c.constants["eps"] = static_cast<double>(static_cast<float>(kEps));
        c.constants["theta"] = theta;
        c.constants["mapped_tokens"] = mapped;
        c.work = 4.0 * t * static_cast<double>(s.hq) * d + 8.0 * mapped * static_cast<double>(s.kv_row()) + 4.0 * t * d +
                 8.0 * t + 4.0 * d;
        c.working_set_bytes = c.work;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const Inputs in(s, c);
        const int32_t* map = c.buffers[b_slots].as<int32_t>();
        std::vector<float> q(s.t * s.hq * s.d), key = bf16_values(c.buffers[b_key_cache]);
        std::vector<std::byte> value = c.buffers[b_value_cache].data;
        parallel_rows(s.t, [&](size_t begin, size_t end) {
            for (size_t t = begin; t < end; ++t) {
                for (size_t h = 0; h < s.hq; ++h)
                    for (size_t j = 0; j < s.d; ++j) q[(t * s.hq + h) * s.d + j] = static_cast<float>(in.at(t, h, j).exact());
                if (map[t] < 0) continue;
                const auto slot = static_cast<size_t>(map[t]);
                for (size_t h = 0; h < s.hkv; ++h)
                    for (size_t j = 0; j < s.d; ++j)
                        key[slot * s.kv_row() + h * s.d + j] = static_cast<float>(in.at(t, s.hq + h, j).exact());
                const size_t bytes = s.kv_row() * sizeof(uint16_t);
                std::memcpy(value.data() + slot * bytes,
                            c.buffers[b_qkv].data.data() + (t * s.row() + (s.hq + s.hkv) * s.d) * sizeof(uint16_t), bytes);
            }
        });
        return Reference{{to_bytes(q), to_bytes(key), std::move(value)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 3 || ref.results.size() != 3) return missing_output();
        const Shape s = shape_of(size);
        const Inputs in(s, c);
        const int32_t* map = c.buffers[b_slots].as<int32_t>();
        std::vector<int64_t> writer(s.slots(), -1);  // the token that maps to each slot
        std::vector<size_t> mapped;                  // the mapped tokens, in order
        for (size_t t = 0; t < s.t; ++t)
            if (map[t] >= 0) writer[static_cast<size_t>(map[t])] = static_cast<int64_t>(t), mapped.push_back(t);

        // v and the untouched key slots: bits.
        const IndexFormatter value_where = [&](int64_t e) { return slot_text("value_cache", writer, s, e); };
        CheckResult value = check_bit_exact(outputs[2], ref.results[2], sizeof(uint16_t), value_where);
        if (!value.pass) return value;
        const std::span<const uint16_t> key_got = as_bf16(outputs[1]);
        const auto* key_before = c.buffers[b_key_cache].as<uint16_t>();
        if (key_got.size() != s.slots() * s.kv_row()) return missing_output();
        for (size_t slot = 0; slot < s.slots(); ++slot) {
            if (writer[slot] >= 0) continue;
            for (size_t e = 0; e < s.kv_row(); ++e) {
                const size_t k = slot * s.kv_row() + e;
                if (key_got[k] == key_before[k]) continue;
                CheckResult r;
                r.kind = "bit_exact";
                r.error = 1;
                r.worst_index = static_cast<int64_t>(k);
                r.message = fmt::format("{} changed: 0x{:04x}, was 0x{:04x}",
                                        slot_text("key_cache", writer, s, static_cast<int64_t>(k)), key_got[k],
                                        key_before[k]);
                return r;
            }
        }

        // q_out, then the written key rows (gathered per mapped token), against the exact value or the recipe.
        const std::span<const uint16_t> q_got = as_bf16(outputs[0]);
        const auto q_want = bf16_reference_values(ref.results[0], q_got.size());
        const auto q_element = [&](size_t k) { return in.at(k / (s.hq * s.d), k / s.d % s.hq, k % s.d); };
        CheckResult q = check_rows(q_got, q_want.values, q_want.own_rounding, q_element, [&](int64_t k) {
            const auto u = static_cast<size_t>(k);
            return fmt::format("q_out (t={}, head={}, j={})", u / (s.hq * s.d), u / s.d % s.hq, u % s.d);
        });
        const auto key_want = bf16_reference_values(ref.results[1], key_got.size());
        std::vector<uint16_t> k_got(mapped.size() * s.kv_row());
        std::vector<float> k_want(k_got.size());
        for (size_t m = 0; m < mapped.size(); ++m) {
            const size_t from = static_cast<size_t>(map[mapped[m]]) * s.kv_row();
            std::copy_n(key_got.begin() + static_cast<std::ptrdiff_t>(from), s.kv_row(), k_got.begin() + static_cast<std::ptrdiff_t>(m * s.kv_row()));
            std::copy_n(key_want.values.begin() + static_cast<std::ptrdiff_t>(from), s.kv_row(), k_want.begin() + static_cast<std::ptrdiff_t>(m * s.kv_row()));
        }
        const auto k_element = [&](size_t k) { return in.at(mapped[k / s.kv_row()], s.hq + k / s.d % s.hkv, k % s.d); };
        CheckResult key = check_rows(k_got, k_want, key_want.own_rounding, k_element, [&](int64_t k) {
            const auto u = static_cast<size_t>(k);
            const size_t t = mapped[u / s.kv_row()];
            return fmt::format("key_cache slot {} (token {}, kv head {}, j={})", map[t], t, u / s.d % s.hkv, u % s.d);
        });
        CheckResult result = binding(q, key);
        if (result.pass)
            result.message += fmt::format("; value_cache and the {} untouched key_cache slots bit-exact",
                                          s.slots() - mapped.size());
        return result;
    }

private:
    template <class ElementAt>
    static CheckResult check_rows(std::span<const uint16_t> got, std::span<const float> want, double own_rounding,
                                  const ElementAt& element, const IndexFormatter& where) {
        const ElementScale terms = [&](size_t k) { return element(k).terms(); };
        const Bf16Recipe recipe{"the normed value rounded to bf16, then rope in fp32 or vLLM's bf16 arithmetic",
                                [&](size_t k, RecipeValues& values) {
                                    values[0] = nearest_recipe_value(element(k), bf16_to_float(got[k]));
                                    return size_t{1};
                                }};
        return check_bf16_exact_or_recipe(got, want, own_rounding, kTolerance, terms, recipe, where);
    }

    static std::string slot_text(const char* name, const std::vector<int64_t>& writer, const Shape& s, int64_t e) {
        const auto slot = static_cast<size_t>(e) / s.kv_row();
        const std::string whose = writer[slot] >= 0 ? fmt::format("written by token {}", writer[slot])
                                                    : std::string("untouched: no token maps to it");
        return fmt::format("{} slot {} ({}), element {}", name, slot, whose, static_cast<size_t>(e) % s.kv_row());
    }

    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for q_out, key_cache and value_cache";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_qk_norm_rope_kv_task() { return std::make_unique<QkNormRopeKvTask>(); }

}  // namespace kevo
