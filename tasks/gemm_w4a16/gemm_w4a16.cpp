// ML pack, gemm: gemm_w4a16, the weight-only int4 GEMM of AWQ/GPTQ-quantised LLMs (symmetric, no zero
// point): C = A * dequant(B)^T with A bf16 [M, K], B two signed int4 per byte [N, K/2] (low nibble
// first), a bf16 scale per group of 128 along K [N, K/128]; out bf16 [M, N]. Mostly decode M, where
// the int4 weights dominate the bytes. Checked per element in bf16 ulps beyond the output's own
// rounding, with a floor proportional to the rms size of the dot product (src/task/gemm_scale.hpp).
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
#include "task/gemm_reference.hpp"
#include "task/gemm_scale.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr size_t kGroup = 128;  // quantisation group along K
constexpr double kDeviceReferenceMacs = 2e9;  // above this M*N*K the CPU reference takes too long

// One ulp from the exact value (half an ulp beyond the output's own rounding), plus 2^-14 of the
// rms dot-product size where the K products cancel (6e-5): a serial fp32 sum over K = 14336 stays
// below about 1e-5 of it, a bf16 MMA on the exact integer weights far below; an operand rounded to
// bf16 before the product (q * s has up to 12 significant bits) costs ~1e-3.
constexpr Bf16Tolerance kTolerance{0.5, 0x1.0p-14};
// The contract admits two recipes, each element measured against the nearer of two exact values:
// the exact product of the dequantised weights (fp32 promotion of q * s, the seeds), and the exact
// product of the 16-bit dequantised weights bf16(q * s) that Marlin and Machete feed the MMA
// (marlin_cuda_kernel.cu dequantises to half/bf16 and multiplies by the scale with __hmul2 before
// mma). bf16(q * s) is one well-defined value per weight (the exact q * s rounded once, however it
// is computed), so the second reference is as tight as the first; a kernel that rounds the weight
// any other way (toward zero: gemm_w4a16_slightly_wrong) is near neither.

enum Stream : uint64_t { a_stream = 1, w_stream = 2, spike_stream = 3, channel_stream = 4, row_stream = 5,
                         sign_stream = 6, ratio_stream = 7, zero_stream = 8 };

SizeSpec size_of(int64_t m, int64_t n, int64_t k, bool heldout = false) {
    return gemm_size(m, n, k, heldout, kDeviceReferenceMacs);
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "gemm_w4a16";
    s.regime = "ML gemm";
    s.pack = "ml";
    s.category = "gemm";
    s.order = 112;
    s.bound = Bound::bandwidth;
    s.model = "W = 2MNK (bf16 tensor class); Q = 2MK + NK/2 + 2NK/128 + 2MN bytes (A, int4 weights, bf16 group "
              "scales, out)";
    s.tolerance = "per element: 1 bf16 ulp (0.5 beyond the output's own rounding) + 2^-14 x ||a_m|| ||w_n|| / sqrt(K) "
                  "of the exact value for the weights q * s or for the 16-bit weights bf16(q * s) (Marlin's recipe), "
                  "whichever is nearer (a device reference runs recipe_reference too)";
    s.kernels = {{"gemm_w4a16",
                  {sig::const_ptr("a", ParamType::bf16), sig::const_ptr("b", ParamType::u8),
                   sig::const_ptr("scales", ParamType::bf16), sig::ptr("c", ParamType::bf16),
                   sig::value("m", ParamType::u32), sig::value("n", ParamType::u32),
                   sig::value("k", ParamType::u32)},
                  2, Dim3{64, 1, 1}}};
    // M x N x K; N and K are multiples of 128. small: scaled down for PoCL. paper: LLaMA-3-8B qkv
    // (6144, 4096) at M 1, gate_up (28672, 4096) at M 16, down (4096, 14336) at M 64; held out the
    // 70B TP8 down projection (8192, 3584) at M 16. large: decode batch 256 on gate_up, a 2048-token
    // prefill on o (4096, 4096), 70B TP8 gate_up (7168, 8192) at M 64; held out 70B TP8 qkv
    // (1280, 8192) at M 256.
    s.profiles["small"] = {size_of(1, 512, 512), size_of(16, 256, 512), size_of(64, 512, 256),
                           size_of(7, 384, 384, true)};
    s.profiles["paper"] = {size_of(1, 6144, 4096), size_of(16, 28672, 4096), size_of(64, 4096, 14336),
                           size_of(16, 8192, 3584, true)};
    s.profiles["large"] = {size_of(256, 28672, 4096), size_of(2048, 4096, 4096), size_of(64, 7168, 8192),
                           size_of(256, 1280, 8192, true)};
    return s;
}

struct Shape : GemmDims {
    size_t groups() const { return k / kGroup; }
};

Shape shape_of(const SizeSpec& size) { return {gemm_dims(size)}; }

// The quantised weights: q[n, k] in [-8, 7] and one bf16 scale per (n, group), from fp32 weights by
// the symmetric recipe s = amax / 7 (rounded to bf16), q = clamp(round(w / s), -8, 7).
struct Weights {
    std::vector<int8_t> q;
    std::vector<float> scales;  // exact bf16 values
};

Weights quantise(std::span<const float> w, const Shape& s) {
    Weights out{std::vector<int8_t>(s.n * s.k), std::vector<float>(s.n * s.groups())};
    parallel_rows(s.n, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r)
            for (size_t g = 0; g < s.groups(); ++g) {
                const float* row = w.data() + r * s.k + g * kGroup;
                float amax = 0;
                for (size_t i = 0; i < kGroup; ++i) amax = std::max(amax, std::fabs(row[i]));
                const float scale = round_to_bf16(amax / 7.0f);
                out.scales[r * s.groups() + g] = scale;
                for (size_t i = 0; i < kGroup; ++i) {
                    const float v = scale > 0 ? std::nearbyint(row[i] / scale) : 0.0f;
                    out.q[r * s.k + g * kGroup + i] = static_cast<int8_t>(std::clamp(v, -8.0f, 7.0f));
                }
            }
    });
    return out;
}

// The outlier trial's weights: a few rows entirely at the ends of the int4 range (-8 or 7 at
// random), groups whose scale is 2^-12 or 2^8 times their neighbours' (powers of two, so still
// exact in bf16), and one output column whose scales are all 0.
void plant_weight_outliers(Weights& w, const Shape& s, uint64_t seed) {
    for (size_t r : outliers::pick_distinct(s.n, std::max<size_t>(1, s.n / 64), seed, row_stream))
        for (size_t i = 0; i < s.k; ++i)
            w.q[r * s.k + i] = (rng::bits(seed, sign_stream, r * s.k + i) & 1) ? int8_t{7} : int8_t{-8};
    for (size_t i = 0; i < w.scales.size(); ++i) {
        const double u = rng::uniform(seed, ratio_stream, i);
        if (u < 0.02) w.scales[i] = std::ldexp(w.scales[i], -12);
        else if (u < 0.04) w.scales[i] = std::ldexp(w.scales[i], 8);
    }
    const size_t zero = outliers::pick_distinct(s.n, 1, seed, zero_stream)[0];
    std::fill_n(w.scales.begin() + static_cast<std::ptrdiff_t>(zero * s.groups()), s.groups(), 0.0f);
}

// q * s for every weight: exact in float (a 4-bit integer times an 8-bit significand); rounded to
// bf16 when `sixteen_bit` (the Marlin recipe's operand).
std::vector<float> dequantise(const Case& c, const Shape& s, bool sixteen_bit = false) {
    const auto* packed = c.buffers[1].as<uint8_t>();
    const std::vector<float> scales = bf16_values(c.buffers[2]);
    std::vector<float> w(s.n * s.k);
    const std::span<const uint8_t> bytes(packed, s.n * s.k / 2);
    parallel_rows(s.n, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r)
            for (size_t i = 0; i < s.k; ++i)
                w[r * s.k + i] = static_cast<float>(unpack_i4(bytes, r * s.k + i)) * scales[r * s.groups() + i / kGroup];
        if (sixteen_bit)
            for (size_t n = begin * s.k; n < end * s.k; ++n) w[n] = round_to_bf16(w[n]);
    });
    return w;
}

class GemmW4a16Task final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        std::vector<float> a(s.m * s.k), w(s.n * s.k);
        rng::fill_normal(a, seed, a_stream, 0.0f, 1.0f);
        rng::fill_normal(w, seed, w_stream, 0.0f, 0.02f);
        if (trial == Trial::outlier) {
            outliers::plant_spikes(a, {0.001, 50, 0}, seed, spike_stream);
            outliers::plant_massive_channels(a, s.m, s.k, 2, 200, seed, channel_stream);
        }
        Weights q = quantise(w, s);
        if (trial == Trial::outlier) plant_weight_outliers(q, s, seed);
        Case c;
        c.buffers.push_back(make_bf16_buffer("a", BufferRole::input, a));
        const auto packed = pack_i4(q.q);
        auto b = make_buffer<uint8_t>("b", BufferRole::input, ElemType::i4x2, packed.size());
        std::copy(packed.begin(), packed.end(), b.as<uint8_t>());
        c.buffers.push_back(std::move(b));
        c.buffers.push_back(make_bf16_buffer("scales", BufferRole::input, q.scales));
        c.buffers.push_back(make_bf16_buffer("c", BufferRole::output, s.m * s.n));
        c.launches.push_back({"gemm_w4a16",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::buf(3),
                               ArgRef::u(static_cast<uint32_t>(s.m)), ArgRef::u(static_cast<uint32_t>(s.n)),
                               ArgRef::u(static_cast<uint32_t>(s.k))},
                              Dim3{s.n, s.m, 1}});
        c.results = {3};
        const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
        const double flops = 2 * m * n * k;
        const double bytes = 2 * m * k + n * k / 2 + 2 * n * k / kGroup + 2 * m * n;
        c.constants = {{"group", static_cast<double>(kGroup)}};
        c.work = bytes;
        c.working_set_bytes = bytes;
        c.flops_by_class = {{ComputeClass::tensor_bf16, flops}};
        c.roofline_bytes = bytes;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const std::vector<float> a = bf16_values(c.buffers[0]);
        Reference ref;
        for (bool sixteen_bit : {false, true}) {
            const std::vector<double> exact = matmul_abt(a, dequantise(c, s, sixteen_bit), s.m, s.n, s.k);
            std::vector<float> out(exact.size());
            for (size_t i = 0; i < exact.size(); ++i) out[i] = static_cast<float>(exact[i]);
            ref.results.push_back(to_bytes(out));
        }
        return ref;
    }

    // Twice the product of M x K and K x N in double, plus A, the weights and the scale's operands.
    HostFootprint host_footprint(const SizeSpec& size) const override {
        const Shape s = shape_of(size);
        const uint64_t mk = s.m * s.k, nk = s.n * s.k, mn = s.m * s.n;
        return {2 * mk + nk / 2 + 2 * nk / kGroup + 2 * mn, 4 * mk + 8 * nk + 24 * mn};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 1 || ref.results.empty() || ref.results.size() > 2) return missing_output();
        const Shape s = shape_of(size);
        auto want = bf16_reference_values(ref.results[0], s.m * s.n);
        const ElementScale scale = dot_rms_scale(bf16_values(c.buffers[0]), dequantise(c, s), s.m, s.n, s.k);
        const IndexFormatter where = [n = s.n](int64_t i) {
            return fmt::format("(m={}, n={})", static_cast<size_t>(i) / n, static_cast<size_t>(i) % n);
        };
        if (ref.results.size() == 2)  // Marlin's recipe beside the exact one (recipe_reference)
            take_nearer(want.values, bf16_reference_values(ref.results[1], s.m * s.n).values, as_bf16(outputs[0]),
                        want.own_rounding, kTolerance, scale);
        return check_bf16_per_element(as_bf16(outputs[0]), want.values, kTolerance, scale, want.own_rounding, where);
    }

private:
    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for c";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_gemm_w4a16_task() { return std::make_unique<GemmW4a16Task>(); }

}  // namespace kevo
