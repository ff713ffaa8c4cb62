// Tests of the ML pack's memory-bound operators (silu_and_mul, add_rmsnorm, rope, kv_cache_write):
// specs and sizes, bf16 inputs as stored, references against hand computations on tiny cases, the
// checks on host-simulated right and wrong outputs (both sides, with the margin), and the real seeds
// and wrong kernels through PoCL. The suite-wide tests (SeedEvaluates, Tolerances, CudaCompileOnly,
// Bench) cover the seeds, best-known kernels and <task>_slightly_wrong variants as for every task.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <numbers>
#include <set>

#include "core/dtypes.hpp"
#include "kevo_process.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"
#include "ml_candidates.hpp"

namespace kevo {
namespace {

const std::vector<std::string> kMlTasks = {"silu_and_mul", "add_rmsnorm", "rope", "kv_cache_write"};

std::unique_ptr<Task> load(const std::string& name) {
    auto task = make_task(name);
    EXPECT_TRUE(task.has_value()) << name;
    return std::move(task.value());
}

SizeSpec small_size(const Task& task, size_t index) { return task.spec().profiles.at("small").at(index); }

std::vector<uint16_t> words_of(const HostBuffer& b) { return {b.as<uint16_t>(), b.as<uint16_t>() + b.count<uint16_t>()}; }

std::vector<std::byte> bytes_of_words(const std::vector<uint16_t>& w) {
    std::vector<std::byte> out(w.size() * 2);
    std::memcpy(out.data(), w.data(), out.size());
    return out;
}

// ---------------------------------------------------------------------------------------------
// specs

TEST(MlSpec, PackCategoryOrderAndProfiles) {
    const std::map<std::string, std::pair<int, std::string>> expected = {{"silu_and_mul", {100, "activation"}},
                                                                         {"add_rmsnorm", {101, "normalization"}},
                                                                         {"rope", {102, "embedding"}},
                                                                         {"kv_cache_write", {103, "kv-cache"}}};
    for (const auto& name : kMlTasks) {
        auto task = load(name);
        const auto& spec = task->spec();
        EXPECT_EQ(spec.pack, "ml") << name;
        EXPECT_EQ(spec.order, expected.at(name).first) << name;
        EXPECT_EQ(spec.category, expected.at(name).second) << name;
        EXPECT_EQ(spec.bound, Bound::bandwidth) << name;
        for (const char* profile : {"small", "paper", "large"}) {
            const auto& sizes = spec.profiles.at(profile);
            ASSERT_EQ(sizes.size(), 4u) << name << " " << profile;
            int heldout = 0;
            std::set<std::string> labels;
            for (const auto& s : sizes) {
                heldout += s.heldout;
                labels.insert(s.label);
                EXPECT_FALSE(s.device_reference) << name << " " << s.label << ": the CPU reference is cheap here";
                EXPECT_LT(s.param("T"), 65536) << name << " " << s.label << ": the grid's y extent";
            }
            EXPECT_EQ(heldout, 1) << name << " " << profile;
            EXPECT_EQ(labels.size(), 4u) << name << " " << profile;
        }
    }
    // After every scientific task in the listing.
    int last_sci = -1, first_ml = 1 << 30;
    for (const auto& name : task_names()) {
        const auto task = load(name);
        const auto& spec = task->spec();
        if (spec.pack == "sci") last_sci = std::max(last_sci, spec.order);
        else first_ml = std::min(first_ml, spec.order);
    }
    EXPECT_LT(last_sci, first_ml);
}

TEST(MlSpec, BuffersAreBf16AsStoredAndWorkFollowsTheByteModel) {
    auto silu = load("silu_and_mul");
    const SizeSpec s{"t", false, {{"T", 3}, {"I", 64}}};
    const Case c = silu->make_case(s, 1, Trial::nominal);
    ASSERT_EQ(c.buffers.size(), 2u);
    EXPECT_EQ(c.buffers[0].type, ElemType::bf16);
    EXPECT_EQ(c.buffers[0].bytes(), 3u * 128 * 2);
    EXPECT_EQ(c.buffers[1].role, BufferRole::output);
    EXPECT_DOUBLE_EQ(c.work, 6.0 * 3 * 64);
    auto norm = load("add_rmsnorm");
    const Case n = norm->make_case({"t", false, {{"T", 5}, {"H", 64}}}, 1, Trial::nominal);
    EXPECT_DOUBLE_EQ(n.work, 2.0 * (4.0 * 5 * 64 + 64));
    EXPECT_EQ(n.results, (std::vector<int>{1, 3}));
    auto rope = load("rope");
    const Case r = rope->make_case({"t", false, {{"T", 2}, {"Hq", 4}, {"Hkv", 2}, {"d", 64}}}, 1, Trial::nominal);
    EXPECT_DOUBLE_EQ(r.work, 4.0 * 2 * 6 * 64 + 4.0 * 2 * 64 + 4.0 * 2);
    EXPECT_EQ(r.buffers[0].type, ElemType::i32);
    EXPECT_EQ(r.buffers[3].type, ElemType::f32);
}

// ---------------------------------------------------------------------------------------------
// references by hand

TEST(MlSiluAndMul, ReferenceMatchesHandValues) {
    auto task = load("silu_and_mul");
    const SizeSpec s{"t", false, {{"T", 1}, {"I", 64}}};
    Case c = task->make_case(s, 1, Trial::nominal);
    std::vector<float> x(128, 0.0f);
    x[0] = 1.0f, x[64] = 2.0f;      // silu(1) * 2 = 2 / (1 + e^-1)
    x[1] = -1.0f, x[65] = 0.5f;     // silu(-1) * 0.5
    x[2] = -100.0f, x[66] = 3.0f;   // exp(100) is far beyond fp32: the exact value is ~-1e-41
    c.buffers[0] = make_bf16_buffer("x", BufferRole::input, x);
    const Reference reference = task->reference(s, c);
    const auto ref = as_floats(reference.results[0]);
    EXPECT_NEAR(ref[0], 2.0 / (1.0 + std::exp(-1.0)), 1e-6);
    EXPECT_NEAR(ref[1], -0.5 / (1.0 + std::exp(1.0)), 1e-7);
    EXPECT_NEAR(ref[2], 0.0, 1e-38);
    EXPECT_EQ(ref[3], 0.0f);
}

TEST(MlAddRmsnorm, ReferenceMatchesHandValues) {
    auto task = load("add_rmsnorm");
    const SizeSpec s{"t", false, {{"T", 2}, {"H", 64}}};
    Case c = task->make_case(s, 1, Trial::nominal);
    std::vector<float> x(128, 1.0f), res(128, 1.0f), w(64, 0.5f);
    for (size_t i = 64; i < 128; ++i) x[i] = 0.0f, res[i] = 0.0f;  // row 1 sums to zero
    res[5] = 1.0f + 0x1.0p-7f;  // 1 + (1 + 2^-7) is halfway between two bf16: to even, 2
    c.buffers[0] = make_bf16_buffer("x", BufferRole::input, x);
    c.buffers[1] = make_bf16_buffer("residual", BufferRole::state, res);
    c.buffers[2] = make_bf16_buffer("weight", BufferRole::input, w);
    const auto ref = task->reference(s, c);
    const auto r = decode_floats(ElemType::bf16, ref.results[0]);
    EXPECT_EQ(r[0], 2.0f);
    EXPECT_EQ(r[5], 2.0f) << "the residual is rounded once, ties to even";
    EXPECT_EQ(r[64], 0.0f);
    const auto y = as_floats(ref.results[1]);
    const double eps = c.constants.at("eps");
    EXPECT_NEAR(y[0], 2.0 * 0.5 / std::sqrt(4.0 + eps), 1e-7);  // mean r^2 = 4
    EXPECT_EQ(y[64], 0.0f) << "0 / sqrt(0 + eps)";
}

TEST(MlRope, ReferenceRotatesTheNeoxPairsByTheCachedAngle) {
    auto task = load("rope");
    const SizeSpec s{"t", false, {{"T", 2}, {"Hq", 1}, {"Hkv", 1}, {"d", 64}}};
    Case c = task->make_case(s, 1, Trial::nominal);
    int32_t* pos = c.buffers[0].as<int32_t>();
    pos[0] = 0, pos[1] = 7;
    // q: unit vectors at element 3 of token 0 and of token 1.
    std::vector<float> q(2 * 64, 0.0f);
    q[3] = 1.0f, q[64 + 3] = 1.0f;
    c.buffers[1] = make_bf16_buffer("q", BufferRole::state, q);
    const Reference reference = task->reference(s, c);
    const auto out = as_floats(reference.results[0]);
    EXPECT_EQ(out[3], 1.0f) << "position 0 is the identity";
    EXPECT_EQ(out[35], 0.0f);
    const double angle = 7.0 * std::pow(c.constants.at("theta"), -2.0 * 3 / 64);
    EXPECT_NEAR(out[64 + 3], std::cos(angle), 1e-7);   // x1 c
    EXPECT_NEAR(out[64 + 35], std::sin(angle), 1e-7);  // x1 s, at i + d/2 (neox), not at 2i + 1
    EXPECT_EQ(out[64 + 7], 0.0f);
}

TEST(MlKvCacheWrite, ReferenceWritesMappedSlotsOnlyAndPaddingExists) {
    auto task = load("kv_cache_write");
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const SizeSpec s = small_size(*task, 0);
        const Case c = task->make_case(s, 3, trial);
        const int32_t* map = c.buffers[4].as<int32_t>();
        const size_t t = c.buffers[4].count<int32_t>(), row = c.launches[0].domain.x;
        std::set<int32_t> used;
        size_t padding = 0;
        for (size_t k = 0; k < t; ++k) {
            if (map[k] < 0) {
                EXPECT_EQ(map[k], -1);
                ++padding;
                continue;
            }
            EXPECT_GE(map[k], 16) << "block 0 is the null block";
            EXPECT_TRUE(used.insert(map[k]).second) << "slots are distinct";
        }
        EXPECT_GE(padding, 1u);
        const auto ref = task->reference(s, c);
        const auto cache = words_of(c.buffers[2]), key = words_of(c.buffers[0]);
        const auto* want = reinterpret_cast<const uint16_t*>(ref.results[0].data());
        for (size_t slot = 0; slot < cache.size() / row; ++slot) {
            const auto token = std::find(map, map + t, static_cast<int32_t>(slot)) - map;
            for (size_t e = 0; e < row; ++e)
                ASSERT_EQ(want[slot * row + e], static_cast<size_t>(token) < t ? key[token * row + e] : cache[slot * row + e])
                    << "slot " << slot;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// checks on host-simulated outputs: both sides

// What an fp32 kernel stores for silu_and_mul: silu rounded to bf16 first (vLLM's order) or not, or
// a swish with beta 1.02 (a wrong constant).
enum class SiluSim { fp32, vllm, beta_102 };

std::vector<uint16_t> simulate_silu(const Case& c, size_t d, SiluSim sim) {
    const std::vector<float> x = bf16_values(c.buffers[0]);
    const size_t t = x.size() / (2 * d);
    std::vector<uint16_t> out(t * d);
    for (size_t r = 0; r < t; ++r)
        for (size_t i = 0; i < d; ++i) {
            const float g = x[r * 2 * d + i], u = x[r * 2 * d + d + i];
            float silu = g / (1.0f + std::exp((sim == SiluSim::beta_102 ? -1.02f : -1.0f) * g));
            if (sim == SiluSim::vllm) silu = round_to_bf16(silu);
            out[r * d + i] = float_to_bf16(silu * u);
        }
    return out;
}

TEST(MlSiluAndMul, Fp32AndVllmsOrderPassWithMarginAWrongBetaFailsOnEverySmallSize) {
    auto task = load("silu_and_mul");
    for (const auto& s : task->spec().profiles.at("small"))
        for (uint64_t seed = 1; seed <= 4; ++seed)
            for (Trial trial : {Trial::nominal, Trial::outlier}) {
                const Case c = task->make_case(s, seed, trial);
                const auto ref = task->reference(s, c);
                const auto d = static_cast<size_t>(s.param("I"));
                for (SiluSim sim : {SiluSim::fp32, SiluSim::vllm}) {
                    const auto good = task->check(s, c, ref, {bytes_of_words(simulate_silu(c, d, sim))});
                    EXPECT_TRUE(good.pass) << s.label << ": " << good.message;
                    EXPECT_GE(good.tolerance, 50 * good.error) << s.label << ": " << good.message;
                }
                const auto bad = task->check(s, c, ref, {bytes_of_words(simulate_silu(c, d, SiluSim::beta_102))});
                EXPECT_FALSE(bad.pass) << s.label << " seed " << seed << ": " << bad.message;
            }
}

// What an fp32 kernel stores for add_rmsnorm: the residual and y; eps optionally dropped and the
// sum of squares optionally accumulated serially in bf16.
std::pair<std::vector<uint16_t>, std::vector<uint16_t>> simulate_rmsnorm(const Case& c, size_t h, bool drop_eps,
                                                                         bool bf16_sum) {
    const std::vector<float> x = bf16_values(c.buffers[0]), res = bf16_values(c.buffers[1]), w = bf16_values(c.buffers[2]);
    const float eps = static_cast<float>(c.constants.at("eps"));
    std::vector<uint16_t> r_out(x.size()), y_out(x.size());
    for (size_t row = 0; row < x.size() / h; ++row) {
        float sum = 0;
        for (size_t i = 0; i < h; ++i) {
            const size_t k = row * h + i;
            r_out[k] = float_to_bf16(x[k] + res[k]);
            const float r = bf16_to_float(r_out[k]);
            sum = bf16_sum ? round_to_bf16(sum + r * r) : sum + r * r;
        }
        const float inv = 1.0f / std::sqrt(sum / static_cast<float>(h) + (drop_eps ? 0.0f : eps));
        for (size_t i = 0; i < h; ++i) y_out[row * h + i] = float_to_bf16(bf16_to_float(r_out[row * h + i]) * inv * w[i]);
    }
    return {r_out, y_out};
}

TEST(MlAddRmsnorm, Fp32PassesWithMarginEpsDroppedAndBf16SumFail) {
    auto task = load("add_rmsnorm");
    for (const auto& s : task->spec().profiles.at("small"))
        for (uint64_t seed = 1; seed <= 3; ++seed) {
            const auto h = static_cast<size_t>(s.param("H"));
            for (Trial trial : {Trial::nominal, Trial::outlier}) {
                const Case c = task->make_case(s, seed, trial);
                const auto ref = task->reference(s, c);
                const auto [r, y] = simulate_rmsnorm(c, h, false, false);
                const auto good = task->check(s, c, ref, {bytes_of_words(r), bytes_of_words(y)});
                EXPECT_TRUE(good.pass) << s.label << ": " << good.message;
                EXPECT_GE(good.tolerance, 50 * good.error) << s.label << ": " << good.message;
                const auto [r2, y2] = simulate_rmsnorm(c, h, false, true);
                EXPECT_FALSE(task->check(s, c, ref, {bytes_of_words(r2), bytes_of_words(y2)}).pass) << s.label;
            }
            const Case c = task->make_case(s, seed, Trial::outlier);
            const auto [r, y] = simulate_rmsnorm(c, h, true, false);
            const auto no_eps = task->check(s, c, task->reference(s, c), {bytes_of_words(r), bytes_of_words(y)});
            EXPECT_FALSE(no_eps.pass) << s.label;
            EXPECT_EQ(no_eps.kind, "nan") << "a zero row gives 0 * inf: " << no_eps.message;
        }
}

TEST(MlAddRmsnorm, AResidualOffByOneUlpFailsBitExactly) {
    auto task = load("add_rmsnorm");
    const SizeSpec s = small_size(*task, 0);
    const Case c = task->make_case(s, 2, Trial::nominal);
    const auto ref = task->reference(s, c);
    auto [r, y] = simulate_rmsnorm(c, static_cast<size_t>(s.param("H")), false, false);
    r[300] += 1;
    const auto result = task->check(s, c, ref, {bytes_of_words(r), bytes_of_words(y)});
    EXPECT_FALSE(result.pass);
    EXPECT_EQ(result.kind, "bit_exact");
    EXPECT_NE(result.message.find("residual: 1 of"), std::string::npos) << result.message;
    EXPECT_NE(result.message.find("(t=1, i=44)"), std::string::npos) << result.message;
}

TEST(MlKvCacheWrite, MessageNamesAnUntouchedSlot) {
    auto task = load("kv_cache_write");
    const SizeSpec s = small_size(*task, 0);
    const Case c = task->make_case(s, 4, Trial::nominal);
    const auto ref = task->reference(s, c);
    auto key_cache = ref.results[0];
    key_cache[3] = std::byte{static_cast<unsigned char>(static_cast<unsigned>(key_cache[3]) ^ 1u)};  // slot 0, element 1
    const auto r = task->check(s, c, ref, {key_cache, ref.results[1]});
    EXPECT_FALSE(r.pass);
    EXPECT_NE(r.message.find("key_cache slot 0 (untouched: no token maps to it), element 1"), std::string::npos) << r.message;
    EXPECT_TRUE(task->check(s, c, ref, ref.results).pass);
}

// ---------------------------------------------------------------------------------------------
// the real kernels through PoCL

// Wrong kernels beyond the suite-wide <task>_slightly_wrong ones.
class MlBroken : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(MlBroken, VariantIsIncorrectOnEverySeed) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto& [task, stem] = GetParam();
    test::expect_incorrect_on_every_seed(task, stem);
}

INSTANTIATE_TEST_SUITE_P(Ml, MlBroken,
                         ::testing::Values(std::pair{std::string("add_rmsnorm"), std::string("add_rmsnorm_no_eps")},
                                           std::pair{std::string("add_rmsnorm"), std::string("add_rmsnorm_bf16_sum")},
                                           std::pair{std::string("kv_cache_write"), std::string("kv_cache_write_neighbour")}));

// The seed's own result against the exact reference: the margin (tolerance / error) it is reported
// with, at every small size and in both trials; printed for the record.
TEST(MlSeeds, ReportTheirMarginOnPocl) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    for (const auto& name : kMlTasks) test::expect_ok_with_margin(name, "seed.cl");
}

}  // namespace
}  // namespace kevo
