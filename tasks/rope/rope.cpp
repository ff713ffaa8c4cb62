// ML pack, embedding: rope, rotary position embedding in the neox layout (vLLM's rotary_embedding with
// is_neox=true), in place on bf16 q [T, Hq, d] and k [T, Hkv, d]: for i < d/2, with c, s the cos and
// sin of the token's position from an fp32 cos_sin_cache [max_pos, d] (cos in the first half, sin in
// the second), (x_i, x_{i+d/2}) <- (x_i c - x_{i+d/2} s, x_{i+d/2} c + x_i s). Bandwidth-bound:
// 4T(Hq+Hkv)d + 4Td + 4T bytes. The contract: within half an ulp (plus a floor where the terms cancel)
// beyond its own rounding of the exact value or of vLLM's bf16 arithmetic (cos and sin in bf16, its
// cache's dtype; x cos and y sin each rounded to bf16, then their difference: csrc/pos_encoding_kernels.cu).
#include <algorithm>
#include <cmath>
#include <memory>

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

// Within 1 ulp of the exact value (0.5 beyond the output's own rounding), plus 2e-5 of the terms
// |x1 c| + |x2 s| where they cancel: fp32 products and a sum are off by at most 2^-23 (1.2e-7) of
// the terms, so a correct kernel is >= 160x inside even at a cancellation; the interleaved (GPT-J)
// pairing, a wrong sign or a position off by one are off by whole values, against either reference.
constexpr Bf16Tolerance kTolerance{0.5, 2e-5};
constexpr double kNominalTheta = 5e5;  // LLaMA-3; Qwen3 uses 1e6 (the outlier trial)

enum Stream : uint64_t { q_stream = 1, k_stream = 2, position_stream = 3, spike_stream = 4 };

SizeSpec size_of(int64_t t, int64_t hq, int64_t hkv, int64_t d, bool heldout = false) {
    return {fmt::format("{}x{}x{}x{}", t, hq, hkv, d), heldout, {{"T", t}, {"Hq", hq}, {"Hkv", hkv}, {"d", d}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "rope";
    s.regime = "ML embedding";
    s.pack = "ml";
    s.category = "embedding";
    s.order = 102;
    s.bound = Bound::bandwidth;
    s.model = "4T(Hq+Hkv)d + 4Td + 4T B (q and k bf16 read and written, one fp32 cos/sin row and one int32 position "
              "per token)";
    s.tolerance = "bf16 q and k within 0.5 ulp + 2e-5 x (|x1 c| + |x2 s|) beyond their own rounding of the exact "
                  "value or of vLLM's bf16 arithmetic (bf16 cos/sin, each product rounded to bf16); NaN or Inf fails";
    s.kernels = {{"rope",
                  {sig::const_ptr("positions", ParamType::i32), sig::ptr("q", ParamType::bf16),
                   sig::ptr("k", ParamType::bf16),
                   sig::const_ptr("cos_sin_cache", ParamType::f32),
                   sig::value("head_dim", ParamType::u32), sig::value("q_heads", ParamType::u32),
                   sig::value("kv_heads", ParamType::u32), sig::value("tokens", ParamType::u32)},
                  2, Dim3{128, 1, 1}}};
    // T x Hq x Hkv x d. paper: LLaMA-3-8B decode (32, 8), LLaMA-3-70B TP8 prefill (8, 1), Qwen3-30B-A3B
    // prefill (32, 4); held out a chunk of odd length. large: 16k-token prefill chunks.
    s.profiles["small"] = {size_of(16, 4, 2, 64), size_of(64, 8, 2, 64), size_of(128, 8, 1, 128),
                           size_of(23, 6, 2, 64, true)};
    s.profiles["paper"] = {size_of(64, 32, 8, 128), size_of(2048, 8, 1, 128), size_of(2048, 32, 4, 128),
                           size_of(1000, 32, 8, 128, true)};
    s.profiles["large"] = {size_of(16384, 32, 8, 128), size_of(16384, 8, 1, 128), size_of(16384, 32, 4, 128),
                           size_of(12000, 32, 4, 128, true)};
    return s;
}

struct Shape {
    size_t t, hq, hkv, d;
    size_t max_pos() const { return std::max<size_t>(2048, 2 * t); }
};

Shape shape_of(const SizeSpec& size) {
    return {static_cast<size_t>(size.param("T")), static_cast<size_t>(size.param("Hq")),
            static_cast<size_t>(size.param("Hkv")), static_cast<size_t>(size.param("d"))};
}

// cos and sin of pos * theta^(-2i/d) in double, stored as fp32 (the kernel's exact inputs).
std::vector<float> cos_sin_cache(size_t max_pos, size_t d, double theta) {
    std::vector<float> cache(max_pos * d);
    const size_t half = d / 2;
    parallel_for(max_pos, [&](size_t begin, size_t end) {
        for (size_t p = begin; p < end; ++p)
            for (size_t i = 0; i < half; ++i) {
                const double angle = static_cast<double>(p) * std::pow(theta, -2.0 * static_cast<double>(i) / static_cast<double>(d));
                cache[p * d + i] = static_cast<float>(std::cos(angle));
                cache[p * d + half + i] = static_cast<float>(std::sin(angle));
            }
    });
    return cache;
}

// Element k of a [T, H, d] tensor: its rotation pair's two inputs and the cos/sin of its token.
struct Pair {
    double x1, x2, c, s;
    bool second;  // k is the i + d/2 element
};

Pair pair_of(std::span<const float> x, size_t k, size_t heads, size_t d, const int32_t* positions, const float* cache) {
    const size_t half = d / 2, j = k % d, row = k - j, t = k / (heads * d), i = j % half;
    const float* cs = cache + static_cast<size_t>(positions[t]) * d;
    return {x[row + i], x[row + half + i], cs[i], cs[half + i], j >= half};
}

class RopeTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        std::vector<float> q(s.t * s.hq * s.d), k(s.t * s.hkv * s.d);
        rng::fill_normal(q, seed, q_stream, 0.0f, 1.0f);
        rng::fill_normal(k, seed, k_stream, 0.0f, 1.0f);
        auto positions = make_buffer<int32_t>("positions", BufferRole::input, ElemType::i32, s.t);
        int32_t* pos = positions.as<int32_t>();
        double theta = kNominalTheta;
        if (trial == Trial::nominal) {
            // A prefill chunk: consecutive positions from a random start.
            const auto start = static_cast<size_t>(rng::bits(seed, position_stream, 0) % (s.max_pos() - s.t + 1));
            for (size_t t = 0; t < s.t; ++t) pos[t] = static_cast<int32_t>(start + t);
        } else {
            // A decode batch: each token at its own position, the first and last rows of the cache
            // among them; spikes in q and k; Qwen3's theta.
            theta = 1e6;
            for (size_t t = 0; t < s.t; ++t) pos[t] = static_cast<int32_t>(rng::bits(seed, position_stream, t) % s.max_pos());
            pos[0] = static_cast<int32_t>(s.max_pos() - 1);
            if (s.t > 1) pos[1] = 0;
            outliers::plant_spikes(q, {}, seed, spike_stream);
            outliers::plant_spikes(k, {}, seed, spike_stream + 1);
        }
        const std::vector<float> cache = cos_sin_cache(s.max_pos(), s.d, theta);
        auto cache_buffer = make_buffer<float>("cos_sin_cache", BufferRole::input, ElemType::f32, cache.size());
        std::copy(cache.begin(), cache.end(), cache_buffer.as<float>());
        Case c;
        c.buffers.push_back(std::move(positions));
        c.buffers.push_back(make_bf16_buffer("q", BufferRole::state, q));
        c.buffers.push_back(make_bf16_buffer("k", BufferRole::state, k));
        c.buffers.push_back(std::move(cache_buffer));
        const auto u = [](size_t v) { return ArgRef::u(static_cast<uint32_t>(v)); };
        c.launches.push_back({"rope",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::buf(3), u(s.d), u(s.hq), u(s.hkv),
                               u(s.t)},
                              Dim3{(s.hq + s.hkv) * s.d / 2, s.t, 1}});
        c.results = {1, 2};
        c.constants = {{"theta", theta}};
        const double td = static_cast<double>(s.t * s.d);
        c.work = 4.0 * td * static_cast<double>(s.hq + s.hkv) + 4.0 * td + 4.0 * static_cast<double>(s.t);
        c.working_set_bytes = c.work;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const int32_t* positions = c.buffers[0].as<int32_t>();
        const float* cache = c.buffers[3].as<float>();
        Reference ref;
        for (const auto& [buffer, heads] : {std::pair{1, s.hq}, std::pair{2, s.hkv}}) {
            const std::vector<float> x = bf16_values(c.buffers[static_cast<size_t>(buffer)]);
            std::vector<float> out(x.size());
            parallel_for(x.size(), [&](size_t begin, size_t end) {
                for (size_t k = begin; k < end; ++k) {
                    const Pair p = pair_of(x, k, heads, s.d, positions, cache);
                    out[k] = static_cast<float>(p.second ? p.x2 * p.c + p.x1 * p.s : p.x1 * p.c - p.x2 * p.s);
                }
            });
            ref.results.push_back(to_bytes(out));
        }
        return ref;
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 2 || ref.results.size() != 2) return missing_output();
        const Shape s = shape_of(size);
        const int32_t* positions = c.buffers[0].as<int32_t>();
        const float* cache = c.buffers[3].as<float>();
        CheckResult result;
        for (size_t r = 0; r < 2; ++r) {
            const size_t heads = r == 0 ? s.hq : s.hkv;
            const std::vector<float> x = bf16_values(c.buffers[1 + r]);
            const auto want = bf16_reference_values(ref.results[r], x.size());
            const ElementScale terms = [&](size_t k) {
                const Pair p = pair_of(x, k, heads, s.d, positions, cache);
                return p.second ? std::fabs(p.x2 * p.c) + std::fabs(p.x1 * p.s) : std::fabs(p.x1 * p.c) + std::fabs(p.x2 * p.s);
            };
            const char* name = r == 0 ? "q" : "k";
            const IndexFormatter where = [&, name](int64_t k) {
                const auto u = static_cast<size_t>(k);
                return fmt::format("{} (t={}, head={}, j={})", name, u / (heads * s.d), u / s.d % heads, u % s.d);
            };
            // Every operand and product of vLLM's recipe is a bf16 number whose product is exact in
            // double: no midpoint ambiguity. The same code written with __hmul/__hsub is contracted
            // by nvcc (--fmad=true, the default) into one fma.rn.bf16 with either product unrounded:
            // those two orders are the recipe too (seen on the H100: the __hmul recipe was 92 times
            // outside the as-written order alone).
            const Bf16Recipe vllm{"vLLM's bf16(x c) - bf16(y s) in bf16, or fused into one fma", [&](size_t k, RecipeValues& values) {
                                      const Pair p = pair_of(x, k, heads, s.d, positions, cache);
                                      const auto b = [](double v) { return static_cast<double>(round_to_bf16(static_cast<float>(v))); };
                                      const double c16 = b(p.c), s16 = b(p.s);
                                      const double first = p.second ? p.x2 * c16 : p.x1 * c16;
                                      const double second = p.second ? p.x1 * s16 : -(p.x2 * s16);
                                      values[0] = b(first) + b(second);
                                      values[1] = first + b(second);
                                      values[2] = b(first) + second;
                                      return size_t{3};
                                  }};
            CheckResult one = check_bf16_exact_or_recipe(as_bf16(outputs[r]), want.values, want.own_rounding, kTolerance,
                                                         terms, vllm, where);
            result = r == 0 ? one : binding(result, one);
        }
        return result;
    }

private:
    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for q and k";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_rope_task() { return std::make_unique<RopeTask>(); }

}  // namespace kevo
