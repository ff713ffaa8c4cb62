// ML pack, gemm: gemm_fp8_block, the block-scaled fp8 GEMM of DeepSeek-V3's recipe: A e4m3 [M, K] with an
// fp32 scale per token and 128-wide K block (a_scale [M, K/128]), B e4m3 [N, K] with an fp32 scale per
// 128 x 128 block (b_scale [N/128, K/128]); out bf16 [M, N] = sum over K blocks kb of
// a_scale[m, kb] * b_scale[n/128, kb] * (sum over the block of A[m, k] * B[n, k]). The operands arrive
// quantised (fp32 values quantised per block by amax / 448); the reference is exact from the stored
// values. Checked per element in bf16 ulps beyond the output's own rounding, with a floor wide enough
// for Hopper's fp8 MMA, whose adder keeps about 14 bits before each block's sum is promoted to fp32.
#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "core/dtypes.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/gemm_reference.hpp"
#include "task/gemm_scale.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr size_t kBlock = 128;  // scale block along K (and along N for B)
constexpr double kDeviceReferenceMacs = 2e9;

// One ulp from the exact value (half an ulp beyond the output's own rounding), plus 2^-8 of the rms
// dot-product size (3.9e-3): a model of Hopper's fp8 MMA (14-bit truncating adder, promoted to fp32
// every 128 k; tests/test_tasks_ml_gemmb.cpp) stays 3x inside; operands dequantised to bf16 before
// the product (about 2.3e-3 rms) exceed 1 ulp at some elements of most sizes. The rms size is taken
// per 128-block where one block dominates (block_dot_rms_scale): the adder's error is the error of
// each block's partial, so an element carried by one block 2^6 above its neighbours (the outlier
// trial) carries that block's error, which the row-wide ||a|| ||b|| / sqrt(K) spreads over all of
// K. With the row-wide size, DeepGEMM's recipe (tests/candidates/gemm_fp8_block_recipe_deepgemm.cu)
// failed at large on the H100 at 4096x7168x2048, outlier trial, margin 0.96 (2026-12-05 and -06).
constexpr Bf16Tolerance kTolerance{0.5, 0x1.0p-8};

enum Stream : uint64_t { a_stream = 1, b_stream = 2, a_factor_stream = 3, b_factor_stream = 4, spike_stream = 5,
                         channel_stream = 6, extreme_stream = 7 };

SizeSpec size_of(int64_t m, int64_t n, int64_t k, bool heldout = false) {
    return gemm_size(m, n, k, heldout, kDeviceReferenceMacs);
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "gemm_fp8_block";
    s.regime = "ML gemm";
    s.pack = "ml";
    s.category = "gemm";
    s.peers = {"cublaslt_fp8_block"};
    s.order = 113;
    s.bound = Bound::compute;
    s.model = "W = 2MNK (fp8 tensor class); Q = MK + NK + 4MK/128 + 4NK/16384 + 2MN bytes (A, B, their fp32 block "
              "scales, out)";
    s.tolerance = "per element: 1 bf16 ulp of the exact value (0.5 beyond the output's own rounding) + 2^-8 x "
                  "max(||a_m|| ||b_n|| / sqrt(K), sqrt(sum over 128-blocks of (||a_m,b|| ||b_n,b||)^2 / 128)) "
                  "(dequantised rows)";
    s.kernels = {{"gemm_fp8_block",
                  {sig::const_ptr("a", ParamType::u8), sig::const_ptr("a_scale", ParamType::f32),
                   sig::const_ptr("b", ParamType::u8), sig::const_ptr("b_scale", ParamType::f32),
                   sig::ptr("c", ParamType::bf16), sig::value("m", ParamType::u32),
                   sig::value("n", ParamType::u32), sig::value("k", ParamType::u32)},
                  2, Dim3{64, 1, 1}}};
    // M x N x K; N and K are multiples of 128 (DeepSeek-V3's fused q_a/kv_a projection, N 2112, is
    // not, and is left out). small: scaled down for PoCL. paper: DeepSeek-V3 TP8 o projection
    // (7168, 2048) at decode M 1, MLP gate_up TP8 (4608, 7168) at M 16, MLP down TP8 (7168, 2304) at
    // M 64; held out Atrex's (2048, 2048) at M 32. large: prefill chunks of 4096 and 2048 tokens on
    // o and gate_up, decode batch 256 on down; held out Atrex's shape at M 2048.
    s.profiles["small"] = {size_of(1, 256, 512), size_of(16, 512, 256), size_of(64, 256, 512),
                           size_of(5, 384, 384, true)};
    s.profiles["paper"] = {size_of(1, 7168, 2048), size_of(16, 4608, 7168), size_of(64, 7168, 2304),
                           size_of(32, 2048, 2048, true)};
    s.profiles["large"] = {size_of(4096, 7168, 2048), size_of(2048, 4608, 7168), size_of(256, 7168, 2304),
                           size_of(2048, 2048, 2048, true)};
    return s;
}

struct Shape : GemmDims {
    size_t kb() const { return k / kBlock; }
    size_t nb() const { return n / kBlock; }
};

Shape shape_of(const SizeSpec& size) { return {gemm_dims(size)}; }

constexpr float kAmaxFloor = 1e-4f;

// One operand quantised by the recipe: per block, scale = max(amax, 1e-4) / 448 (DeepGEMM's
// per_token_cast_to_fp8 clamps amax at 1e-4, so a near-zero block quantises to e4m3 subnormals),
// 1 for an all-zero block; q = e4m3(x / scale), saturating.
struct Quantised {
    std::vector<uint8_t> q;
    std::vector<float> scales;
};

// x is rows x k; a block is `block_rows` rows by 128 columns; scales come out [rows / block_rows, k / 128].
Quantised quantise(std::span<const float> x, size_t rows, size_t k, size_t block_rows) {
    const size_t kb = k / kBlock, rb = rows / block_rows;
    Quantised out{std::vector<uint8_t>(rows * k), std::vector<float>(rb * kb)};
    parallel_rows(rb, [&](size_t begin, size_t end) {
        for (size_t br = begin; br < end; ++br)
            for (size_t bk = 0; bk < kb; ++bk) {
                float amax = 0;
                for (size_t r = br * block_rows; r < (br + 1) * block_rows; ++r)
                    for (size_t i = bk * kBlock; i < (bk + 1) * kBlock; ++i) amax = std::max(amax, std::fabs(x[r * k + i]));
                const float scale = amax > 0 ? std::max(amax, kAmaxFloor) / kE4m3Max : 1.0f;
                out.scales[br * kb + bk] = scale;
                for (size_t r = br * block_rows; r < (br + 1) * block_rows; ++r)
                    for (size_t i = bk * kBlock; i < (bk + 1) * kBlock; ++i)
                        out.q[r * k + i] = float_to_e4m3(x[r * k + i] / scale, Fp8Overflow::saturate);
            }
    });
    return out;
}

// Multiplies each (row block, K block) of x by 2^e, e uniform in [-range, range]: the block scales
// then differ by up to 2^(2 range), so a scale applied to the wrong block is far off.
void vary_blocks(std::span<float> x, size_t rows, size_t k, size_t block_rows, double range, uint64_t seed,
                 uint64_t stream) {
    const size_t kb = k / kBlock;
    std::vector<float> factor((rows / block_rows) * kb);
    for (size_t b = 0; b < factor.size(); ++b)
        factor[b] = static_cast<float>(std::exp2(std::round((2 * rng::uniform(seed, stream, b) - 1) * range)));
    parallel_rows(rows, [&](size_t begin, size_t end) {
        for (size_t r = begin; r < end; ++r)
            for (size_t i = 0; i < k; ++i) x[r * k + i] *= factor[(r / block_rows) * kb + i / kBlock];
    });
}

HostBuffer byte_buffer(std::string name, ElemType type, const std::vector<uint8_t>& bytes) {
    auto b = make_buffer<uint8_t>(std::move(name), BufferRole::input, type, bytes.size());
    std::copy(bytes.begin(), bytes.end(), b.as<uint8_t>());
    return b;
}

HostBuffer f32_buffer(std::string name, const std::vector<float>& values) {
    auto b = make_buffer<float>(std::move(name), BufferRole::input, ElemType::f32, values.size());
    std::copy(values.begin(), values.end(), b.as<float>());
    return b;
}

// The dequantised operands (q * scale in float): for the check's scale, not for the reference.
std::vector<float> dequantise(const HostBuffer& q, const HostBuffer& scales, size_t rows, size_t k, size_t block_rows) {
    const auto* bytes = q.as<uint8_t>();
    const auto* s = scales.as<float>();
    std::vector<float> out(rows * k);
    for (size_t r = 0; r < rows; ++r)
        for (size_t i = 0; i < k; ++i)
            out[r * k + i] = e4m3_to_float(bytes[r * k + i]) * s[(r / block_rows) * (k / kBlock) + i / kBlock];
    return out;
}

class GemmFp8BlockTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        std::vector<float> a(s.m * s.k), b(s.n * s.k);
        rng::fill_normal(a, seed, a_stream, 0.0f, 1.0f);
        rng::fill_normal(b, seed, b_stream, 0.0f, 0.02f);
        vary_blocks(a, s.m, s.k, 1, 2, seed, a_factor_stream);
        vary_blocks(b, s.n, s.k, kBlock, 2, seed, b_factor_stream);
        if (trial == Trial::outlier) plant_outliers(a, b, s, seed);
        const Quantised qa = quantise(a, s.m, s.k, 1), qb = quantise(b, s.n, s.k, kBlock);
        Case c;
        c.buffers.push_back(byte_buffer("a", ElemType::f8e4m3, qa.q));
        c.buffers.push_back(f32_buffer("a_scale", qa.scales));
        c.buffers.push_back(byte_buffer("b", ElemType::f8e4m3, qb.q));
        c.buffers.push_back(f32_buffer("b_scale", qb.scales));
        c.buffers.push_back(make_bf16_buffer("c", BufferRole::output, s.m * s.n));
        c.launches.push_back({"gemm_fp8_block",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::buf(3), ArgRef::buf(4),
                               ArgRef::u(static_cast<uint32_t>(s.m)), ArgRef::u(static_cast<uint32_t>(s.n)),
                               ArgRef::u(static_cast<uint32_t>(s.k))},
                              Dim3{s.n, s.m, 1}});
        c.results = {4};
        const double m = static_cast<double>(s.m), n = static_cast<double>(s.n), k = static_cast<double>(s.k);
        const double flops = 2 * m * n * k;
        const double bytes = m * k + n * k + 4 * m * k / 128 + 4 * n * k / 16384 + 2 * m * n;
        c.constants = {{"block", static_cast<double>(kBlock)}};
        c.work = flops;
        c.working_set_bytes = bytes;
        c.flops_by_class = {{ComputeClass::tensor_fp8, flops}};
        c.roofline_bytes = bytes;
        return c;
    }

    // Per K block: the exact block products (matmul_abt of the stored e4m3 values), scaled in double.
    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const auto* a = c.buffers[0].as<uint8_t>();
        const auto* a_scale = c.buffers[1].as<float>();
        const auto* b = c.buffers[2].as<uint8_t>();
        const auto* b_scale = c.buffers[3].as<float>();
        std::vector<double> sum(s.m * s.n, 0.0);
        std::vector<float> a_block(s.m * kBlock), b_block(s.n * kBlock);
        for (size_t kb = 0; kb < s.kb(); ++kb) {
            for (size_t r = 0; r < s.m; ++r)
                for (size_t i = 0; i < kBlock; ++i) a_block[r * kBlock + i] = e4m3_to_float(a[r * s.k + kb * kBlock + i]);
            for (size_t r = 0; r < s.n; ++r)
                for (size_t i = 0; i < kBlock; ++i) b_block[r * kBlock + i] = e4m3_to_float(b[r * s.k + kb * kBlock + i]);
            const std::vector<double> part = matmul_abt(a_block, b_block, s.m, s.n, kBlock);
            parallel_rows(s.m, [&](size_t begin, size_t end) {
                for (size_t r = begin; r < end; ++r) {
                    const double as = a_scale[r * s.kb() + kb];
                    for (size_t j = 0; j < s.n; ++j)
                        sum[r * s.n + j] += as * b_scale[(j / kBlock) * s.kb() + kb] * part[r * s.n + j];
                }
            });
        }
        std::vector<float> out(sum.size());
        for (size_t i = 0; i < sum.size(); ++i) out[i] = static_cast<float>(sum[i]);
        return Reference{{to_bytes(out)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 1 || ref.results.size() != 1) return missing_output();
        const Shape s = shape_of(size);
        const auto want = bf16_reference_values(ref.results[0], s.m * s.n);
        const ElementScale scale = block_dot_rms_scale(dequantise(c.buffers[0], c.buffers[1], s.m, s.k, 1),
                                                       dequantise(c.buffers[2], c.buffers[3], s.n, s.k, kBlock), s.m,
                                                       s.n, s.k, kBlock);
        const IndexFormatter where = [n = s.n](int64_t i) {
            return fmt::format("(m={}, n={})", static_cast<size_t>(i) / n, static_cast<size_t>(i) % n);
        };
        return check_bf16_per_element(as_bf16(outputs[0]), want.values, kTolerance, scale, want.own_rounding, where);
    }

private:
    // Massive activation channels and spikes in A (so the other values of their blocks quantise to
    // e4m3 subnormals or zero), one near-zero token row of A (values ~1e-9: under the 1e-4 amax
    // clamp every one of them is an e4m3 subnormal or zero, and they are the whole of that row's
    // output), B blocks 2^-10 and 2^6 times their neighbours, and one all-zero B block (scale 1).
    static void plant_outliers(std::span<float> a, std::span<float> b, const Shape& s, uint64_t seed) {
        outliers::plant_spikes(a, {0.001, 50, 0}, seed, spike_stream);
        outliers::plant_massive_channels(a, s.m, s.k, 2, 300, seed, channel_stream);
        for (size_t i = 0; i < s.k; ++i) a[(s.m / 2) * s.k + i] *= 1e-9f;
        const auto blocks = outliers::pick_distinct(s.nb() * s.kb(), std::min<size_t>(3, s.nb() * s.kb()), seed, extreme_stream);
        const double factors[] = {0x1.0p-10, 0x1.0p6, 0.0};
        for (size_t i = 0; i < blocks.size(); ++i) {
            const size_t nb = blocks[i] / s.kb(), kb = blocks[i] % s.kb();
            for (size_t r = nb * kBlock; r < (nb + 1) * kBlock; ++r)
                for (size_t j = kb * kBlock; j < (kb + 1) * kBlock; ++j) b[r * s.k + j] *= static_cast<float>(factors[i]);
        }
    }

    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for c";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_gemm_fp8_block_task() { return std::make_unique<GemmFp8BlockTask>(); }

}  // namespace kevo
