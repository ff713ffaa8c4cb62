// causal_conv1d (tasks/causal_conv1d): the reference on hand-computed cases (a varlen prefill batch
// with a continuing and a short sequence, a decode batch), the check on both sides, the spec's
// sizes and files, and through the real kevo binary on PoCL at the small profile and input seeds
// 1 to 4: the seed, best.cl and a production-recipe kernel pass at every size and in both trials
// with a margin of at least 50, and every wrong kernel (tests/candidates/causal_conv1d_*.cl) is
// rejected in the trial and the size family that hold what it gets wrong, every trial before
// passing.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include "backend/kernel_language.hpp"
#include "core/dtypes.hpp"
#include "ml_candidates.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

constexpr int kSeeds = 4;
const char* const kTask = "causal_conv1d";

std::unique_ptr<Task> load() {
    auto task = make_task(kTask);
    EXPECT_TRUE(task.has_value());
    return task ? std::move(*task) : nullptr;
}

SizeSpec tiny(bool decode, int64_t dim, int64_t tokens, int64_t seqs) {
    return {"tiny", false, {{"decode", decode ? 1 : 0}, {"dim", dim}, {"tokens", tokens}, {"seqs", seqs}}};
}

void set_i32(HostBuffer& b, const std::vector<int32_t>& v) {
    ASSERT_EQ(b.count<int32_t>(), v.size()) << b.name;
    std::memcpy(b.data.data(), v.data(), v.size() * sizeof(int32_t));
}

void set_bf16(HostBuffer& b, const std::vector<float>& v) {
    ASSERT_EQ(b.count<uint16_t>(), v.size()) << b.name;
    b = make_bf16_buffer(b.name, b.role, v);
}

float silu(float s) { return s / (1.0f + std::exp(-s)); }

std::vector<float> cache_after(const Reference& ref) {
    std::vector<float> out;
    const auto* bits = reinterpret_cast<const uint16_t*>(ref.results[1].data());
    for (size_t k = 0; k < ref.results[1].size() / 2; ++k) out.push_back(bf16_to_float(bits[k]));
    return out;
}

// One channel, w = (1, 2, 4, 8), bias 0.5, x = 1..8. Sequence 0 (tokens 0-5) continues line 4 =
// (-1, -2, -3); sequence 1 (tokens 6-7, two tokens) continues line 1 = (0.5, 0.25, 0.125).
// t0: -1 - 4 - 12 + 8 + 0.5 = -8.5      t1: -2 - 6 + 4 + 16 + 0.5 = 12.5   t2: -3 + 2 + 8 + 24 + 0.5 = 31.5
// t3: 1 + 4 + 12 + 32 + 0.5 = 49.5      t4: 64.5                           t5: 79.5
// t6: 0.5 + 0.5 + 0.5 + 56 + 0.5 = 58   t7: 0.25 + 0.25 + 28 + 64 + 0.5 = 93
// Lines afterwards: 4 = (4, 5, 6); 1 = (0.125, 7, 8), the newest state value then both tokens.
// Sequence 1 fresh instead: t6 = 56.5, t7 = 92.5, line 1 = (0, 7, 8).
Case prefill_case(const Task& task, int32_t second_continues) {
    Case c = task.make_case(tiny(false, 1, 8, 2), 1, Trial::nominal);
    set_bf16(c.buffers[0], {1, 2, 3, 4, 5, 6, 7, 8});
    set_bf16(c.buffers[1], {1, 2, 4, 8});
    set_bf16(c.buffers[2], {0.5f});
    std::vector<float> cache(7 * 3);
    for (size_t k = 0; k < cache.size(); ++k) cache[k] = 100.0f + static_cast<float>(k);  // the untouched lines
    cache[12] = -1, cache[13] = -2, cache[14] = -3;  // line 4
    cache[3] = 0.5f, cache[4] = 0.25f, cache[5] = 0.125f;  // line 1
    set_bf16(c.buffers[3], cache);
    set_i32(c.buffers[4], {0, 6, 8});
    set_i32(c.buffers[5], {4, 1});
    set_i32(c.buffers[6], {1, second_continues});
    return c;
}

TEST(CausalConv1dReference, PrefillWindowsReadTheLineOrZerosAndTheLineTakesTheLastThree) {
    auto task = load();
    ASSERT_TRUE(task);
    for (int32_t continues : {1, 0}) {
        const Case c = prefill_case(*task, continues);
        const Reference ref = task->reference(tiny(false, 1, 8, 2), c);
        ASSERT_EQ(ref.results.size(), 3u);
        const auto out = as_floats(ref.results[0]);
        const std::vector<float> sums = continues ? std::vector<float>{-8.5f, 12.5f, 31.5f, 49.5f, 64.5f, 79.5f, 58, 93}
                                                  : std::vector<float>{-8.5f, 12.5f, 31.5f, 49.5f, 64.5f, 79.5f, 56.5f, 92.5f};
        ASSERT_EQ(out.size(), sums.size());
        for (size_t t = 0; t < sums.size(); ++t) EXPECT_FLOAT_EQ(out[t], silu(sums[t])) << "t=" << t;
        // The scale of token 0: |1 * -1| + |2 * -2| + |4 * -3| + |8 * 1| + |0.5|.
        EXPECT_FLOAT_EQ(as_floats(ref.results[2])[0], 25.5f);
        const auto cache = cache_after(ref);
        for (size_t line = 0; line < 7; ++line)
            for (size_t k = 0; k < 3; ++k) {
                const size_t e = line * 3 + k;
                float want = 100.0f + static_cast<float>(e);
                if (line == 4) want = std::vector<float>{4, 5, 6}[k];
                if (line == 1) want = std::vector<float>{continues ? 0.125f : 0.0f, 7, 8}[k];
                EXPECT_EQ(cache[e], want) << "line " << line << " slot " << k << " continues " << continues;
            }
    }
}

// One channel, w = (1, 2, 4, 8), bias 0.5. Row 0 uses line 5 = (1, 2, 3), x = 4: 1 + 4 + 12 + 32 + 0.5
// = 49.5, line 5 becomes (2, 3, 4). Row 1 uses line 0 = (-1, 0.5, 2), x = -2: -1 + 1 + 8 - 16 + 0.5 =
// -7.5, line 0 becomes (0.5, 2, -2).
TEST(CausalConv1dReference, DecodeShiftsTheNewTokenIntoTheNewestSlot) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec size = tiny(true, 1, 2, 2);
    Case c = task->make_case(size, 1, Trial::nominal);
    set_bf16(c.buffers[0], {4, -2});
    set_bf16(c.buffers[1], {1, 2, 4, 8});
    set_bf16(c.buffers[2], {0.5f});
    std::vector<float> cache(7 * 3, 9.0f);
    cache[15] = 1, cache[16] = 2, cache[17] = 3;
    cache[0] = -1, cache[1] = 0.5f, cache[2] = 2;
    set_bf16(c.buffers[3], cache);
    set_i32(c.buffers[4], {5, 0});
    const Reference ref = task->reference(size, c);
    const auto out = as_floats(ref.results[0]);
    ASSERT_EQ(out.size(), 2u);
    EXPECT_FLOAT_EQ(out[0], silu(49.5f));
    EXPECT_FLOAT_EQ(out[1], silu(-7.5f));
    const auto after = cache_after(ref);
    EXPECT_EQ((std::vector<float>(after.begin() + 15, after.begin() + 18)), (std::vector<float>{2, 3, 4}));
    EXPECT_EQ((std::vector<float>(after.begin(), after.begin() + 3)), (std::vector<float>{0.5f, 2, -2}));
    for (size_t e = 3; e < 15; ++e) EXPECT_EQ(after[e], 9.0f) << e;
}

// The check: the reference rounded once passes; a missing bias, a stale cache line and a NaN fail.
TEST(CausalConv1dCheck, RoundedReferencePassesAndOneWrongTermOrLineFails) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec size = task->spec().profiles.at("small").at(0);
    auto bytes = [](const std::vector<uint16_t>& v) {
        std::vector<std::byte> b(v.size() * 2);
        std::memcpy(b.data(), v.data(), b.size());
        return b;
    };
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(size, 3, trial);
        const Reference ref = task->reference(size, c);
        std::vector<uint16_t> bits;
        for (float v : as_floats(ref.results[0])) bits.push_back(float_to_bf16(v));
        const auto ok = task->check(size, c, ref, {bytes(bits), ref.results[1]});
        EXPECT_TRUE(ok.pass) << trial_name(trial) << ": " << ok.message;
        EXPECT_GT(ok.tolerance, 0);
    }
    const Case c = task->make_case(size, 3, Trial::nominal);
    const Reference ref = task->reference(size, c);
    const auto want = as_floats(ref.results[0]);
    std::vector<uint16_t> bits;
    for (float v : want) bits.push_back(float_to_bf16(v));
    // One element without its bias (sigmoid' <= 1.1: off by about |b| against half an ulp).
    const std::vector<float> bias = bf16_values(c.buffers[2]);
    const auto dim = static_cast<size_t>(size.param("dim"));
    size_t e = 0;
    while (std::fabs(bias[e % dim]) < 0.25f || std::fabs(want[e]) > 4.0f) ++e;
    auto wrong = bits;
    wrong[e] = float_to_bf16(want[e] - 0.5f * bias[e % dim]);
    const auto bad = task->check(size, c, ref, {bytes(wrong), ref.results[1]});
    EXPECT_FALSE(bad.pass);
    EXPECT_EQ(bad.worst_index, static_cast<int64_t>(e)) << bad.message;
    EXPECT_NE(bad.message.find("sequence"), std::string::npos) << bad.message;
    // The cache as it was before the run (no line written).
    const auto stale = task->check(size, c, ref, {bytes(bits), c.buffers[3].data});
    EXPECT_FALSE(stale.pass);
    EXPECT_EQ(stale.kind, "bit_exact");
    EXPECT_NE(stale.message.find("conv_states"), std::string::npos) << stale.message;
    auto nan = bits;
    nan[7] = 0x7fc0;
    EXPECT_FALSE(task->check(size, c, ref, {bytes(nan), ref.results[1]}).pass);
}

TEST(CausalConv1dSpec, TwoKernelsBothFamiliesInEveryProfileAndTheBriefNamesNoSize) {
    auto task = load();
    ASSERT_TRUE(task);
    const auto& spec = task->spec();
    EXPECT_EQ(spec.pack, "ml");
    EXPECT_EQ(spec.order, 134);
    ASSERT_EQ(spec.kernels.size(), 2u);
    EXPECT_EQ(spec.kernels[0].name, "conv1d_prefill");
    EXPECT_EQ(spec.kernels[1].name, "conv1d_update");
    for (const char* profile : {"small", "paper", "large"}) {
        const auto& sizes = spec.profiles.at(profile);
        ASSERT_EQ(sizes.size(), 4u) << profile;
        int heldout = 0, prefill = 0, decode = 0;
        for (const auto& s : sizes) {
            heldout += s.heldout;
            if (!s.heldout) (s.param("decode") ? decode : prefill) += 1;
            if (!s.param("decode")) {
                EXPECT_GE(s.param("tokens"), 4 * s.param("seqs") + 6) << s.label;
            }
            EXPECT_EQ(s.param("dim") % 64, 0) << s.label;
        }
        EXPECT_EQ(heldout, 1) << profile;
        EXPECT_GE(prefill, 1) << profile;
        EXPECT_GE(decode, 1) << profile;
    }
    test::expect_signatures_in_task_files(kTask, spec);
    const std::string brief(task_file(kTask, "brief.md"));
    EXPECT_NE(brief.find("ceil("), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// through kevo on PoCL

class CausalConv1dPasses : public ::testing::TestWithParam<test::PassingKernel> {};

TEST_P(CausalConv1dPasses, EverySizeAndTrialOnFourSeedsWithMargin50) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    test::expect_ok_on_every_seed(kTask, GetParam(), kSeeds, 4);
}

INSTANTIATE_TEST_SUITE_P(Kernels, CausalConv1dPasses,
                         ::testing::Values(test::PassingKernel{"seed.cl", true}, test::PassingKernel{"best.cl", true},
                                           test::PassingKernel{"causal_conv1d_recipe_vllm", false}),
                         test::passing_kernel_name);

struct Wrong {
    std::string stem;
    std::string trial;   // the trial that holds the structure, where the kernel must fail first
    std::string family;  // "prefill" or "decode": the kernel that is wrong
};

void PrintTo(const Wrong& w, std::ostream* os) { *os << w.stem; }

const Wrong kWrong[] = {
    {"causal_conv1d_only_cross_start", "nominal", "prefill"},
    {"causal_conv1d_only_short_state", "outlier", "prefill"},
    {"causal_conv1d_only_pos_tail", "outlier", "prefill"},
    {"causal_conv1d_taps_reversed", "nominal", "prefill"},
    {"causal_conv1d_no_bias", "nominal", "prefill"},
    {"causal_conv1d_no_silu", "nominal", "prefill"},
    {"causal_conv1d_ignores_flag", "nominal", "prefill"},
    {"causal_conv1d_update_no_state", "nominal", "decode"},
    {"causal_conv1d_update_shift_reversed", "nominal", "decode"},
};

class CausalConv1dWrong : public ::testing::TestWithParam<Wrong> {};

TEST_P(CausalConv1dWrong, IsRejectedInTheTrialThatHoldsItOnFourSeeds) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const Wrong& w = GetParam();
    const std::string path = test::candidate(w.stem + ".cl");
    ASSERT_TRUE(std::ifstream(path)) << path;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        const auto doc = test::eval_small(kTask, path, seed);
        ASSERT_TRUE(doc.is_object());
        ASSERT_EQ(doc["verdict"], "incorrect") << w.stem << " seed " << seed << ": " << doc.dump(2);
        EXPECT_FALSE(doc["diagnostics"].get<std::string>().empty());
        ASSERT_FALSE(doc["sizes"].empty()) << doc.dump(2);
        // The evaluator stops at the first failing trial: it holds the structure, in a size of the
        // wrong kernel's family, and every trial before it passed.
        const auto& last = doc["sizes"].back();
        const auto& failed = last["trials"].back();
        EXPECT_FALSE(failed["pass"].get<bool>()) << failed.dump();
        EXPECT_EQ(failed["trial"], w.trial) << w.stem << " seed " << seed << ": " << failed.dump();
        EXPECT_EQ(last["label"].get<std::string>().rfind(w.family, 0), 0u) << w.stem << ": " << last.dump();
        for (const auto& size : doc["sizes"])
            for (const auto& t : size["trials"])
                if (&t != &failed) {
                    EXPECT_TRUE(t["pass"].get<bool>()) << w.stem << " seed " << seed << ": " << t.dump();
                }
    }
}

INSTANTIATE_TEST_SUITE_P(Candidates, CausalConv1dWrong, ::testing::ValuesIn(kWrong),
                         [](const auto& info) { return info.param.stem; });

}  // namespace
}  // namespace kevo
