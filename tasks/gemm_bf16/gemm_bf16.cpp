// ML pack, gemm: gemm_bf16, the dense linear layer C = A * B^T of every LLaMA-style projection (qkv,
// o, gate_up, down): A bf16 [M, K] activations, B bf16 [N, K] weights ([out, in]), C bf16 [M, N],
// fp32 accumulation and one rounding. Scored by the multi-class roofline: W = 2MNK bf16
// tensor-core FLOPs, Q = 2(MK + NK + MN) bytes (compute-bound at prefill, bandwidth at decode).
#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/gemm_reference.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

// Per element: beyond the output's own rounding (half an ulp of the exact value), an error of at
// most 2^-13 * S, S = sum_k |a_k b_k|. Products of two bf16 are exact in fp32, so an fp32 sum in any
// order (split-K, tensor-core truncation included) errs by a few 2^-24 S in practice (a truncating
// k16 accumulator at K = 14336: under 15 x 2^-24 S; the worst case K 2^-24 S is never approached by
// random signs): >= 100x inside. A kernel that rounds
// its store toward zero (up to half an ulp more), accumulates in bf16 (2^-9 per addition), rounds
// the operands to fp8 (2^-4 per product) or drops one 32-wide K tile fails at every size.
constexpr Bf16Tolerance kTolerance{0, 0x1.0p-13};

enum Stream : uint64_t { a_stream = 1, b_stream = 2, spike_stream = 3, channel_stream = 4, weight_spike_stream = 5 };

// A double CPU reference (and the S it needs, a second product) beyond ~1.5e9 multiply-adds takes
// more than a few seconds on two cores: the seed on the device gives the reference there.
SizeSpec size_mnk(int64_t m, int64_t n, int64_t k, bool heldout = false) { return gemm_size(m, n, k, heldout, 1.5e9); }

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "gemm_bf16";
    s.regime = "ML gemm";
    s.pack = "ml";
    s.category = "gemm";
    s.peers = {"cublaslt_bf16"};
    s.order = 110;
    s.bound = Bound::compute;
    s.model = "W = 2MNK bf16 tensor-core FLOPs; Q = 2(MK + NK + MN) B (read A and B, write C; bf16)";
    s.tolerance = "per element, beyond the output's own rounding (0.5 ulp of the exact value): 2^-13 * sum_k |a_k b_k| "
                  "(fp32 accumulation in any order); NaN or Inf fails";
    s.kernels = {{"gemm_bf16",
                  {sig::const_ptr("a", ParamType::bf16), sig::const_ptr("b", ParamType::bf16),
                   sig::ptr("c", ParamType::bf16), sig::value("m", ParamType::u32),
                   sig::value("n", ParamType::u32), sig::value("k", ParamType::u32)},
                  2, Dim3{16, 16, 1}}};
    // (N, K): LLaMA-3-8B qkv (6144, 4096), o (4096, 4096), gate_up (28672, 4096), down (4096, 14336);
    // LLaMA-3-70B TP8 qkv (1280, 8192), gate_up (7168, 8192), down (8192, 3584); DeepSeek-V3 dense
    // down (7168, 18432) held out. small: PoCL in well under a second.
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

std::vector<float> absolute(std::vector<float> v) {
    for (float& x : v) x = std::fabs(x);
    return v;
}

// An upper bound of S(m, n) = sum_k |a_mk b_nk| from row norms only, for sizes whose reference is the
// device seed's output (an exact S costs as much as the reference): the least of Cauchy-Schwarz
// ||a||_2 ||b||_2 and the Hoelder pairs ||a||_inf ||b||_1, ||a||_1 ||b||_inf.
std::vector<float> scale_bound(std::span<const float> a, std::span<const float> b, Dims d) {
    struct Norms {
        double l1 = 0, l2 = 0, inf = 0;
    };
    auto norms_of = [&](std::span<const float> x, size_t rows) {
        std::vector<Norms> out(rows);
        for (size_t r = 0; r < rows; ++r) {
            Norms& n = out[r];
            for (size_t p = 0; p < d.k; ++p) {
                const double v = std::fabs(x[r * d.k + p]);
                n.l1 += v;
                n.l2 += v * v;
                n.inf = std::max(n.inf, v);
            }
            n.l2 = std::sqrt(n.l2);
        }
        return out;
    };
    const auto na = norms_of(a, d.m), nb = norms_of(b, d.n);
    std::vector<float> s(d.m * d.n);
    parallel_rows(d.m, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i)
            for (size_t j = 0; j < d.n; ++j)
                s[i * d.n + j] = static_cast<float>(
                    std::min({na[i].l2 * nb[j].l2, na[i].inf * nb[j].l1, na[i].l1 * nb[j].inf}));
    });
    return s;
}

class GemmBf16Task final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Dims d = dims_of(size);
        std::vector<float> a(d.m * d.k), b(d.n * d.k);
        rng::fill_normal(a, seed, a_stream, 0.0f, 1.0f);
        // Weights at the 1/sqrt(K) scale of a trained layer, so C is of order one.
        rng::fill_normal(b, seed, b_stream, 0.0f, static_cast<float>(1.0 / std::sqrt(static_cast<double>(d.k))));
        if (trial == Trial::outlier) {
            // Activation spikes and a few massive channels (every row hundreds of times larger in
            // those columns), and weight spikes: S is then dominated by a handful of products.
            outliers::plant_spikes(a, {}, seed, spike_stream);
            outliers::plant_massive_channels(a, d.m, d.k, 3, 300, seed, channel_stream);
            outliers::plant_spikes(b, {0.001, 20, 0}, seed, weight_spike_stream);
        }
        Case c;
        c.buffers.push_back(make_bf16_buffer("a", BufferRole::input, a));
        c.buffers.push_back(make_bf16_buffer("b", BufferRole::input, b));
        c.buffers.push_back(make_bf16_buffer("c", BufferRole::output, d.m * d.n));
        c.launches.push_back({"gemm_bf16",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::u(static_cast<uint32_t>(d.m)),
                               ArgRef::u(static_cast<uint32_t>(d.n)), ArgRef::u(static_cast<uint32_t>(d.k))},
                              Dim3{d.n, d.m, 1}});
        c.results = {2};
        const double m = static_cast<double>(d.m), n = static_cast<double>(d.n), k = static_cast<double>(d.k);
        c.work = 2.0 * m * n * k;
        c.flops_by_class = {{ComputeClass::tensor_bf16, c.work}};
        c.roofline_bytes = 2.0 * (m * k + n * k + m * n);
        c.working_set_bytes = c.roofline_bytes;
        return c;
    }

    // Two results: the exact C, then S = sum_k |a_k b_k| per element (the check's scale).
    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Dims d = dims_of(size);
        const std::vector<float> a = bf16_values(c.buffers[0]), b = bf16_values(c.buffers[1]);
        const std::vector<double> exact = matmul_abt(a, b, d.m, d.n, d.k);
        const std::vector<double> scale = matmul_abt(absolute(a), absolute(b), d.m, d.n, d.k);
        const std::vector<float> exact_f(exact.begin(), exact.end()), scale_f(scale.begin(), scale.end());
        return Reference{{to_bytes(exact_f), to_bytes(scale_f)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        const Dims d = dims_of(size);
        if (outputs.size() != 1 || ref.results.empty()) {
            CheckResult r;
            r.kind = "size";
            r.message = "the run returned no output for c";
            return r;
        }
        const auto want = bf16_reference_values(ref.results[0], d.m * d.n);
        // A CPU reference carries the exact S; a device reference (the seed's bf16 output) does not.
        std::vector<float> scale = ref.results.size() == 2
                                       ? std::vector<float>(as_floats(ref.results[1]).begin(), as_floats(ref.results[1]).end())
                                       : scale_bound(bf16_values(c.buffers[0]), bf16_values(c.buffers[1]), d);
        const ElementScale at = [&scale](size_t i) { return static_cast<double>(scale[i]); };
        const IndexFormatter where = [n = d.n](int64_t i) { return fmt::format("(m={}, n={})", i / n, i % n); };
        CheckResult r = check_bf16_per_element(as_bf16(outputs[0]), want.values, kTolerance, at, want.own_rounding, where);
        r.message = "c: " + r.message;
        return r;
    }

private:
    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_gemm_bf16_task() { return std::make_unique<GemmBf16Task>(); }

}  // namespace kevo
