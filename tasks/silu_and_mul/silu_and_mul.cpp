// ML pack, activation: silu_and_mul, the gated MLP activation of LLaMA/Qwen/DeepSeek (vLLM's
// silu_and_mul): out[t, i] = silu(x[t, i]) * x[t, I + i] over a [T, 2I] bf16 input (gate half,
// then up half), bf16 output. Bandwidth-bound: 6 bytes per output element. The contract: within half
// an ulp beyond its own rounding of the exact value (silu and the product in fp32, rounded once) or
// of vLLM's recipe (silu rounded to bf16 first, then the product: csrc/activation_kernels.cu).
#include <cmath>
#include <iterator>
#include <memory>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/bf16_buffer.hpp"
#include "task/bf16_recipes.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

// Beyond the output's own rounding (half an ulp) a kernel may add half an ulp: at most 1 ulp from
// the exact value in all. fp32 silu and product add ~1e-6 relative (~3e-4 ulp), so a correct
// kernel is >1000x inside. Rounding silu(g) to bf16 first adds up to a whole ulp: that is vLLM's
// recipe, admitted against its own value (kSiluRounding below). A wrong constant (a swish beta of
// 1.02, a 2^-7 scale) is off by ulps against both. The floor 1e-30 |g u| admits fp32's range: for g below -88.7, exp(-g) overflows and fp32 silu is 0
// where the exact value, |g u| e^g < 3e-39 |g u|, may still be a (tiny) bf16 number.
constexpr Bf16Tolerance kTolerance{0.5, 1e-30};
// vLLM's silu is an fp32 expf and a division (a few fp32 ulp, ~2^-21 relative) before its bf16
// rounding; where that lands within 2^-18 of a bf16 midpoint both neighbours are the recipe's.
constexpr double kSiluRounding = 0x1.0p-18;
// The outlier trial's gate values in both tails: silu tiny but a normal bf16 number (-20 to -88),
// and beyond fp32's exp range on both sides (exp(-g) overflows below -88.7, exp(g) above 88.7).
constexpr float kGateTails[] = {-100.0f, -87.0f, -60.0f, -30.0f, -21.0f, 21.0f, 60.0f, 89.0f, 100.0f, 150.0f};

enum Stream : uint64_t { x_stream = 1, spike_stream = 2, channel_stream = 3, tail_stream = 4 };

double silu(double g) { return g / (1.0 + std::exp(-g)); }

SizeSpec size_ti(int64_t t, int64_t i, bool heldout = false) {
    return {std::to_string(t) + "x" + std::to_string(i), heldout, {{"T", t}, {"I", i}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "silu_and_mul";
    s.regime = "ML activation";
    s.pack = "ml";
    s.category = "activation";
    s.order = 100;
    s.bound = Bound::bandwidth;
    s.model = "6 B per output element (read gate and up bf16, write out bf16)";
    s.tolerance = "bf16 out within 0.5 ulp beyond its own rounding of the exact value (silu and product in fp32, "
                  "rounded once) or of vLLM's bf16(silu(g)) * u; NaN or Inf fails";
    s.kernels = {{"silu_and_mul",
                  {sig::const_ptr("x", ParamType::bf16), sig::ptr("out", ParamType::bf16),
                   sig::value("d", ParamType::u32), sig::value("tokens", ParamType::u32)},
                  2,
                  Dim3{256, 1, 1}}};
    // small: PoCL in seconds. paper: LLaMA-3-8B decode (I 14336), LLaMA-3-70B TP8 prefill (I 3584),
    // Qwen3-30B-A3B experts (I 768, 256 tokens x top-8 rows); held out DeepSeek-V3 dense (I 18432).
    // large: prefill chunks of 16k tokens (8B), 8k (70B, I 28672), 4k x top-8 rows (Qwen3 experts),
    // T at most 65535 (the CUDA grid's y limit).
    s.profiles["small"] = {size_ti(16, 512), size_ti(64, 1024), size_ti(256, 768), size_ti(37, 640, true)};
    s.profiles["paper"] = {size_ti(64, 14336), size_ti(2048, 3584), size_ti(2048, 768), size_ti(256, 18432, true)};
    s.profiles["large"] = {size_ti(16384, 14336), size_ti(8192, 28672), size_ti(32768, 768),
                           size_ti(12288, 18432, true)};
    return s;
}

class SiluAndMulTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const auto t = static_cast<size_t>(size.param("T")), d = static_cast<size_t>(size.param("I"));
        std::vector<float> x(t * 2 * d);
        rng::fill_normal(x, seed, x_stream, 0.0f, 1.0f);
        if (trial == Trial::outlier) {
            // Gate values deep in both tails (silu(-80) underflows, exp(80) overflows in fp32) and
            // massive up-projection channels.
            outliers::plant_spikes(x, {0.01, 30, 0}, seed, spike_stream);
            outliers::plant_massive_channels(x, t, 2 * d, 4, 300, seed, channel_stream);
            // Every tail value in every size, at positions from the seed (gate half, up left as drawn).
            const auto spots = outliers::pick_distinct(t * d, std::size(kGateTails), seed, tail_stream);
            for (size_t n = 0; n < spots.size(); ++n) x[spots[n] / d * 2 * d + spots[n] % d] = kGateTails[n];
        }
        Case c;
        c.buffers.push_back(make_bf16_buffer("x", BufferRole::input, x));
        c.buffers.push_back(make_bf16_buffer("out", BufferRole::output, t * d));
        c.launches.push_back({"silu_and_mul",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::u(static_cast<uint32_t>(d)),
                               ArgRef::u(static_cast<uint32_t>(t))},
                              Dim3{d, t, 1}});
        c.results = {1};
        c.work = 6.0 * static_cast<double>(t * d);
        c.working_set_bytes = c.work;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const std::vector<float> x = bf16_values(c.buffers[0]);
        const size_t n = c.buffers[1].count<uint16_t>();
        const auto d = static_cast<size_t>(size.param("I"));
        std::vector<float> out(n);
        parallel_for(n, [&](size_t begin, size_t end) {
            for (size_t k = begin; k < end; ++k) {
                const size_t row = k / d, i = k % d;
                const double g = x[row * 2 * d + i], u = x[row * 2 * d + d + i];
                out[k] = static_cast<float>(silu(g) * u);
            }
        });
        return Reference{{to_bytes(out)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 1 || ref.results.size() != 1) return missing_output();
        const auto want = bf16_reference_values(ref.results[0], c.buffers[1].count<uint16_t>());
        const auto d = static_cast<size_t>(size.param("I"));
        const IndexFormatter where = [d](int64_t k) {
            return fmt::format("(t={}, i={})", static_cast<size_t>(k) / d, static_cast<size_t>(k) % d);
        };
        const std::vector<float> x = bf16_values(c.buffers[0]);
        const ElementScale gate_times_up = [&](size_t k) {
            const size_t row = k / d, i = k % d;
            return std::fabs(static_cast<double>(x[row * 2 * d + i]) * x[row * 2 * d + d + i]);
        };
        const Bf16Recipe vllm{"vLLM's bf16(silu(g)) * u", [&](size_t k, RecipeValues& values) {
                                  const size_t row = k / d, i = k % d;
                                  const double u = x[row * 2 * d + d + i];
                                  const auto [lo, hi] = bf16_roundings_near(silu(x[row * 2 * d + i]), kSiluRounding);
                                  values[0] = lo * u, values[1] = hi * u;
                                  return size_t{lo == hi ? 1u : 2u};
                              }};
        return check_bf16_exact_or_recipe(as_bf16(outputs[0]), want.values, want.own_rounding, kTolerance, gate_times_up,
                                          vllm, where);
    }

private:
    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for out";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_silu_and_mul_task() { return std::make_unique<SiluAndMulTask>(); }

}  // namespace kevo
