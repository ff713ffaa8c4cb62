// ML pack, gemm: gemm_w8a8, the SmoothQuant-style int8 linear layer: A int8 [M, K] with a per-token
// fp32 scale a_scale[M], B int8 [N, K] ([out, in]) with a per-channel fp32 scale b_scale[N];
// C bf16 [M, N] = bf16(a_scale[m] * b_scale[n] * sum_k a_mk b_nk), the sum exact in int32. Scored by
// the multi-class roofline: W = 2MNK int8 tensor-core ops, Q = MK + NK + 4(M + N) + 2MN bytes.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "core/dtypes.hpp"
#include "core/rng.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/gemm_reference.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

// The int32 sum is exact, so the only errors beside the output's own rounding are fp32's: the sum
// converted to float (2^-24 relative once it passes 2^24) and two scale products, together under
// 2^-22 relative, i.e. 2^-14 of a bf16 ulp (ulp >= 2^-8 relative). 2^-7 of an ulp beyond the own
// rounding is then >= 100x inside, while rounding the sum (or a scaled partial) to bf16 before the
// last product (up to half an ulp more), a dropped K tile, swapped or per-tensor scales and int8
// read as uint8 fail.
constexpr Bf16Tolerance kTolerance{0x1.0p-7, 0};

enum Stream : uint64_t { a_stream = 1, b_stream = 2, a_scale_stream = 3, b_scale_stream = 4, saturate_stream = 5,
                         row_stream = 6, col_stream = 7 };

SizeSpec size_mnk(int64_t m, int64_t n, int64_t k, bool heldout = false) { return gemm_size(m, n, k, heldout, 2e9); }

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "gemm_w8a8";
    s.regime = "ML gemm";
    s.pack = "ml";
    s.category = "gemm";
    s.peers = {"cublaslt_int8"};
    s.order = 111;
    s.bound = Bound::compute;
    s.model = "W = 2MNK int8 tensor-core ops; Q = MK + NK + 4(M + N) + 2MN B (int8 A and B, fp32 scales, bf16 C)";
    s.tolerance = "per element within 2^-7 bf16 ulp beyond the output's own rounding (0.5 ulp of the exact value): "
                  "the int32 sum is exact, only fp32 scale products remain; NaN or Inf fails";
    s.kernels = {{"gemm_w8a8",
                  {sig::const_ptr("a", ParamType::i8), sig::const_ptr("a_scale", ParamType::f32),
                   sig::const_ptr("b", ParamType::i8), sig::const_ptr("b_scale", ParamType::f32),
                   sig::ptr("c", ParamType::bf16), sig::value("m", ParamType::u32),
                   sig::value("n", ParamType::u32), sig::value("k", ParamType::u32)},
                  2, Dim3{16, 16, 1}}};
    // The shapes of gemm_bf16 (LLaMA-3-8B and 70B TP8 projections); DeepSeek-V3 dense down held out.
    s.profiles["small"] = {size_mnk(1, 256, 256), size_mnk(16, 512, 256), size_mnk(64, 256, 512),
                           size_mnk(7, 384, 320, true)};
    s.profiles["paper"] = {size_mnk(16, 6144, 4096), size_mnk(256, 1280, 8192), size_mnk(2048, 4096, 4096),
                           size_mnk(32, 8192, 3584, true)};
    s.profiles["large"] = {size_mnk(2048, 28672, 4096), size_mnk(8192, 4096, 14336), size_mnk(8192, 7168, 8192),
                           size_mnk(2048, 7168, 18432, true)};
    return s;
}

using Dims = GemmDims;
Dims dims_of(const SizeSpec& size) { return gemm_dims(size); }

// Symmetric int8 quantisation as SmoothQuant does it: each row scaled by max|x| / 127.
void quantize_rows(const std::vector<float>& x, size_t rows, size_t cols, std::vector<int8_t>& q, std::vector<float>& scale) {
    q.resize(rows * cols);
    scale.resize(rows);
    for (size_t r = 0; r < rows; ++r) {
        float top = 0;
        for (size_t i = 0; i < cols; ++i) top = std::max(top, std::fabs(x[r * cols + i]));
        scale[r] = top > 0 ? top / 127.0f : 1.0f;
        for (size_t i = 0; i < cols; ++i) q[r * cols + i] = float_to_i8(std::nearbyint(x[r * cols + i] / scale[r]));
    }
}

HostBuffer int8_buffer(std::string name, const std::vector<int8_t>& values) {
    auto b = make_buffer<int8_t>(std::move(name), BufferRole::input, ElemType::i8, values.size());
    std::memcpy(b.data.data(), values.data(), values.size());
    return b;
}

HostBuffer float_buffer(std::string name, const std::vector<float>& values) {
    auto b = make_buffer<float>(std::move(name), BufferRole::input, ElemType::f32, values.size());
    std::memcpy(b.data.data(), values.data(), values.size() * sizeof(float));
    return b;
}

std::vector<float> int8_values(const HostBuffer& b) {
    const auto* p = b.as<int8_t>();
    return std::vector<float>(p, p + b.count<int8_t>());
}

class GemmW8a8Task final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Dims d = dims_of(size);
        std::vector<float> a(d.m * d.k), b(d.n * d.k);
        rng::fill_normal(a, seed, a_stream, 0.0f, 1.0f);
        rng::fill_normal(b, seed, b_stream, 0.0f, 0.02f);
        std::vector<int8_t> qa, qb;
        std::vector<float> sa, sb;
        quantize_rows(a, d.m, d.k, qa, sa);
        quantize_rows(b, d.n, d.k, qb, sb);
        if (trial == Trial::outlier) plant_outliers(d, seed, qa, qb, sa, sb);
        Case c;
        c.buffers.push_back(int8_buffer("a", qa));
        c.buffers.push_back(float_buffer("a_scale", sa));
        c.buffers.push_back(int8_buffer("b", qb));
        c.buffers.push_back(float_buffer("b_scale", sb));
        c.buffers.push_back(make_bf16_buffer("c", BufferRole::output, d.m * d.n));
        c.launches.push_back({"gemm_w8a8",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::buf(3), ArgRef::buf(4),
                               ArgRef::u(static_cast<uint32_t>(d.m)), ArgRef::u(static_cast<uint32_t>(d.n)),
                               ArgRef::u(static_cast<uint32_t>(d.k))},
                              Dim3{d.n, d.m, 1}});
        c.results = {4};
        const double m = static_cast<double>(d.m), n = static_cast<double>(d.n), k = static_cast<double>(d.k);
        c.work = 2.0 * m * n * k;
        c.flops_by_class = {{ComputeClass::tensor_int8, c.work}};
        c.roofline_bytes = m * k + n * k + 4.0 * (m + n) + 2.0 * m * n;
        c.working_set_bytes = c.roofline_bytes;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Dims d = dims_of(size);
        // int8 values are exact in float and every partial sum (< 2^31) exact in double.
        const std::vector<double> sums = matmul_abt(int8_values(c.buffers[0]), int8_values(c.buffers[2]), d.m, d.n, d.k);
        const float* sa = c.buffers[1].as<float>();
        const float* sb = c.buffers[3].as<float>();
        std::vector<float> out(d.m * d.n);
        for (size_t i = 0; i < d.m; ++i)
            for (size_t j = 0; j < d.n; ++j)
                out[i * d.n + j] = static_cast<float>(static_cast<double>(sa[i]) * sb[j] * sums[i * d.n + j]);
        return Reference{{to_bytes(out)}};
    }

    CheckResult check(const SizeSpec& size, const Case&, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        const Dims d = dims_of(size);
        if (outputs.size() != 1 || ref.results.size() != 1) {
            CheckResult r;
            r.kind = "size";
            r.message = "the run returned no output for c";
            return r;
        }
        const auto want = bf16_reference_values(ref.results[0], d.m * d.n);
        const IndexFormatter where = [n = d.n](int64_t i) { return fmt::format("(m={}, n={})", i / n, i % n); };
        CheckResult r = check_bf16_per_element(as_bf16(outputs[0]), want.values, kTolerance, constant_scale(0),
                                               want.own_rounding, where);
        r.message = "c: " + r.message;
        return r;
    }

private:
    // Saturated values (+-127) spread through both operands, a few whole rows of A and columns of B
    // at +-127 (the int32 sum at its largest: K 127^2), and scales far from the nominal ones: tiny and
    // huge per-token scales (1e-4, 1e3 times the row's) and per-channel ones (1e-3, 1e2 times),
    // products that stay in fp32's normal range in any order.
    static void plant_outliers(const Dims& d, uint64_t seed, std::vector<int8_t>& qa, std::vector<int8_t>& qb,
                               std::vector<float>& sa, std::vector<float>& sb) {
        outliers::saturate_int8(qa, 0.01, seed, saturate_stream);
        outliers::saturate_int8(qb, 0.01, seed, saturate_stream + 1);
        const auto rows = outliers::pick_distinct(d.m, std::min<size_t>(d.m, 3), seed, row_stream);
        for (size_t r = 0; r < rows.size(); ++r) {
            for (size_t i = 0; i < d.k; ++i) qa[rows[r] * d.k + i] = (i % 3 == 0) ? -127 : 127;
            sa[rows[r]] *= r % 2 == 0 ? 1e3f : 1e-4f;
        }
        const auto cols = outliers::pick_distinct(d.n, std::min<size_t>(d.n, 4), seed, col_stream);
        for (size_t j = 0; j < cols.size(); ++j) {
            for (size_t i = 0; i < d.k; ++i) qb[cols[j] * d.k + i] = (j % 2 == 0) ? 127 : -127;
            sb[cols[j]] *= j % 2 == 0 ? 1e2f : 1e-3f;
        }
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_gemm_w8a8_task() { return std::make_unique<GemmW8a8Task>(); }

}  // namespace kevo
