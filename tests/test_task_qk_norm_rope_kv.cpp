// qk_norm_rope_kv (Qwen3's per-head Q/K RMSNorm + rope + KV-cache write, one launch): the CPU
// reference on a hand-computed case, the check on exact outputs and on outputs wrong in one place,
// and, through the real kevo binary on PoCL at the small profile and input seeds 1 to 4, the seed and
// best kernels ok with margin, every production-recipe kernel (tests/candidates/
// qk_norm_rope_kv_recipe_*.cl) ok at every size and trial, and every wrong kernel rejected in the
// trial that holds what it gets wrong, every trial before it passing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "core/dtypes.hpp"
#include "ml_candidates.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

constexpr int kSeeds = 4;
constexpr const char* kTask = "qk_norm_rope_kv";

SizeSpec tiny_size() { return {"1x1x1x128", false, {{"T", 1}, {"Hq", 1}, {"Hkv", 1}, {"d", 128}}}; }

std::unique_ptr<Task> the_task() {
    auto task = make_task(kTask);
    EXPECT_TRUE(task.has_value());
    return std::move(task.value());
}

void set_bf16(HostBuffer& buffer, const std::vector<float>& values) {
    ASSERT_EQ(buffer.count<uint16_t>(), values.size());
    for (size_t i = 0; i < values.size(); ++i) buffer.as<uint16_t>()[i] = float_to_bf16(values[i]);
}

// The outputs a perfect kernel returns: the reference rounded once to bf16, the value cache as is.
std::vector<std::vector<std::byte>> exact_outputs(const Reference& ref) {
    std::vector<std::vector<std::byte>> out;
    for (size_t r = 0; r < 2; ++r) {
        const auto floats = as_floats(ref.results[r]);
        std::vector<std::byte> bits(floats.size() * sizeof(uint16_t));
        for (size_t i = 0; i < floats.size(); ++i) {
            const uint16_t b = float_to_bf16(floats[i]);
            std::memcpy(bits.data() + i * sizeof(uint16_t), &b, sizeof b);
        }
        out.push_back(std::move(bits));
    }
    out.push_back(ref.results[2]);
    return out;
}

uint16_t& word(std::vector<std::byte>& bytes, size_t i) { return reinterpret_cast<uint16_t*>(bytes.data())[i]; }

// One token, one q head (x_0 = 3, x_64 = 4, the rest 0; gamma_0 = 0.5), an all-zero k head and a v
// head, at a position whose cache row has cos 0.6 and sin 0.8 for i = 0:
//   inv_rms = 1 / sqrt(25 / 128 + eps); n_0 = 1.5 inv_rms, n_64 = 4 inv_rms;
//   q_out_0 = n_0 c - n_64 s, q_out_64 = n_64 c + n_0 s, every other q_out 0;
//   key_cache[slot] all 0 (0 / sqrt(0 + eps)); value_cache[slot] = v; every other slot unchanged.
TEST(TaskQkNormRopeKv, ReferenceMatchesAHandComputedCase) {
    const auto task = the_task();
    const SizeSpec size = tiny_size();
    Case c = task->make_case(size, 1, Trial::nominal);
    ASSERT_EQ(c.buffers.size(), 9u);
    std::vector<float> qkv(3 * 128, 0.0f), q_weight(128, 1.0f), k_weight(128, 1.0f);
    qkv[0] = 3, qkv[64] = 4;
    for (size_t j = 0; j < 128; ++j) qkv[256 + j] = static_cast<float>(j) / 8 - 4;  // v
    q_weight[0] = 0.5f;
    set_bf16(c.buffers[0], qkv);
    set_bf16(c.buffers[1], q_weight);
    set_bf16(c.buffers[2], k_weight);
    c.buffers[3].as<int32_t>()[0] = 5;
    float* row = c.buffers[4].as<float>() + 5 * 128;
    row[0] = 0.6f, row[64] = 0.8f;
    const int32_t slot = c.buffers[5].as<int32_t>()[0];
    ASSERT_GE(slot, 16) << "a mapped token, outside the null block";

    const Reference ref = task->reference(size, c);
    ASSERT_EQ(ref.results.size(), 3u);
    const double eps = c.constants.at("eps"), inv = 1.0 / std::sqrt(25.0 / 128.0 + eps);
    const double cos0 = 0.6f, sin0 = 0.8f;
    const auto q = as_floats(ref.results[0]);
    ASSERT_EQ(q.size(), 128u);
    EXPECT_NEAR(q[0], inv * (1.5 * cos0 - 4 * sin0), 1e-6);
    EXPECT_NEAR(q[64], inv * (4 * cos0 + 1.5 * sin0), 1e-6);
    for (size_t j = 1; j < 128; ++j) {
        if (j != 64) {
            EXPECT_EQ(q[j], 0.0f) << j;
        }
    }
    const auto key = as_floats(ref.results[1]);
    const std::vector<float> key_before = bf16_values(c.buffers[7]);
    ASSERT_EQ(key.size(), key_before.size());
    for (size_t i = 0; i < key.size(); ++i) {
        const bool written = i / 128 == static_cast<size_t>(slot);
        EXPECT_EQ(key[i], written ? 0.0f : key_before[i]) << i;
    }
    const auto* value = reinterpret_cast<const uint16_t*>(ref.results[2].data());
    const auto* value_before = c.buffers[8].as<uint16_t>();
    for (size_t i = 0; i < c.buffers[8].count<uint16_t>(); ++i) {
        const bool written = i / 128 == static_cast<size_t>(slot);
        EXPECT_EQ(value[i], written ? float_to_bf16(qkv[256 + i % 128]) : value_before[i]) << i;
    }

    // The exact outputs pass; one q value 2 ulp off, one untouched slot changed (slot 0: where a
    // padding token clamped to 0 writes), or a v value rounded otherwise fails.
    auto out = exact_outputs(ref);
    const CheckResult good = task->check(size, c, ref, out);
    EXPECT_TRUE(good.pass) << good.message;
    auto bad_q = out;
    word(bad_q[0], 0) = static_cast<uint16_t>(word(bad_q[0], 0) + 2);
    EXPECT_FALSE(task->check(size, c, ref, bad_q).pass);
    auto bad_key = out;
    word(bad_key[1], 3) ^= 1;
    const CheckResult slot0 = task->check(size, c, ref, bad_key);
    EXPECT_FALSE(slot0.pass);
    EXPECT_NE(slot0.message.find("slot 0"), std::string::npos) << slot0.message;
    auto bad_value = out;
    word(bad_value[2], static_cast<size_t>(slot) * 128 + 7) ^= 1;
    EXPECT_FALSE(task->check(size, c, ref, bad_value).pass);
}

// At a small size, in both trials: the exact outputs pass; the same with k written for a padding
// token, or with one q head left unnormalised, fail.
TEST(TaskQkNormRopeKv, CheckRejectsOneWrongStructureOnARandomCase) {
    const auto task = the_task();
    const SizeSpec size = {"16x8x2x128", false, {{"T", 16}, {"Hq", 8}, {"Hkv", 2}, {"d", 128}}};
    for (const Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(size, 3, trial);
        const Reference ref = task->reference(size, c);
        const auto out = exact_outputs(ref);
        const CheckResult good = task->check(size, c, ref, out);
        EXPECT_TRUE(good.pass) << trial_name(trial) << ": " << good.message;
        // q head 3 of token 5 rotated but not normed.
        auto unnormed = out;
        const std::vector<float> qkv = bf16_values(c.buffers[0]);
        const float* cs = c.buffers[4].as<float>() + static_cast<size_t>(c.buffers[3].as<int32_t>()[5]) * 128;
        const size_t in = 5 * 12 * 128 + 3 * 128, at = (5 * 8 + 3) * 128;
        for (size_t i = 0; i < 64; ++i) {
            const float x1 = qkv[in + i], x2 = qkv[in + 64 + i];
            word(unnormed[0], at + i) = float_to_bf16(x1 * cs[i] - x2 * cs[64 + i]);
            word(unnormed[0], at + 64 + i) = float_to_bf16(x2 * cs[i] + x1 * cs[64 + i]);
        }
        EXPECT_FALSE(task->check(size, c, ref, unnormed).pass) << trial_name(trial);
    }
    // The outlier trial pads: some token's slot is -1, and slot 0 must stay as it was.
    const Case c = task->make_case(size, 3, Trial::outlier);
    const int32_t* map = c.buffers[5].as<int32_t>();
    size_t padded = 0;
    for (size_t t = 0; t < 16; ++t) padded += map[t] < 0;
    EXPECT_GE(padded, 2u);
    EXPECT_LT(map[8], 0) << "token T/2 pads";
    EXPECT_GE(map[0], 0);
}

// vLLM's unfused numerics, computed here as its kernels do (an fp32 inv_rms, bf16(bf16(x inv_rms) w),
// bf16 cos and sin, each product rounded to bf16, then the difference): more than 1 ulp from the
// exact value somewhere (so the recipe is needed), and admitted by the check in both trials.
TEST(TaskQkNormRopeKv, VllmRecipeIsNeededAndAdmitted) {
    const auto task = the_task();
    const SizeSpec size = {"64x32x4x128", false, {{"T", 64}, {"Hq", 32}, {"Hkv", 4}, {"d", 128}}};
    const size_t t_count = 64, hq = 32, hkv = 4, d = 128, heads = hq + 2 * hkv;
    const auto b = [](float v) { return round_to_bf16(v); };
    for (const Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(size, 2, trial);
        const Reference ref = task->reference(size, c);
        const std::vector<float> qkv = bf16_values(c.buffers[0]), wq = bf16_values(c.buffers[1]),
                                 wk = bf16_values(c.buffers[2]);
        const int32_t* pos = c.buffers[3].as<int32_t>();
        const float* cache = c.buffers[4].as<float>();
        const int32_t* map = c.buffers[5].as<int32_t>();
        const auto eps = static_cast<float>(c.constants.at("eps"));
        auto out = exact_outputs(ref);
        std::memcpy(out[1].data(), c.buffers[7].data.data(), out[1].size());
        size_t beyond_one_ulp = 0;
        const auto exact_q = as_floats(ref.results[0]);
        for (size_t t = 0; t < t_count; ++t)
            for (size_t h = 0; h < hq + hkv; ++h) {
                const bool is_q = h < hq;
                if (!is_q && map[t] < 0) continue;
                const float* x = qkv.data() + (t * heads + h) * d;
                const std::vector<float>& w = is_q ? wq : wk;
                float sum = 0;
                for (size_t j = 0; j < d; ++j) sum += x[j] * x[j];
                const float inv = 1.0f / std::sqrt(sum / static_cast<float>(d) + eps);
                std::vector<float> n(d);
                for (size_t j = 0; j < d; ++j) n[j] = b(b(x[j] * inv) * w[j]);
                const float* cs = cache + static_cast<size_t>(pos[t]) * d;
                for (size_t j = 0; j < d; ++j) {
                    const size_t i = j % 64;
                    const float c16 = b(cs[i]), s16 = b(cs[64 + i]);
                    const float v = j < 64 ? b(b(n[i] * c16) - b(n[64 + i] * s16)) : b(b(n[j] * c16) + b(n[i] * s16));
                    if (is_q) {
                        const size_t k = (t * hq + h) * d + j;
                        word(out[0], k) = float_to_bf16(v);
                        beyond_one_ulp += std::fabs(v - exact_q[k]) > bf16_ulp(exact_q[k]);
                    } else {
                        word(out[1], static_cast<size_t>(map[t]) * hkv * d + (h - hq) * d + j) = float_to_bf16(v);
                    }
                }
            }
        EXPECT_GT(beyond_one_ulp, 0u) << trial_name(trial) << ": vLLM's numerics never leave 1 ulp of exact";
        const CheckResult r = task->check(size, c, ref, out);
        EXPECT_TRUE(r.pass) << trial_name(trial) << ": " << r.message;
        std::printf("vLLM recipe (%s): %zu q values beyond 1 ulp of exact; %s\n", trial_name(trial), beyond_one_ulp,
                    r.message.c_str());
    }
}

// The task's own kernels: ok at every small size, at least 50x inside the tolerance.
TEST(TaskQkNormRopeKv, SeedAndBestAreOkWithMargin) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    test::expect_ok_with_margin(kTask, "seed.cl");
    test::expect_ok_with_margin(kTask, "best.cl");
}

class QkNormRopeKvRecipe : public ::testing::TestWithParam<std::string> {};

// A kernel that follows a production recipe is exact against its value but for fp32 noise.
TEST_P(QkNormRopeKvRecipe, PassesEverySizeAndTrialOnFourSeeds) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string path = test::candidate(GetParam() + ".cl");
    ASSERT_TRUE(std::ifstream(path)) << path;
    double smallest = std::numeric_limits<double>::infinity();
    for (int seed = 1; seed <= kSeeds; ++seed) {
        const auto doc = test::eval_small(kTask, path, seed);
        ASSERT_TRUE(doc.is_object());
        ASSERT_EQ(doc["verdict"], "ok") << GetParam() << " seed " << seed << ": " << doc.dump(2);
        ASSERT_EQ(doc["sizes"].size(), 4u) << doc.dump(2);
        for (const auto& size : doc["sizes"]) ASSERT_EQ(size["trials"].size(), 2u) << size.dump();
        const double margin = test::smallest_margin(doc);
        EXPECT_GE(margin, 50) << GetParam() << " seed " << seed;
        smallest = std::min(smallest, margin);
    }
    std::printf("%s: smallest margin over seeds 1-%d %.3g\n", GetParam().c_str(), kSeeds, smallest);
}

INSTANTIATE_TEST_SUITE_P(Contracts, QkNormRopeKvRecipe,
                         ::testing::Values("qk_norm_rope_kv_recipe_vllm", "qk_norm_rope_kv_recipe_vllm_fma",
                                           "qk_norm_rope_kv_recipe_bf16_norm"),
                         [](const auto& info) { return info.param; });

struct Wrong {
    std::string stem;
    std::string trial;  // the trial that holds the structure, where the kernel must fail first
};
void PrintTo(const Wrong& w, std::ostream* os) { *os << w.stem; }

const Wrong kWrong[] = {
    {"qk_norm_rope_kv_row_norm", "nominal"},
    {"qk_norm_rope_kv_k_uses_q_weight", "nominal"},
    {"qk_norm_rope_kv_ropes_v", "nominal"},
    {"qk_norm_rope_kv_last_head_unnormed", "nominal"},
    {"qk_norm_rope_kv_padding_slot0", "outlier"},
    {"qk_norm_rope_kv_only_padding_mid", "outlier"},
    {"qk_norm_rope_kv_only_no_eps", "outlier"},
    {"qk_norm_rope_kv_only_eps_floor", "outlier"},
    {"qk_norm_rope_kv_only_max_position", "outlier"},
};

class QkNormRopeKvWrong : public ::testing::TestWithParam<Wrong> {};

TEST_P(QkNormRopeKvWrong, IsRejectedInTheTrialThatHoldsItOnFourSeeds) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const Wrong& k = GetParam();
    const std::string path = test::candidate(k.stem + ".cl");
    ASSERT_TRUE(std::ifstream(path)) << path;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        const auto doc = test::eval_small(kTask, path, seed);
        ASSERT_TRUE(doc.is_object());
        ASSERT_EQ(doc["verdict"], "incorrect") << k.stem << " seed " << seed << ": " << doc.dump(2);
        EXPECT_FALSE(doc["diagnostics"].get<std::string>().empty());
        ASSERT_FALSE(doc["sizes"].empty()) << doc.dump(2);
        // The evaluator stops at the first failing trial: it is the one that holds the structure,
        // and every trial before it (the same kernel on inputs without the structure) passed.
        const auto& failed = doc["sizes"].back()["trials"].back();
        EXPECT_FALSE(failed["pass"].get<bool>()) << failed.dump();
        EXPECT_EQ(failed["trial"], k.trial) << k.stem << " seed " << seed << ": " << failed.dump();
        for (const auto& size : doc["sizes"])
            for (const auto& t : size["trials"]) {
                if (&t != &failed) {
                    EXPECT_TRUE(t["pass"].get<bool>()) << k.stem << " seed " << seed << ": " << t.dump();
                }
            }
    }
}

INSTANTIATE_TEST_SUITE_P(Contracts, QkNormRopeKvWrong, ::testing::ValuesIn(kWrong),
                         [](const auto& info) { return info.param.stem; });

}  // namespace
}  // namespace kevo
