// Tests of the ML pack's attention operators (attention_prefill, attention_decode_paged): specs and
// sizes, the case layout (cu_seqlens and outlier lengths, shuffled block tables), references against
// hand computations on tiny cases, the shared check on host-simulated right outputs (fp32, and the
// flash recipe with P rounded to bf16) and wrong ones (both sides, margins printed), and the real
// seeds, best-known OpenCL kernels and wrong kernels through PoCL. The suite-wide tests
// (SeedEvaluates, Tolerances, CudaCompileOnly) cover them as every task.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>

#include "core/dtypes.hpp"
#include "kevo_process.hpp"
#include "task/attention_common.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"
#include "ml_candidates.hpp"

namespace kevo {
namespace {

std::unique_ptr<Task> load(const std::string& name) {
    auto task = make_task(name);
    EXPECT_TRUE(task.has_value()) << name;
    return std::move(task.value());
}

std::vector<std::byte> bytes_of_words(const std::vector<uint16_t>& w) {
    std::vector<std::byte> out(w.size() * 2);
    std::memcpy(out.data(), w.data(), out.size());
    return out;
}

std::vector<int32_t> ints_of(const HostBuffer& b) { return {b.as<int32_t>(), b.as<int32_t>() + b.count<int32_t>()}; }

// ---------------------------------------------------------------------------------------------
// specs and cases

TEST(MlAttentionSpec, PackCategoryOrderAndProfiles) {
    for (const auto& [name, order] : {std::pair{std::string("attention_prefill"), 115},
                                      std::pair{std::string("attention_decode_paged"), 116}}) {
        auto task = load(name);
        const auto& spec = task->spec();
        EXPECT_EQ(spec.pack, "ml");
        EXPECT_EQ(spec.category, "attention");
        EXPECT_EQ(spec.order, order);
        EXPECT_EQ(spec.bound, name == "attention_prefill" ? Bound::compute : Bound::bandwidth);
        for (const char* profile : {"small", "paper", "large"}) {
            const auto& sizes = spec.profiles.at(profile);
            ASSERT_EQ(sizes.size(), 4u) << name << " " << profile;
            int heldout = 0;
            std::set<std::string> labels;
            for (const auto& s : sizes) {
                heldout += s.heldout;
                labels.insert(s.label);
                // The CPU checks the seed at small and paper; only prefill's large sizes are too slow for it.
                EXPECT_EQ(s.device_reference, name == "attention_prefill" && std::string(profile) == "large") << s.label;
                // A mixed batch spreads its lengths by (5b + 3) mod B: a permutation only for B coprime to 5.
                if (name == "attention_prefill" && s.param("mixed") != 0) EXPECT_NE(s.param("B") % 5, 0) << s.label;
            }
            EXPECT_EQ(heldout, 1) << name << " " << profile;
            EXPECT_EQ(labels.size(), 4u) << name << " " << profile;
        }
    }
}

TEST(MlAttentionPrefill, CaseFollowsTheModelsAndTheOutlierLengthsAreOdd) {
    auto task = load("attention_prefill");
    const SizeSpec s{"t", false, {{"B", 4}, {"L", 64}, {"mixed", 0}, {"Hq", 4}, {"Hkv", 2}, {"d", 64}}};
    const Case c = task->make_case(s, 1, Trial::nominal);
    ASSERT_EQ(c.buffers.size(), 5u);
    EXPECT_EQ(ints_of(c.buffers[3]), (std::vector<int32_t>{0, 64, 128, 192, 256}));
    EXPECT_EQ(c.buffers[4].role, BufferRole::output);
    EXPECT_DOUBLE_EQ(c.flops_by_class.at(ComputeClass::tensor_bf16), 4.0 * 64 * 4 * 4 * (64.0 * 65 / 2));
    EXPECT_DOUBLE_EQ(c.roofline_bytes, 2.0 * (256 * 4 + 2 * 256 * 2) * 64 + 2.0 * 256 * 4 * 64 + 4.0 * 5);
    EXPECT_FLOAT_EQ(static_cast<float>(c.constants.at("scale")), 0.125f);
    const Case o = task->make_case(s, 1, Trial::outlier);
    const auto cu = ints_of(o.buffers[3]);
    EXPECT_EQ(cu.front(), 0);
    EXPECT_EQ(cu.back(), 256) << "the same tokens";
    EXPECT_EQ(cu[1], 1) << "a sequence of length 1";
    for (size_t b = 2; b < cu.size(); ++b) EXPECT_NE((cu[b] - cu[b - 1]) % 16, 0) << "length of sequence " << b - 1;
    EXPECT_NE(o.constants.at("scale"), c.constants.at("scale"));
    // Mixed lengths: a fixed spread with a length-1 and a length-L sequence.
    const SizeSpec m{"m", false, {{"B", 6}, {"L", 80}, {"mixed", 1}, {"Hq", 4}, {"Hkv", 2}, {"d", 64}}};
    const auto cm = ints_of(task->make_case(m, 1, Trial::nominal).buffers[3]);
    std::vector<int32_t> lengths;
    for (size_t b = 1; b < cm.size(); ++b) lengths.push_back(cm[b] - cm[b - 1]);
    EXPECT_EQ(lengths, (std::vector<int32_t>{48, 32, 16, 1, 80, 64}));
}

TEST(MlAttentionDecode, TablesAreShuffledPermutationsAndContextsAsDrawn) {
    auto task = load("attention_decode_paged");
    const SizeSpec s = task->spec().profiles.at("small").at(2);  // 8 requests, contexts 1..100
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(s, 5, trial);
        const auto ctx = ints_of(c.buffers[4]), tables = ints_of(c.buffers[3]);
        const size_t maxb = tables.size() / ctx.size();
        const size_t num_blocks = c.buffers[1].count<uint16_t>() / (16 * 2 * 64);
        EXPECT_EQ(ctx[0], 100);
        EXPECT_EQ(ctx[1], 1);
        if (trial == Trial::outlier) EXPECT_EQ(ctx.back(), 1);
        std::set<int32_t> used;
        size_t in_order = 0, pairs = 0;
        for (size_t r = 0; r < ctx.size(); ++r)
            for (size_t blk = 0; blk < (static_cast<size_t>(ctx[r]) + 15) / 16; ++blk) {
                const int32_t e = tables[r * maxb + blk];
                EXPECT_GE(e, 1) << "block 0 is never mapped";
                EXPECT_LT(static_cast<size_t>(e), num_blocks);
                EXPECT_TRUE(used.insert(e).second) << "a physical block serves one logical block";
                pairs += blk > 0;
                in_order += blk > 0 && e == tables[r * maxb + blk - 1] + 1;
            }
        EXPECT_LT(in_order, pairs) << "consecutive logical blocks are mostly not consecutive physical ones";
        EXPECT_EQ(c.buffers[6].role, BufferRole::state);
        EXPECT_EQ(c.buffers[7].count<uint32_t>(), 8u * 4);
    }
}

// ---------------------------------------------------------------------------------------------
// references by hand

TEST(MlAttentionPrefill, ReferenceIsCausalPerSequenceWithGqa) {
    auto task = load("attention_prefill");
    // Two sequences of 2 tokens, 2 query heads on 1 kv head, d 64.
    const SizeSpec s{"t", false, {{"B", 2}, {"L", 2}, {"mixed", 0}, {"Hq", 2}, {"Hkv", 1}, {"d", 64}}};
    Case c = task->make_case(s, 1, Trial::nominal);
    std::vector<float> q(4 * 2 * 64, 0.0f), k(4 * 64, 0.0f), v(4 * 64, 0.0f);
    for (size_t t = 0; t < 4; ++t) v[t * 64] = static_cast<float>(t + 1), v[t * 64 + 1] = 10.0f;  // v_t = (t+1, 10, 0..)
    k[0 * 64 + 0] = 1.0f;  // k_0 . q = q[0]
    k[1 * 64 + 1] = 1.0f;  // k_1 . q = q[1]
    q[(1 * 2 + 0) * 64 + 0] = 8.0f;  // token 1, head 0: logits 8 scale, 0
    q[(1 * 2 + 1) * 64 + 1] = 8.0f;  // token 1, head 1: logits 0, 8 scale
    c.buffers[0] = make_bf16_buffer("q", BufferRole::input, q);
    c.buffers[1] = make_bf16_buffer("k", BufferRole::input, k);
    c.buffers[2] = make_bf16_buffer("v", BufferRole::input, v);
    const Reference reference = task->reference(s, c);
    const auto out = as_floats(reference.results[0]);
    const auto at = [&](size_t t, size_t h, size_t e) { return out[(t * 2 + h) * 64 + e]; };
    const double scale = c.constants.at("scale"), w = 1.0 / (1.0 + std::exp(-8.0 * scale));  // the larger weight
    EXPECT_EQ(at(0, 0, 0), 1.0f) << "token 0 sees itself only";
    EXPECT_EQ(at(0, 1, 1), 10.0f);
    EXPECT_NEAR(at(1, 0, 0), w * 1 + (1 - w) * 2, 1e-6);
    EXPECT_NEAR(at(1, 1, 0), (1 - w) * 1 + w * 2, 1e-6);
    EXPECT_NEAR(at(1, 0, 1), 10.0, 1e-5);
    EXPECT_EQ(at(2, 0, 0), 3.0f) << "the second sequence starts afresh at token 2";
    EXPECT_NEAR(at(3, 0, 0), 3.5, 1e-6) << "equal logits, keys of its own sequence only";
}

TEST(MlAttentionDecode, ReferenceReadsThePhysicalBlocksUpToTheContext) {
    auto task = load("attention_decode_paged");
    const SizeSpec s{"t", false, {{"B", 1}, {"ctx_min", 18}, {"ctx_max", 18}, {"Hq", 2}, {"Hkv", 2}, {"d", 64}}};
    Case c = task->make_case(s, 1, Trial::nominal);
    const auto tables = ints_of(c.buffers[3]);
    ASSERT_EQ(tables.size(), 2u);
    const size_t blocks = c.buffers[1].count<uint16_t>() / (16 * 2 * 64);
    std::vector<float> q(2 * 64, 0.0f), k(blocks * 16 * 2 * 64, 0.0f), v(k.size(), 0.0f);
    q[0] = 4.0f;        // head 0 (kv head 0)
    q[64 + 0] = 4.0f;   // head 1 (kv head 1)
    const auto slot = [&](size_t t, size_t kvh) {
        return ((static_cast<size_t>(tables[t / 16]) * 16 + t % 16) * 2 + kvh) * 64;
    };
    for (size_t t = 0; t < 18; ++t) v[slot(t, 0)] = static_cast<float>(t), v[slot(t, 1)] = 1.0f;
    k[slot(17, 0)] = 100.0f;  // the last token dominates head 0
    v[slot(17, 1)] = 19.0f;   // head 1: equal logits over 18 tokens, 17 x 1 + 19
    c.buffers[0] = make_bf16_buffer("q", BufferRole::input, q);
    c.buffers[1] = make_bf16_buffer("k_cache", BufferRole::input, k);
    c.buffers[2] = make_bf16_buffer("v_cache", BufferRole::input, v);
    const Reference reference = task->reference(s, c);
    const auto out = as_floats(reference.results[0]);
    EXPECT_NEAR(out[0], 17.0, 1e-6) << "token 17, in slot 1 of the second physical block";
    EXPECT_NEAR(out[64], (17.0 + 19.0) / 18.0, 1e-6) << "all 18 tokens, none past the context";
}

// ---------------------------------------------------------------------------------------------
// the check on host-simulated outputs: both sides

enum class Sim { fp32, flash_bf16_p, flash_split_p, no_causal, gqa_modulo, fixed_scale };

// What a kernel stores for prefill: logits in fp32, softmax with the maximum subtracted, the
// weighted sum in fp32, one rounding at the store. flash_bf16_p rounds each probability to bf16 for
// the P V product (FlashAttention's recipe); flash_split_p carries it as two bf16, hi + lo (what
// best.cu does). The wrong variants change one thing.
std::vector<uint16_t> simulate_prefill(const Case& c, size_t hq, size_t hkv, size_t d, Sim sim) {
    const std::vector<float> q = bf16_values(c.buffers[0]), k = bf16_values(c.buffers[1]), v = bf16_values(c.buffers[2]);
    const auto cu = ints_of(c.buffers[3]);
    const size_t t = q.size() / (hq * d);
    const float scale = sim == Sim::fixed_scale ? 1.0f / std::sqrt(static_cast<float>(d))
                                                : static_cast<float>(c.constants.at("scale"));
    std::vector<uint16_t> out(q.size());
    for (size_t b = 0; b + 1 < cu.size(); ++b)
        for (size_t i = static_cast<size_t>(cu[b]); i < static_cast<size_t>(cu[b + 1]); ++i)
            for (size_t h = 0; h < hq; ++h) {
                const size_t kvh = sim == Sim::gqa_modulo ? h % hkv : h / (hq / hkv);
                const size_t last = sim == Sim::no_causal ? static_cast<size_t>(cu[b + 1]) - 1 : i;
                std::vector<float> x;
                for (size_t j = static_cast<size_t>(cu[b]); j <= last; ++j) {
                    float dot = 0;
                    for (size_t e = 0; e < d; ++e) dot += q[(i * hq + h) * d + e] * k[(j * hkv + kvh) * d + e];
                    x.push_back(scale * dot);
                }
                const float m = *std::max_element(x.begin(), x.end());
                float l = 0;
                std::vector<float> acc(d, 0.0f);
                for (size_t n = 0; n < x.size(); ++n) {
                    const float p = std::exp(x[n] - m);
                    l += p;
                    const float hi = round_to_bf16(p), lo = round_to_bf16(p - hi);
                    const float pv = sim == Sim::flash_bf16_p ? hi : sim == Sim::flash_split_p ? hi + lo : p;
                    const size_t j = static_cast<size_t>(cu[b]) + n;
                    for (size_t e = 0; e < d; ++e) acc[e] += pv * v[(j * hkv + kvh) * d + e];
                }
                for (size_t e = 0; e < d; ++e) out[(i * hq + h) * d + e] = float_to_bf16(acc[e] / l);
            }
    (void)t;
    return out;
}

TEST(MlAttentionPrefill, CheckPassesFp32AndTheFlashRecipeAndRejectsWrongMasksMappingsAndScales) {
    auto task = load("attention_prefill");
    double fp32_margin = std::numeric_limits<double>::infinity(), flash_margin = fp32_margin, split_margin = fp32_margin;
    for (const auto& s : task->spec().profiles.at("small"))
        for (uint64_t seed = 1; seed <= 2; ++seed)
            for (Trial trial : {Trial::nominal, Trial::outlier}) {
                const Case c = task->make_case(s, seed, trial);
                const auto ref = task->reference(s, c);
                const auto hq = static_cast<size_t>(s.param("Hq")), hkv = static_cast<size_t>(s.param("Hkv")),
                           d = static_cast<size_t>(s.param("d"));
                const auto run = [&](Sim sim) {
                    return task->check(s, c, ref, {bytes_of_words(simulate_prefill(c, hq, hkv, d, sim))});
                };
                const auto margin = [](const CheckResult& r) {
                    return r.error == 0 ? std::numeric_limits<double>::infinity() : r.tolerance / r.error;
                };
                const auto fp32 = run(Sim::fp32), flash = run(Sim::flash_bf16_p), split = run(Sim::flash_split_p);
                EXPECT_TRUE(fp32.pass) << s.label << ": " << fp32.message;
                EXPECT_TRUE(split.pass) << s.label << ": " << split.message;
                EXPECT_TRUE(flash.pass) << s.label << ": " << flash.message;
                fp32_margin = std::min(fp32_margin, margin(fp32));
                flash_margin = std::min(flash_margin, margin(flash));
                split_margin = std::min(split_margin, margin(split));
                EXPECT_FALSE(run(Sim::no_causal).pass) << s.label;
                // h % Hkv is h / (Hq / Hkv) where either is 1 (MHA, or one kv head).
                if (hkv > 1 && hq > hkv) EXPECT_FALSE(run(Sim::gqa_modulo).pass) << s.label;
                if (trial == Trial::outlier) EXPECT_FALSE(run(Sim::fixed_scale).pass) << s.label << " seed " << seed;
            }
    std::printf("attention_prefill host simulation: smallest margin fp32 %.3g, P as hi + lo bf16 %.3g, P as one bf16 "
                "%.3g\n", fp32_margin, split_margin, flash_margin);
    EXPECT_GE(fp32_margin, 50);
    EXPECT_GE(split_margin, 50);
    // P rounded to one bf16 is off by at most 2^-8 sum_j p_j |v_j|; the rule's floor 2^-7 sum_j p_j |v_j|
    // admits it with a margin of at least 2 (FlashAttention's recipe, issue 24).
    EXPECT_GE(flash_margin, 2);
}

TEST(MlAttentionDecode, CheckRejectsAMissingLastTokenOnShortContexts) {
    auto task = load("attention_decode_paged");
    const SizeSpec s = task->spec().profiles.at("small").at(1);  // 4 requests, contexts 17..200
    const Case c = task->make_case(s, 3, Trial::nominal);
    const auto ref = task->reference(s, c);
    // The same reference with the last token dropped from every request, stored as bf16.
    Case shorter = c;
    for (size_t r = 0; r < 4; ++r) shorter.buffers[4].as<int32_t>()[r] -= 1;
    const auto wrong = as_floats(task->reference(s, shorter).results[0]);
    std::vector<uint16_t> words(wrong.size());
    for (size_t i = 0; i < wrong.size(); ++i) words[i] = float_to_bf16(wrong[i]);
    const auto r = task->check(s, c, ref, {bytes_of_words(words)});
    EXPECT_FALSE(r.pass) << r.message;
    EXPECT_NE(r.message.find("request="), std::string::npos) << r.message;
    std::vector<uint16_t> right(wrong.size());
    const auto exact = as_floats(ref.results[0]);
    for (size_t i = 0; i < exact.size(); ++i) right[i] = float_to_bf16(exact[i]);
    const auto ok = task->check(s, c, ref, {bytes_of_words(right)});
    EXPECT_TRUE(ok.pass) << ok.message;
    EXPECT_EQ(ok.error, 0) << "the exact value rounded once has no error beyond its rounding";
}

// ---------------------------------------------------------------------------------------------
// the real kernels through PoCL

class MlAttentionBroken : public ::testing::TestWithParam<std::pair<std::string, std::string>> {};

TEST_P(MlAttentionBroken, VariantIsIncorrectOnEverySeed) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto& [task, stem] = GetParam();
    test::expect_incorrect_on_every_seed(task, stem);
}

INSTANTIATE_TEST_SUITE_P(
    Ml, MlAttentionBroken,
    ::testing::Values(std::pair{std::string("attention_prefill"), std::string("attention_prefill_no_causal")},
                      std::pair{std::string("attention_prefill"), std::string("attention_prefill_diagonal_excluded")},
                      std::pair{std::string("attention_prefill"), std::string("attention_prefill_gqa_modulo")},
                      std::pair{std::string("attention_prefill"), std::string("attention_prefill_no_max")},
                      std::pair{std::string("attention_decode_paged"), std::string("attention_decode_paged_drop_last")},
                      std::pair{std::string("attention_decode_paged"), std::string("attention_decode_paged_logical_blocks")},
                      std::pair{std::string("attention_decode_paged"), std::string("attention_decode_paged_gqa_modulo")},
                      std::pair{std::string("attention_decode_paged"), std::string("attention_decode_paged_no_max")}));

// The seeds' and best-known OpenCL kernels' margins (tolerance / error) at every small size and in
// both trials, printed for the record (docs/ml-checks.md).
TEST(MlAttentionKernels, ReportTheirMarginOnPocl) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    for (const char* name : {"attention_prefill", "attention_decode_paged"})
        for (const char* kernel : {"seed.cl", "best.cl"}) test::expect_ok_with_margin(name, kernel);
}

}  // namespace
}  // namespace kevo
