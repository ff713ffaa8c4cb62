// ML pack, sampling: topk_sampling, the top-k filter plus temperature softmax of a sampler (vLLM's
// top-k path): for each row of fp32 logits, tau = the k-th largest value (duplicates counted), and
//   probs[r, v] = exp((l_v - m) / T) / sum_{l_u >= tau} exp((l_u - m) / T)   where l_v >= tau,
//   probs[r, v] = 0                                                          elsewhere,
// m the row's maximum. Every value tied with tau is kept (so more than k may be). -inf is never
// kept; a row with fewer than k finite values keeps all of them. Checked in two parts: the mask
// exactly (a zero where a value is kept, or a non-zero where it is not, fails and names the
// element), then every kept probability within a relative bound derived from fp32 softmax.
// Bandwidth-bound: 8 B per logit (read it, write its probability).
#include <algorithm>
#include <cmath>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr uint32_t kNominalK = 50;
constexpr double kNominalTemperature = 0.7;
// Per kept element: |got - want| <= want * (kRel + kArg * (|l_v| + |m|) / T) + kAbs, from the fp32
// error terms of a softmax (u = 2^-24):
//   the argument: (l - m) / T, or l / T - m / T as a sampler that scales the logits first computes
//     it, is off by at most 2 u (|l| + |m|) / T, and exp turns that absolute error into the same
//     relative one; kArg = 128 u is 64x that bound (a subtraction first, as the seeds do, errs by
//     2 u |l - m| / T at most: its worst elements sit ~50x inside at 64 u on PoCL, ~100x at 128 u).
//   the rest: exp (1-2 ulp; __expf 2 ulp + 2^-22 |x|), the sum of the kept terms (k + ties of them,
//     ~sqrt(k) u typically, k u at worst) and the division: ~1e-6 at worst for k = 50; kRel 5e-5.
//   kAbs: below FLT_MIN an fp32 exp is subnormal or flushed to zero; anything there is admitted.
// A kernel with the right mask but a wrong denominator (the whole row's sum) is off by far more.
constexpr double kRel = 5e-5;
constexpr double kArg = 128.0 * 0x1.0p-24;
constexpr double kAbs = 0x1.0p-126;

enum Stream : uint64_t { logit_stream = 1, constant_stream = 2, row_stream = 3, tie_stream = 4, huge_stream = 5 };

SizeSpec size_of(int64_t b, int64_t v, bool heldout = false) {
    return {fmt::format("{}x{}", b, v), heldout, {{"B", b}, {"V", v}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "topk_sampling";
    s.regime = "ML sampling";
    s.pack = "ml";
    s.category = "sampling";
    s.order = 117;
    s.bound = Bound::bandwidth;
    s.model = "8 B per logit (read the fp32 logit, write its fp32 probability)";
    s.tolerance = "mask exact (kept iff l >= the k-th largest, ties kept, -inf never); kept probabilities within "
                  "5e-5 + 7.6e-6 (|l| + |max|) / T relative + 2^-126 absolute; NaN or Inf fails";
    s.kernels = {{"topk_sampling",
                  {sig::const_ptr("logits", ParamType::f32), sig::ptr("probs", ParamType::f32),
                   sig::value("vocab", ParamType::u32), sig::value("rows", ParamType::u32),
                   sig::value("k", ParamType::u32), sig::value("temperature", ParamType::f32)},
                  2, Dim3{256, 1, 1}}};
    // B x V. Vocabularies: LLaMA-3 128256, Qwen3 151936, DeepSeek-V3 129280; small 4096 (and an odd
    // 4000 held out) for PoCL. paper: decode batches 1, 32, 256; large: 1-2k rows (a prefill's
    // worth of speculative or batched sampling, working sets of 1-2.5 GB).
    s.profiles["small"] = {size_of(1, 4096), size_of(8, 4096), size_of(32, 4096), size_of(13, 4000, true)};
    s.profiles["paper"] = {size_of(1, 128256), size_of(32, 151936), size_of(256, 129280), size_of(64, 151936, true)};
    s.profiles["large"] = {size_of(1024, 128256), size_of(2048, 151936), size_of(1024, 129280),
                           size_of(1536, 151936, true)};
    return s;
}

// The threshold of one row: the k-th largest value (duplicates counted), or the smallest finite
// value when fewer than k are finite. A row with no finite value has threshold +inf (none kept).
float row_threshold(std::span<const float> row, uint32_t k) {
    std::vector<float> finite;
    finite.reserve(row.size());
    for (float v : row)
        if (std::isfinite(v)) finite.push_back(v);
    if (finite.empty()) return std::numeric_limits<float>::infinity();
    const size_t kth = std::min<size_t>(k, finite.size()) - 1;
    std::nth_element(finite.begin(), finite.begin() + static_cast<std::ptrdiff_t>(kth), finite.end(), std::greater<float>());
    return finite[kth];
}

bool kept(float v, float threshold) { return std::isfinite(v) && v >= threshold; }

class TopkSamplingTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const auto b = static_cast<size_t>(size.param("B")), v = static_cast<size_t>(size.param("V"));
        std::vector<float> logits(b * v);
        // Logits of a trained LM head: roughly normal with a spread of a few units.
        rng::fill_normal(logits, seed, logit_stream, 0.0f, 3.0f);
        uint32_t k = kNominalK;
        double temperature = kNominalTemperature;
        if (trial == Trial::outlier) {
            temperature = draw_outlier(rng::uniform(seed, constant_stream, 0), 0.2, 2.0, kNominalTemperature, 0.05);
            k = static_cast<uint32_t>(std::lround(draw_outlier(rng::uniform(seed, constant_stream, 1), 1, 128, kNominalK, 4)));
            plant_outliers(logits, b, v, k, seed);
        }
        Case c;
        auto in = make_buffer<float>("logits", BufferRole::input, ElemType::f32, b * v);
        std::copy(logits.begin(), logits.end(), in.as<float>());
        c.buffers.push_back(std::move(in));
        c.buffers.push_back(make_buffer<float>("probs", BufferRole::output, ElemType::f32, b * v));
        c.launches.push_back({"topk_sampling",
                              {ArgRef::buf(0), ArgRef::buf(1), ArgRef::u(static_cast<uint32_t>(v)),
                               ArgRef::u(static_cast<uint32_t>(b)), ArgRef::u(k), ArgRef::f(static_cast<float>(temperature))},
                              Dim3{1, b, 1}});
        c.results = {1};
        c.constants = {{"k", double(k)}, {"temperature", double(static_cast<float>(temperature))}};
        c.work = 8.0 * static_cast<double>(b * v);
        c.working_set_bytes = c.work;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const auto v = static_cast<size_t>(size.param("V"));
        const float* logits = c.buffers[0].as<float>();
        const auto k = static_cast<uint32_t>(c.constants.at("k"));
        const double temperature = c.constants.at("temperature");
        std::vector<float> probs(c.buffers[0].count<float>());
        parallel_rows(probs.size() / v, [&](size_t begin, size_t end) {
            for (size_t r = begin; r < end; ++r) {
                const std::span<const float> row(logits + r * v, v);
                const float tau = row_threshold(row, k);
                double m = -std::numeric_limits<double>::infinity(), sum = 0;
                for (float l : row)
                    if (kept(l, tau)) m = std::max(m, double(l));
                for (float l : row)
                    if (kept(l, tau)) sum += std::exp((double(l) - m) / temperature);
                for (size_t n = 0; n < v; ++n)
                    probs[r * v + n] = kept(row[n], tau) ? static_cast<float>(std::exp((double(row[n]) - m) / temperature) / sum)
                                                         : 0.0f;
            }
        });
        return Reference{{to_bytes(probs)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 1 || ref.results.size() != 1 || outputs[0].size() != ref.results[0].size())
            return missing_output();
        const auto v = static_cast<size_t>(size.param("V"));
        const IndexFormatter where = [v](int64_t n) {
            return fmt::format("(row={}, v={})", static_cast<size_t>(n) / v, static_cast<size_t>(n) % v);
        };
        const auto got = as_floats(outputs[0]);
        const auto want = as_floats(ref.results[0]);
        const float* logits = c.buffers[0].as<float>();
        const auto k = static_cast<uint32_t>(c.constants.at("k"));
        // NaN and Inf first, then the mask, then the values.
        CheckResult finite = check_max_abs(got, want, {std::numeric_limits<double>::infinity(), 0, 0}, where);
        if (!finite.pass) return finite;
        if (auto mask = check_mask(got, want, logits, v, k, where); !mask.pass) return mask;
        std::vector<double> row_max(got.size() / v, -std::numeric_limits<double>::infinity());
        for (size_t n = 0; n < got.size(); ++n)
            if (std::isfinite(logits[n])) row_max[n / v] = std::max(row_max[n / v], double(logits[n]));
        const double temperature = c.constants.at("temperature");
        const ElementScale scale = [&](size_t n) {
            // rel * scale + abs with rel 1: the whole per-element bound as a scale. An element that is
            // not kept (-inf among them) has want 0 and must be 0: the mask has checked it.
            if (want[n] == 0) return kAbs;
            const double arg = (std::fabs(double(logits[n])) + std::fabs(row_max[n / v])) / temperature;
            return double(want[n]) * (kRel + kArg * arg) + kAbs;
        };
        CheckResult r = check_per_element(got, want, {0, 1}, scale, where);
        r.message = fmt::format("mask exact; {}", r.message);
        return r;
    }

private:
    // The outlier rows, each kind on its own rows, the kinds in turn from a seeded offset (so every
    // size of six or more rows holds each): ties on both sides of the threshold (the row's maximum
    // copied to two more positions, then values equal to the k-th largest to several more), -inf
    // masked vocabulary, one huge logit, rows with fewer than k finite values, rows shifted by a
    // large offset (exp without the max subtraction overflows) and rows whose logits are all very
    // negative (-300 below: a maximum that starts at 0 instead of -inf underflows every exp).
    static void plant_outliers(std::vector<float>& logits, size_t b, size_t v, uint32_t k, uint64_t seed) {
        constexpr uint64_t kKinds = 6;
        const uint64_t offset = rng::bits(seed, row_stream, 0) % kKinds;
        for (size_t r = 0; r < b; ++r) {
            const std::span<float> row(logits.data() + r * v, v);
            const auto kind = (offset + r) % kKinds;
            if (kind == 0 || b == 1) {
                plant_maximum_ties(row, seed, r);
                plant_threshold_ties(row, k, seed, r);
            }
            if (kind == 1 || b == 1) {
                // A masked vocabulary: a fifth of the entries -inf (never a kept one).
                const float tau = row_threshold(row, k);
                for (size_t n : outliers::pick_distinct(v, v / 5, seed, tie_stream + 100 + r))
                    if (row[n] < tau) row[n] = -std::numeric_limits<float>::infinity();
            }
            if (kind == 2) row[rng::bits(seed, huge_stream, r) % v] += 1000.0f;
            if (kind == 3) {
                // Fewer than k finite values: all but k / 2 (at least 1) become -inf.
                const auto keep = outliers::pick_distinct(v, std::max<size_t>(1, k / 2), seed, tie_stream + 200 + r);
                std::vector<bool> finite(v, false);
                for (size_t n : keep) finite[n] = true;
                for (size_t n = 0; n < v; ++n)
                    if (!finite[n]) row[n] = -std::numeric_limits<float>::infinity();
            }
            if (kind == 4) {
                for (float& l : row) l += 300.0f;  // large logits: exp without the max subtraction overflows
                plant_threshold_ties(row, k, seed, r);
            }
            if (kind == 5)
                for (float& l : row) l -= 300.0f;  // every logit very negative
        }
    }

    // Copies the row's maximum to two more positions: ties above the threshold, which a kernel that
    // counts distinct values instead of values miscounts.
    static void plant_maximum_ties(std::span<float> row, uint64_t seed, size_t r) {
        const float top = *std::max_element(row.begin(), row.end());
        for (size_t n : outliers::pick_distinct(row.size(), 2, seed, tie_stream + 400 + r)) row[n] = top;
    }

    // Copies the row's k-th largest value to up to 3 more positions below it, so the threshold is tied.
    static void plant_threshold_ties(std::span<float> row, uint32_t k, uint64_t seed, size_t r) {
        const float tau = row_threshold(row, k);
        const auto spots = outliers::pick_distinct(row.size(), 8, seed, tie_stream + 300 + r);
        int planted = 0;
        for (size_t n : spots)
            if (row[n] < tau && planted < 3) row[n] = tau, ++planted;
    }

    // Kept positions must hold a positive probability (or 0 where the exact one is below FLT_MIN),
    // the others exactly 0.
    static CheckResult check_mask(std::span<const float> got, std::span<const float> want, const float* logits, size_t v,
                                  uint32_t k, const IndexFormatter& where) {
        std::vector<float> thresholds(got.size() / v);
        parallel_for(thresholds.size(), [&](size_t begin, size_t end) {
            for (size_t r = begin; r < end; ++r) thresholds[r] = row_threshold({logits + r * v, v}, k);
        });
        CheckResult r;
        r.kind = "mask";
        size_t wrong = 0;
        int64_t first = -1;
        for (size_t n = 0; n < got.size(); ++n) {
            const bool keep = kept(logits[n], thresholds[n / v]);
            const bool ok = keep ? (got[n] > 0 || (got[n] == 0 && want[n] < 0x1.0p-126f)) : got[n] == 0;
            if (!ok && wrong++ == 0) first = static_cast<int64_t>(n);
        }
        r.pass = wrong == 0;
        r.error = static_cast<double>(wrong);
        r.worst_index = first;
        if (!r.pass) {
            const auto n = static_cast<size_t>(first);
            r.message = fmt::format("{} of {} elements on the wrong side of the mask; first at {}: logit {} against the "
                                    "row's threshold {} (k = {}), probability {} where {} was expected",
                                    wrong, got.size(), where(first), logits[n], thresholds[n / v], k, got[n],
                                    kept(logits[n], thresholds[n / v]) ? "a kept (non-zero) value" : "0");
        }
        return r;
    }

    static CheckResult missing_output() {
        CheckResult r;
        r.kind = "size";
        r.message = "the run returned no output for probs, or one of the wrong size";
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_topk_sampling_task() { return std::make_unique<TopkSamplingTask>(); }

}  // namespace kevo
