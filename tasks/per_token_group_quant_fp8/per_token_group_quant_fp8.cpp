// ML pack, quantisation: per_token_group_quant_fp8, the fp8 activation quantisation of vLLM/SGLang
// that runs before every DeepSeek-V3 block-scaled fp8 GEMM (it produces gemm_fp8_block's A and
// a_scale in their layout). Input x: bf16 [T, H]; per token and per 128-wide group along H:
//   s = max(amax, eps) / 448 (fp32),  q = e4m3(clamp(x / s, -448, 448)), round to nearest even;
// q is e4m3 bytes [T, H] row-major, s is fp32 [T, H/128] row-major (one scale per token and group,
// a_scale[t, g]). Bandwidth-bound: 3 B per element and 4 B per group. The contract: scales within
// 1 fp32 ulp of fl(max(amax, eps) / 448); each byte equal to the exact-division byte or the
// reciprocal-multiply byte from the kernel's own scale (or, near but not on an e4m3 rounding
// boundary, either neighbour: approximate fp32 division), with the sign of x (-0 gives 0x80).
#include <algorithm>
#include <bit>
#include <cmath>
#include <iterator>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "core/dtypes.hpp"
#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr size_t kGroup = 128;
// vLLM's default eps (per_token_group_quant_fp8(..., eps=1e-10)); the outlier trial passes
// DeepGEMM's amax clamp (per_token_cast_to_fp8: 1e-4), so a kernel that hard-codes either fails.
constexpr float kEpsNominal = 1e-10f;
constexpr float kEpsOutlier = 1e-4f;

// Scales: fl(max(amax, eps) / 448) is one fp32 value; 1 ulp admits amax * fl(1 / 448) (two
// roundings), which some kernels use. Every wrong scale this task has seen (no eps, a per-token
// amax, a hard-coded eps, an amax over part of the group) is off by millions of ulps or more.
constexpr double kScaleUlps = 1;
// Bytes. Admitted per element, computed on the host from the kernel's own scale s:
//   (a) e4m3(fl(x / s))           exact fp32 division (vLLM's CUDA kernel, its register path),
//   (b) e4m3(fl(x * fl(1 / s)))   the reciprocal multiply (SGLang's and UE8M0-style kernels),
//   (c) any e4m3 rounding of a value within 2^-21 (relative) of the exact quotient x / s, unless
//       x / s is itself an e4m3 midpoint: approximate fp32 division (Triton's default `/` lowers
//       to div.full.f32, <= 2 ulp = 2^-22 relative; --use_fast_math) sits 2x inside.
// On an exact midpoint only (a) and (b) pass: ties go to even. Any other byte is at least half an
// e4m3 spacing (2^-5 relative) away: round toward zero, ties away, flushed subnormals, a scale
// from the wrong amax. The error reported is the relative distance of x / s from the interval
// of values that round to the byte (0 for bytes equal to (a) or (b)), against 2^-21.
constexpr double kQuotientWindow = 0x1.0p-21;

enum Stream : uint64_t { x_stream = 1, factor_stream = 2, spike_stream = 3, structure_stream = 4, row_stream = 5,
                         sign_stream = 6, place_stream = 7 };

struct Shape {
    size_t t = 0, h = 0;
    size_t groups() const { return h / kGroup; }           // per token
    size_t elements() const { return t * h; }
    size_t scales() const { return t * groups(); }
};

Shape shape_of(const SizeSpec& size) {
    return {static_cast<size_t>(size.param("T")), static_cast<size_t>(size.param("H"))};
}

SizeSpec size_th(int64_t t, int64_t h, bool heldout = false) {
    return {std::to_string(t) + "x" + std::to_string(h), heldout, {{"T", t}, {"H", h}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "per_token_group_quant_fp8";
    s.regime = "ML quantisation";
    s.pack = "ml";
    s.category = "quantization";
    s.order = 127;
    s.bound = Bound::bandwidth;
    s.model = "3 B per element (read x bf16, write q e4m3) + 4 B per 128-element group (fp32 scale)";
    s.tolerance = "scales within 1 fp32 ulp of fl(max(amax, eps) / 448); each q byte the e4m3 (nearest even, saturating) "
                  "of fl(x / s) or of fl(x * fl(1 / s)) for the kernel's own s, or of any value within 2^-21 of x / s "
                  "unless x / s is an e4m3 midpoint; sign of x kept (-0 is 0x80); NaN fails";
    s.kernels = {{"per_token_group_quant_fp8",
                  {sig::const_ptr("x", ParamType::bf16), sig::ptr("q", ParamType::u8), sig::ptr("scales", ParamType::f32),
                   sig::value("hidden", ParamType::u32), sig::value("tokens", ParamType::u32),
                   sig::value("eps", ParamType::f32)},
                  2,
                  Dim3{128, 1, 1}}};
    // T x H. small: PoCL in seconds (a decode row, 1536 = DeepSeek-V3's q_lora_rank held out).
    // paper: DeepSeek-V3 decode, T = 1 at H 7168 (Atrex: (1, 7168), 72750 calls, the hottest
    // shape), a 2048-token prefill chunk at the TP8 o_proj input (H 2048; also Qwen3-30B's hidden),
    // 256 decode tokens at H 4096 (Qwen3-8B/235B hidden); held out the TP8 down_proj input (H 2304)
    // at 64 tokens, gemm_fp8_block's paper (64, 7168, 2304). large (bandwidth saturation): prefill
    // chunks of 16384 x 7168, 32768 x 4096 and 49152 x 2048 (~100M elements each); held out the TP1
    // down_proj input (H 18432 = 144 groups) at 8192 tokens. T stays below 65536 (the grid's y).
    s.profiles["small"] = {size_th(1, 1024), size_th(16, 2048), size_th(64, 768), size_th(5, 1536, true)};
    s.profiles["paper"] = {size_th(1, 7168), size_th(2048, 2048), size_th(256, 4096), size_th(64, 2304, true)};
    s.profiles["large"] = {size_th(16384, 7168), size_th(32768, 4096), size_th(49152, 2048),
                           size_th(8192, 18432, true)};
    return s;
}

// The e4m3 magnitudes (codes 0x00..0x7e) in increasing order, for the interval a byte stands for.
float e4m3_magnitude(unsigned code) { return e4m3_to_float(static_cast<uint8_t>(code)); }

// |v| rounds (nearest even, saturating at 448) to the e4m3 magnitude code `code` exactly when it
// lies in [lo, hi] (an end is a midpoint, which goes to the even code).
struct Interval {
    double lo, hi;
};
Interval rounding_interval(unsigned code) {
    const double g = e4m3_magnitude(code);
    const double lo = code == 0 ? 0.0 : (e4m3_magnitude(code - 1) + g) / 2;
    const double hi = code >= 0x7e ? HUGE_VAL : (g + e4m3_magnitude(code + 1)) / 2;
    return {lo, hi};
}

// Is a (> 0) an e4m3 rounding boundary: halfway between two neighbouring magnitudes below 448?
bool is_e4m3_midpoint(double a) {
    if (!(a > 0) || a >= 448) return false;
    const uint8_t code = float_to_e4m3(static_cast<float>(a), Fp8Overflow::saturate) & 0x7f;
    const Interval in = rounding_interval(code);
    return a == in.lo || a == in.hi;
}

// The e4m3 byte of one recipe's fp32 quotient, clamped to +-448 as production does.
uint8_t quantise(float quotient) { return float_to_e4m3(std::clamp(quotient, -kE4m3Max, kE4m3Max), Fp8Overflow::saturate); }

// fp32 values in an order where adjacent floats differ by 1 (negative ones below zero).
int64_t ordered(float f) {
    const auto u = static_cast<int64_t>(std::bit_cast<uint32_t>(f));
    return u & 0x80000000 ? 0x80000000 - u : u;
}

// The reference scale of each group: fl(max(amax, eps) / 448), amax over the stored bf16 values.
std::vector<float> reference_scales(const std::vector<float>& x, const Shape& s, float eps) {
    std::vector<float> scales(s.scales());
    parallel_for(s.scales(), [&](size_t begin, size_t end) {
        for (size_t g = begin; g < end; ++g) {
            float amax = 0;
            for (size_t i = g * kGroup; i < (g + 1) * kGroup; ++i) amax = std::max(amax, std::fabs(x[i]));
            scales[g] = std::max(amax, eps) / kE4m3Max;
        }
    });
    return scales;
}

HostBuffer byte_output(std::string name, size_t count) {
    return make_buffer<uint8_t>(std::move(name), BufferRole::output, ElemType::f8e4m3, count);
}

class PerTokenGroupQuantFp8Task final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    HostFootprint host_footprint(const SizeSpec& size) const override {
        const Shape s = shape_of(size);
        const uint64_t n = s.elements(), g = s.scales();
        // case: x bf16 (and its fp32 draw while it is built), q, scales; reference and check: x as
        // floats, the reference q and scales, the downloaded outputs.
        return {4 * n + 2 * n + n + 4 * g, 4 * n + 2 * n + 8 * g};
    }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        std::vector<float> x(s.elements());
        rng::fill_normal(x, seed, x_stream, 0.0f, 1.0f);
        // Each (token, group) scaled by 2^e, e uniform in [-3, 3]: neighbouring groups' scales
        // differ by up to 2^6, so a per-token amax or a scale written to the wrong group is off.
        parallel_for(s.scales(), [&](size_t begin, size_t end) {
            for (size_t g = begin; g < end; ++g) {
                const auto f = static_cast<float>(std::exp2(std::round((2 * rng::uniform(seed, factor_stream, g) - 1) * 3)));
                for (size_t i = g * kGroup; i < (g + 1) * kGroup; ++i) x[i] *= f;
            }
        });
        const float eps = trial == Trial::outlier ? kEpsOutlier : kEpsNominal;
        if (trial == Trial::outlier) plant_outliers(x, s, seed);
        Case c;
        c.buffers.push_back(make_bf16_buffer("x", BufferRole::input, x));
        c.buffers.push_back(byte_output("q", s.elements()));
        auto scales = make_buffer<float>("scales", BufferRole::output, ElemType::f32, s.scales());
        c.buffers.push_back(std::move(scales));
        c.launches.push_back({"per_token_group_quant_fp8",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::buf(2), ArgRef::u(static_cast<uint32_t>(s.h)),
                               ArgRef::u(static_cast<uint32_t>(s.t)), ArgRef::f(eps)},
                              Dim3{s.h, s.t, 1}});
        c.results = {1, 2};
        c.constants = {{"group", static_cast<double>(kGroup)}, {"eps", static_cast<double>(eps)},
                       {"fp8_max", static_cast<double>(kE4m3Max)}};
        c.work = 3.0 * static_cast<double>(s.elements()) + 4.0 * static_cast<double>(s.scales());
        c.working_set_bytes = c.work;
        return c;
    }

    // The exact-division recipe from the reference scales: q = e4m3(clamp(fl(x / s))), in fp32
    // exactly as a kernel computes it (one fp32 division, one e4m3 rounding).
    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const std::vector<float> x = bf16_values(c.buffers[0]);
        const auto eps = static_cast<float>(c.constants.at("eps"));
        const std::vector<float> scales = reference_scales(x, s, eps);
        std::vector<std::byte> q(s.elements());
        parallel_for(s.elements(), [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) q[i] = static_cast<std::byte>(quantise(x[i] / scales[i / kGroup]));
        });
        return Reference{{std::move(q), to_bytes(scales)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        const Shape s = shape_of(size);
        if (outputs.size() != 2 || ref.results.size() != 2) return failure("size", "the run returned no output for q or scales");
        if (outputs[0].size() != s.elements() || outputs[1].size() != 4 * s.scales())
            return failure("size", fmt::format("q has {} bytes and scales {} (want {} and {})", outputs[0].size(),
                                               outputs[1].size(), s.elements(), 4 * s.scales()));
        const CheckResult scales = check_scales(s, as_floats(outputs[1]), as_floats(ref.results[1]));
        if (!scales.pass) return scales;
        const CheckResult q = check_bytes(s, bf16_values(c.buffers[0]), reinterpret_cast<const uint8_t*>(outputs[0].data()),
                                          as_floats(outputs[1]));
        return binding(scales, q);
    }

private:
    // Every structure at every size, in distinct groups chosen from the seed (rows other than the
    // all-zero row): an all-zero row (T > 1), an all +0 group, a group of +-0 (the bytes keep the
    // sign: 0x80), a tiny group (amax ~1e-7, below eps = 1e-4 and above 1e-10: the scale is
    // eps / 448), two groups with one spike 2^14 above the rest (+ and -: the rest quantise to
    // e4m3 subnormals and zeros), and two groups of exact e4m3 midpoints (amax 1.75 2^k, so
    // s = 2^(k-8) and x / s is exact in every recipe: 126 midpoints from 2^-10 to 432, random
    // signs; ties go to even). Random spikes (p 0.002, 1000x) on top.
    static void plant_outliers(std::vector<float>& x, const Shape& s, uint64_t seed) {
        outliers::plant_spikes(x, {0.002, 1000, 0}, seed, spike_stream);
        const size_t g = s.groups();
        size_t zero_row = s.t;  // none
        if (s.t > 1) {
            zero_row = std::min(s.t - 1, static_cast<size_t>(rng::uniform(seed, row_stream, 0) * static_cast<double>(s.t)));
            std::fill(x.begin() + zero_row * s.h, x.begin() + (zero_row + 1) * s.h, 0.0f);
        }
        constexpr size_t kStructures = 7;
        const size_t pool = (zero_row < s.t ? s.t - 1 : s.t) * g;
        const auto picks = outliers::pick_distinct(pool, std::min(kStructures, pool), seed, structure_stream);
        const auto group_at = [&](size_t pick) {  // skip the zero row
            const size_t row = pick / g;
            return ((zero_row < s.t && row >= zero_row) ? row + 1 : row) * g + pick % g;
        };
        const auto sign = [&](size_t i) { return rng::uniform(seed, sign_stream, i) < 0.5 ? -1.0f : 1.0f; };
        const auto position = [&](size_t k) {
            return std::min(kGroup - 1, static_cast<size_t>(rng::uniform(seed, place_stream, k) * kGroup));
        };
        for (size_t k = 0; k < picks.size(); ++k) {
            float* grp = x.data() + group_at(picks[k]) * kGroup;
            switch (k) {
            case 0: std::fill(grp, grp + kGroup, 0.0f); break;
            case 1:
                for (size_t i = 0; i < kGroup; ++i) grp[i] = i % 2 ? -0.0f : 0.0f;
                break;
            case 2:  // clamped first: a random spike here would lift amax above eps
                for (size_t i = 0; i < kGroup; ++i) grp[i] = std::clamp(grp[i], -30.0f, 30.0f) * 1e-7f;
                break;
            case 3:
            case 4: {
                float amax = 0;
                for (size_t i = 0; i < kGroup; ++i) amax = std::max(amax, std::fabs(grp[i]));
                grp[position(k)] = (k == 3 ? 1.0f : -1.0f) * std::ldexp(std::max(amax, 1.0f), 14);
                break;
            }
            default: plant_midpoints(grp, static_cast<int>(k) - 8, position(k), sign, k * kGroup);
            }
        }
    }

    // amax = 1.75 2^e2 at `at` (s = 2^(e2 - 8) exactly), the other 127 elements e4m3 midpoints
    // times 2^(e2 - 8) (bf16-exact: 5-bit significands), the last one -0.
    template <class Sign>
    static void plant_midpoints(float* grp, int e2, size_t at, const Sign& sign, size_t sign_base) {
        std::vector<double> mids;
        for (int k = 0; k < 8; ++k) mids.push_back(std::ldexp(2 * k + 1, -10));  // subnormal midpoints
        for (int e = -6; e <= 8; ++e)
            for (int k = 0; k < 8; ++k) {
                const double m = std::ldexp(1 + (2 * k + 1) / 16.0, e);
                if (m < 448) mids.push_back(m);
            }
        size_t next = 0;
        for (size_t i = 0; i < kGroup; ++i) {
            if (i == at) {
                grp[i] = sign(sign_base + i) * static_cast<float>(std::ldexp(1.75, e2));
            } else if (next < mids.size()) {
                grp[i] = sign(sign_base + i) * static_cast<float>(std::ldexp(mids[next++], e2 - 8));
            } else {
                grp[i] = -0.0f;
            }
        }
    }

    static CheckResult failure(std::string kind, std::string message) {
        CheckResult r;
        r.kind = std::move(kind);
        r.message = std::move(message);
        return r;
    }

    static std::string group_name(const Shape& s, size_t g) { return fmt::format("(t={}, group={})", g / s.groups(), g % s.groups()); }
    static std::string element_name(const Shape& s, size_t i) { return fmt::format("(t={}, h={})", i / s.h, i % s.h); }

    static CheckResult check_scales(const Shape& s, std::span<const float> got, std::span<const float> want) {
        CheckResult r;
        r.kind = "scale_ulp";
        r.tolerance = kScaleUlps;
        for (size_t g = 0; g < got.size(); ++g)
            if (!std::isfinite(got[g])) {
                r.kind = "nan";
                r.worst_index = static_cast<int64_t>(g);
                r.error = std::numeric_limits<double>::quiet_NaN();
                r.message = fmt::format("scale at {} is {}", group_name(s, g), got[g]);
                return r;
            }
        double worst = 0;
        size_t at = 0;
        for (size_t g = 0; g < got.size(); ++g) {
            const auto ulps = static_cast<double>(std::llabs(ordered(got[g]) - ordered(want[g])));
            if (ulps > worst) worst = ulps, at = g;
        }
        r.error = worst;
        r.worst_index = static_cast<int64_t>(at);
        r.pass = worst <= kScaleUlps;
        r.message = fmt::format("scale at {}: {:.9g}, want fl(max(amax, eps) / 448) = {:.9g}; {} fp32 ulps (tolerance {})",
                                group_name(s, at), got[at], want[at], worst, kScaleUlps);
        return r;
    }

    // Per element against its own group's (already checked) scale.
    static CheckResult check_bytes(const Shape& s, const std::vector<float>& x, const uint8_t* got,
                                   std::span<const float> scales) {
        CheckResult r;
        r.kind = "e4m3_quotient";
        r.tolerance = kQuotientWindow;
        for (size_t i = 0; i < s.elements(); ++i)
            if ((got[i] & 0x7f) == 0x7f) {
                r.kind = "nan";
                r.worst_index = static_cast<int64_t>(i);
                r.error = std::numeric_limits<double>::quiet_NaN();
                r.message = fmt::format("q at {} is 0x{:02x} (NaN in e4m3fn); x = {:.6g}, scale {:.9g}", element_name(s, i),
                                        got[i], x[i], scales[i / kGroup]);
                return r;
            }
        std::vector<double> error(s.elements(), 0.0);
        parallel_for(s.elements(), [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) error[i] = byte_error(x[i], scales[i / kGroup], got[i]);
        });
        const auto worst = std::max_element(error.begin(), error.end());
        const auto at = static_cast<size_t>(worst - error.begin());
        const float sc = scales[at / kGroup];
        r.error = *worst;
        r.worst_index = static_cast<int64_t>(at);
        r.pass = *worst <= kQuotientWindow;
        r.message = fmt::format("q at {} is 0x{:02x} ({:.6g}); x = {:.6g}, scale {:.9g}, x / scale = {:.9g}: exact division "
                                "gives 0x{:02x}, reciprocal multiply 0x{:02x}; relative distance {} (tolerance {}{})",
                                element_name(s, at), got[at], e4m3_to_float(got[at]), x[at], sc,
                                static_cast<double>(x[at]) / sc, quantise(x[at] / sc), quantise(x[at] * (1.0f / sc)),
                                short_sci(*worst), short_sci(kQuotientWindow),
                                is_e4m3_midpoint(std::fabs(static_cast<double>(x[at]) / sc))
                                    ? "; x / scale is an e4m3 midpoint: ties go to even"
                                    : "");
        return r;
    }

public:
    // 0 when `got` is one of the two recipes' bytes; else the relative distance of the exact x / s
    // from the values that round to `got`; 1 (the quotient's own size) for a wrong sign, for a
    // nonzero byte of a zero quotient and for the odd neighbour of an exact midpoint.
    static double byte_error(float x, float scale, uint8_t got) {
        if (got == quantise(x / scale) || got == quantise(x * (1.0f / scale))) return 0;
        if (((got & 0x80) != 0) != std::signbit(x)) return 1;
        const double a = std::fabs(static_cast<double>(x) / scale);
        if (is_e4m3_midpoint(a) || a == 0) return 1;
        const Interval in = rounding_interval(got & 0x7f);
        if (a >= in.lo && a <= in.hi) return 0;
        return (a < in.lo ? in.lo - a : a - in.hi) / a;
    }

private:
    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_per_token_group_quant_fp8_task() { return std::make_unique<PerTokenGroupQuantFp8Task>(); }

}  // namespace kevo
