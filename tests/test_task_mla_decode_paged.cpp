// mla_decode_paged (tasks/mla_decode_paged): the spec and its sizes, the case layout (contexts, shuffled
// page tables, the outlier trial), the reference on a hand-computed case, the check on both sides
// through host-simulated kernels (fp32; FlashMLA's recipe of one bf16 P, split-KV; wrong structures),
// and through the real kevo binary on PoCL at the small profile and input seeds 1 to 4: the seed,
// best.cl and the bf16-P recipe kernel pass at every size and in both trials with their margins, and
// every wrong kernel (tests/candidates/mla_decode_paged_*.cl) is rejected in the trial that holds what
// it gets wrong, every trial before passing.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <ostream>
#include <set>
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
constexpr size_t kRow = 576, kLatent = 512;
const char* const kTask = "mla_decode_paged";
enum Buf { b_q, b_cache, b_table, b_seqlens, b_out, b_workspace, b_counters };

std::unique_ptr<Task> load() {
    auto task = make_task(kTask);
    EXPECT_TRUE(task.has_value());
    return task ? std::move(*task) : nullptr;
}

SizeSpec tiny(int64_t b, int64_t c_min, int64_t c_max, int64_t h, int64_t page) {
    return {"tiny", false, {{"B", b}, {"ctx_min", c_min}, {"ctx_max", c_max}, {"H", h}, {"page_size", page}}};
}

std::vector<int32_t> ints_of(const HostBuffer& b) { return {b.as<int32_t>(), b.as<int32_t>() + b.count<int32_t>()}; }

std::vector<std::byte> bytes_of_words(const std::vector<uint16_t>& w) {
    std::vector<std::byte> out(w.size() * 2);
    std::memcpy(out.data(), w.data(), out.size());
    return out;
}

double margin_of(const CheckResult& r) { return r.error == 0 ? std::numeric_limits<double>::infinity() : r.tolerance / r.error; }

// ---------------------------------------------------------------------------------------------
// spec

TEST(MlaDecodePagedSpec, PackOrderProfilesPagesAndSignatures) {
    auto task = load();
    ASSERT_TRUE(task);
    const auto& spec = task->spec();
    EXPECT_EQ(spec.pack, "ml");
    EXPECT_EQ(spec.category, "attention");
    EXPECT_EQ(spec.order, 119);
    for (const auto& name : task_names()) {
        if (name == kTask) continue;
        auto other = make_task(name);
        ASSERT_TRUE(other.has_value()) << name;
        EXPECT_NE((*other)->spec().order, spec.order) << name << " has the same order";
    }
    ASSERT_EQ(spec.kernels.size(), 1u);
    for (const char* profile : {"small", "paper", "large"}) {
        const auto& sizes = spec.profiles.at(profile);
        ASSERT_EQ(sizes.size(), 4u) << profile;
        int heldout = 0;
        std::set<std::string> labels;
        std::set<int64_t> pages;
        for (const auto& s : sizes) {
            heldout += s.heldout;
            labels.insert(s.label);
            const int64_t page = s.param("page_size");
            pages.insert(page);
            EXPECT_TRUE(page == 1 || page == 16 || page == 64) << s.label;
            EXPECT_EQ(s.param("H") % 16, 0) << s.label;
            EXPECT_LE(s.param("ctx_min"), s.param("ctx_max")) << s.label;
            // Request 0 has ctx_max: a context that ends inside a page wherever pages hold more than one token.
            if (page > 1) EXPECT_NE(s.param("ctx_max") % page, 0) << s.label;
            EXPECT_EQ(s.device_reference, std::string(profile) == "large") << s.label;
        }
        EXPECT_EQ(heldout, 1) << profile;
        EXPECT_EQ(labels.size(), 4u) << profile;
        EXPECT_GE(pages.size(), 2u) << profile;
    }
    // small: pages of 1, 16 and 64, a context longer than one 512-token partition, one shorter than a page.
    std::set<int64_t> small_pages;
    bool long_context = false, short_context = false;
    for (const auto& s : spec.profiles.at("small")) {
        small_pages.insert(s.param("page_size"));
        long_context |= s.param("ctx_max") > 512;
        short_context |= s.param("ctx_min") < s.param("page_size");
    }
    EXPECT_EQ(small_pages, (std::set<int64_t>{1, 16, 64}));
    EXPECT_TRUE(long_context);
    EXPECT_TRUE(short_context);
    ASSERT_TRUE(spec.profiles.count(kTraceProfile));
    EXPECT_EQ(spec.profiles.at(kTraceProfile).size(), 3u);

    test::expect_signatures_in_task_files(kTask, spec);
}

// ---------------------------------------------------------------------------------------------
// cases

TEST(MlaDecodePagedCase, ContextsTablesScaleAndModel) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec s = tiny(5, 9, 100, 16, 16);
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(s, 7, trial);
        ASSERT_EQ(c.buffers.size(), 7u);
        EXPECT_EQ(c.buffers[b_q].type, ElemType::bf16);
        EXPECT_EQ(c.buffers[b_q].count<uint16_t>(), 5u * 16 * kRow);
        EXPECT_EQ(c.buffers[b_out].role, BufferRole::output);
        EXPECT_EQ(c.buffers[b_out].count<uint16_t>(), 5u * 16 * kLatent);
        EXPECT_EQ(c.buffers[b_workspace].role, BufferRole::state);
        EXPECT_EQ(c.buffers[b_workspace].count<float>(), 5u * 16 * 1 * (kLatent + 2));
        EXPECT_EQ(c.buffers[b_counters].count<uint32_t>(), 5u * 16);
        const auto ctx = ints_of(c.buffers[b_seqlens]), table = ints_of(c.buffers[b_table]);
        const size_t maxp = 7;  // ceil(100 / 16)
        ASSERT_EQ(table.size(), 5 * maxp);
        EXPECT_EQ(ctx[0], 100);
        EXPECT_EQ(ctx[1], 9) << "shorter than a page";
        if (trial == Trial::nominal) EXPECT_EQ(ctx[2] % 16, 0) << "a context of whole pages";
        if (trial == Trial::outlier) EXPECT_EQ(ctx[4], 1);
        const size_t num_pages = c.buffers[b_cache].count<uint16_t>() / (16 * kRow);
        std::set<int32_t> used;
        size_t in_order = 0, pairs = 0, unused_nonzero = 0;
        for (size_t r = 0; r < 5; ++r)
            for (size_t pg = 0; pg < maxp; ++pg) {
                const int32_t e = table[r * maxp + pg];
                if (pg >= (static_cast<size_t>(ctx[r]) + 15) / 16) {
                    unused_nonzero += e != 0;
                    continue;
                }
                EXPECT_GE(e, 1) << "page 0 is never mapped";
                EXPECT_LT(static_cast<size_t>(e), num_pages);
                EXPECT_TRUE(used.insert(e).second) << "a physical page serves one logical page";
                pairs += pg > 0;
                in_order += pg > 0 && e == table[r * maxp + pg - 1] + 1;
            }
        EXPECT_LT(in_order, pairs) << "consecutive logical pages are mostly not consecutive physical ones";
        if (trial == Trial::nominal) EXPECT_EQ(unused_nonzero, 0u);
        else EXPECT_GT(unused_nonzero, 0u);
        const double scale = c.constants.at("softmax_scale");
        if (trial == Trial::nominal) EXPECT_FLOAT_EQ(static_cast<float>(scale), 1.0f / 24.0f);
        else EXPECT_GT(std::fabs(scale * 24.0 - 1.0), 0.14);
        double tokens = 0, pages = 0;
        for (int32_t n : ctx) tokens += n, pages += (n + 15) / 16;
        EXPECT_DOUBLE_EQ(c.flops_by_class.at(ComputeClass::tensor_bf16), 2.0 * 16 * (576 + 512) * tokens);
        EXPECT_DOUBLE_EQ(c.roofline_bytes, 1152.0 * tokens + (1152.0 + 1024.0) * 5 * 16 + 4.0 * pages + 4.0 * 5);
    }
    // A batch of one: the outlier context ends one token short of ctx_max.
    EXPECT_EQ(ints_of(task->make_case(tiny(1, 700, 700, 16, 64), 1, Trial::outlier).buffers[b_seqlens])[0], 699);
}

// ---------------------------------------------------------------------------------------------
// the reference by hand

// One request of 5 tokens in pages of 2 (pages 0 and 1 full, page 2 holds token 4 and a slot past the
// context), 2 heads, scale 1/24. Row t: c_kv[0] = t + 1, c_kv[1] = 10, and token 4 alone has k_rope[0] = 1;
// the slot past the context holds c_kv[0] = 1000 and k_rope[0] = 1. Head 0: q_rope[0] = 96, so token 4's
// logit is 96 / 24 = 4 through the rope part and the others' 0: out[0] = (1 + 2 + 3 + 4 + 5 e^4) / (4 + e^4).
// Head 1: q = 0, uniform over the 5 tokens: out[0] = 3. c_kv[1] = 10 everywhere: out[1] = 10 for both.
TEST(MlaDecodePagedReference, RopePartCountsLastPartialPageCountsNothingPastTheContext) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec s = tiny(1, 5, 5, 2, 2);
    Case c = task->make_case(s, 1, Trial::nominal);
    const auto table = ints_of(c.buffers[b_table]);
    ASSERT_EQ(table.size(), 3u);
    const size_t num_pages = c.buffers[b_cache].count<uint16_t>() / (2 * kRow);
    std::vector<float> q(2 * kRow, 0.0f), cache(num_pages * 2 * kRow, 0.0f);
    const auto slot = [&](size_t t) { return (static_cast<size_t>(table[t / 2]) * 2 + t % 2) * kRow; };
    for (size_t t = 0; t < 5; ++t) cache[slot(t)] = static_cast<float>(t + 1), cache[slot(t) + 1] = 10.0f;
    cache[slot(4) + kLatent] = 1.0f;
    cache[slot(5)] = 1000.0f, cache[slot(5) + kLatent] = 1.0f;  // past the context, in the last page
    q[kLatent] = 96.0f;
    c.buffers[b_q] = make_bf16_buffer("q", BufferRole::input, q);
    c.buffers[b_cache] = make_bf16_buffer("kv_cache", BufferRole::input, cache);
    ASSERT_FLOAT_EQ(static_cast<float>(c.constants.at("softmax_scale")), 1.0f / 24.0f);
    const Reference ref = task->reference(s, c);
    ASSERT_EQ(ref.results.size(), 2u);
    const auto out = as_floats(ref.results[0]), abs_weighted = as_floats(ref.results[1]);
    ASSERT_EQ(out.size(), 2 * kLatent);
    const double e4 = std::exp(4.0);
    EXPECT_NEAR(out[0], (10.0 + 5.0 * e4) / (4.0 + e4), 1e-6);
    EXPECT_NEAR(out[1], 10.0, 1e-5);
    EXPECT_NEAR(out[kLatent], 3.0, 1e-6);
    EXPECT_NEAR(out[kLatent + 1], 10.0, 1e-5);
    EXPECT_EQ(out[2], 0.0f);
    EXPECT_NEAR(abs_weighted[kLatent], 3.0, 1e-6) << "sum_j p_j |v_j|, all positive here";
}

// ---------------------------------------------------------------------------------------------
// the check on host-simulated kernels: both sides

enum class Sim { fp32, flash_bf16_p, bf16_p_and_l, no_rope, fixed_scale, drop_partial_page, logical_pages, head_swap };

// What a kernel stores: scores in fp32, an online softmax in fp32 over tiles of 64 tokens in splits of
// 192 (each split's (o, lse) combined as FlashMLA's combine kernel does), one rounding at the store.
// flash_bf16_p rounds each P to bf16 for P V with l from the fp32 P (FlashMLA); bf16_p_and_l takes l
// from the rounded P too. The wrong variants change one thing.
std::vector<uint16_t> simulate(const SizeSpec& size, const Case& c, Sim sim) {
    const auto h = static_cast<size_t>(size.param("H")), page = static_cast<size_t>(size.param("page_size"));
    const std::vector<float> q = bf16_values(c.buffers[b_q]), cache = bf16_values(c.buffers[b_cache]);
    const auto table = ints_of(c.buffers[b_table]), ctx = ints_of(c.buffers[b_seqlens]);
    const size_t b = ctx.size(), maxp = table.size() / b;
    const float scale = sim == Sim::fixed_scale ? 1.0f / std::sqrt(192.0f) : static_cast<float>(c.constants.at("softmax_scale"));
    const size_t dims = sim == Sim::no_rope ? kLatent : kRow;
    std::vector<uint16_t> out(b * h * kLatent);
    for (size_t r = 0; r < b; ++r) {
        size_t n = static_cast<size_t>(ctx[r]);
        if (sim == Sim::drop_partial_page) n = n / page * page;
        for (size_t hh = 0; hh < h; ++hh) {
            const float* qv = &q[(r * h + hh) * kRow];
            float lse_max = -std::numeric_limits<float>::infinity(), comb_sum = 0;
            std::vector<float> comb(kLatent, 0.0f), acc(kLatent);
            for (size_t s0 = 0; s0 < n; s0 += 192) {
                const size_t s1 = std::min(n, s0 + 192);
                float m = -std::numeric_limits<float>::infinity(), l = 0;
                std::fill(acc.begin(), acc.end(), 0.0f);
                for (size_t t0 = s0; t0 < s1; t0 += 64) {
                    const size_t t1 = std::min(s1, t0 + 64);
                    std::vector<float> x;
                    std::vector<const float*> rows;
                    for (size_t t = t0; t < t1; ++t) {
                        const size_t pg = sim == Sim::logical_pages ? t / page + 1 : static_cast<size_t>(table[r * maxp + t / page]);
                        const float* row = &cache[(pg * page + t % page) * kRow];
                        float dot = 0;
                        for (size_t e = 0; e < dims; ++e) dot += qv[e] * row[e];
                        x.push_back(scale * dot);
                        rows.push_back(row);
                    }
                    const float m_new = std::max(m, *std::max_element(x.begin(), x.end()));
                    const float alpha = std::exp(m - m_new);
                    l *= alpha;
                    for (auto& a : acc) a *= alpha;
                    for (size_t j = 0; j < x.size(); ++j) {
                        const float p = std::exp(x[j] - m_new), pb = round_to_bf16(p);
                        const bool rounded = sim == Sim::flash_bf16_p || sim == Sim::bf16_p_and_l;
                        l += sim == Sim::bf16_p_and_l ? pb : p;
                        for (size_t e = 0; e < kLatent; ++e) acc[e] += (rounded ? pb : p) * rows[j][e];
                    }
                    m = m_new;
                }
                const float lse = m + std::log(l), new_max = std::max(lse_max, lse);
                const float old_w = std::exp(lse_max - new_max), w = std::exp(lse - new_max);
                comb_sum = comb_sum * old_w + w;
                for (size_t e = 0; e < kLatent; ++e) comb[e] = comb[e] * old_w + w * (acc[e] / l);
                lse_max = new_max;
            }
            const size_t ho = sim == Sim::head_swap && hh < 2 ? 1 - hh : hh;
            for (size_t e = 0; e < kLatent; ++e) out[(r * h + ho) * kLatent + e] = float_to_bf16(comb[e] / comb_sum);
        }
    }
    return out;
}

TEST(MlaDecodePagedCheck, AdmitsFp32AndOneBf16PAndRejectsEachWrongStructure) {
    auto task = load();
    ASSERT_TRUE(task);
    double fp32_margin = std::numeric_limits<double>::infinity(), flash_margin = fp32_margin, pl_margin = fp32_margin;
    double weakest_wrong = fp32_margin;  // the smallest error / tolerance of a wrong structure
    for (const auto& s : task->spec().profiles.at("small"))
        for (uint64_t seed = 1; seed <= 2; ++seed)
            for (Trial trial : {Trial::nominal, Trial::outlier}) {
                const Case c = task->make_case(s, seed, trial);
                const Reference ref = task->reference(s, c);
                const auto run = [&](Sim sim) { return task->check(s, c, ref, {bytes_of_words(simulate(s, c, sim))}); };
                const auto fp32 = run(Sim::fp32), flash = run(Sim::flash_bf16_p), pl = run(Sim::bf16_p_and_l);
                EXPECT_TRUE(fp32.pass) << s.label << ": " << fp32.message;
                EXPECT_TRUE(flash.pass) << s.label << ": " << flash.message;
                EXPECT_TRUE(pl.pass) << s.label << ": " << pl.message;
                fp32_margin = std::min(fp32_margin, margin_of(fp32));
                flash_margin = std::min(flash_margin, margin_of(flash));
                pl_margin = std::min(pl_margin, margin_of(pl));
                if (trial != Trial::nominal) continue;
                std::vector<Sim> wrong = {Sim::no_rope, Sim::fixed_scale, Sim::logical_pages, Sim::head_swap};
                if (s.param("page_size") > 1) wrong.push_back(Sim::drop_partial_page);
                for (Sim w : wrong) {
                    const auto r = run(w);
                    EXPECT_FALSE(r.pass) << s.label << " seed " << seed << " sim " << static_cast<int>(w);
                    if (r.kind == "bf16_ulp") weakest_wrong = std::min(weakest_wrong, r.error / r.tolerance);
                }
            }
    std::printf("mla_decode_paged host simulation at small: smallest margin fp32 %.3g, one bf16 P (l from fp32 P) %.3g, "
                "bf16 P and l %.3g; the weakest wrong structure at %.3g x its tolerance\n",
                fp32_margin, flash_margin, pl_margin, weakest_wrong);
    EXPECT_GE(fp32_margin, 50);
    // One bf16 P is off by at most 2^-8 sum_j p_j |v_j| against the floor 2^-7 sum_j p_j |v_j| (attention_common.hpp).
    EXPECT_GE(flash_margin, 2);
    EXPECT_GE(pl_margin, 2);
    EXPECT_GE(weakest_wrong, 3);
}

// The same recipes at the paper profile's first size (16 requests of 512-4095 tokens, both trials, one
// seed): the longer contexts average the bf16 roundings of P, so the margin is wider than at small.
TEST(MlaDecodePagedCheck, OneBf16PKeepsItsMarginAtPaper) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec s = task->spec().profiles.at("paper").at(0);
    double flash_margin = std::numeric_limits<double>::infinity(), fp32_margin = flash_margin;
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(s, 1, trial);
        const Reference ref = task->reference(s, c);
        const auto fp32 = task->check(s, c, ref, {bytes_of_words(simulate(s, c, Sim::fp32))});
        const auto flash = task->check(s, c, ref, {bytes_of_words(simulate(s, c, Sim::flash_bf16_p))});
        EXPECT_TRUE(fp32.pass) << fp32.message;
        EXPECT_TRUE(flash.pass) << flash.message;
        fp32_margin = std::min(fp32_margin, margin_of(fp32));
        flash_margin = std::min(flash_margin, margin_of(flash));
    }
    std::printf("mla_decode_paged host simulation at %s: smallest margin fp32 %.3g, one bf16 P %.3g\n", s.label.c_str(),
                fp32_margin, flash_margin);
    EXPECT_GE(fp32_margin, 50);
    EXPECT_GE(flash_margin, 4);
}

// The exact value rounded once has no error beyond its rounding; a NaN fails, and so does one element
// moved by 2% of the signal. At a device-reference size (the seed's bf16 output as the reference, no
// sum_j p_j |v_j|) the check bounds the floor by max_j |v_j| and still passes the rounded values.
TEST(MlaDecodePagedCheck, RoundedReferencePassesNanAndAMovedElementFailDeviceReferenceWorks) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec s = task->spec().profiles.at("small").at(1);
    const Case c = task->make_case(s, 3, Trial::nominal);
    const Reference ref = task->reference(s, c);
    const auto exact = as_floats(ref.results[0]);
    std::vector<uint16_t> right(exact.size());
    for (size_t i = 0; i < exact.size(); ++i) right[i] = float_to_bf16(exact[i]);
    const auto ok = task->check(s, c, ref, {bytes_of_words(right)});
    EXPECT_TRUE(ok.pass) << ok.message;
    EXPECT_EQ(ok.error, 0);
    auto nan = right;
    nan[123] = 0x7fc0;
    EXPECT_FALSE(task->check(s, c, ref, {bytes_of_words(nan)}).pass);
    auto moved = right;
    const size_t e = 5 * kLatent + 7;  // request 0, head 5
    moved[e] = float_to_bf16(exact[e] + 1.0f);
    const auto bad = task->check(s, c, ref, {bytes_of_words(moved)});
    EXPECT_FALSE(bad.pass);
    EXPECT_EQ(bad.worst_index, static_cast<int64_t>(e));
    EXPECT_NE(bad.message.find("request=0"), std::string::npos) << bad.message;
    EXPECT_NE(bad.message.find("head=5"), std::string::npos) << bad.message;
    const Reference device{{bytes_of_words(right)}};
    const auto dev = task->check(s, c, device, {bytes_of_words(right)});
    EXPECT_TRUE(dev.pass) << dev.message;
    EXPECT_FALSE(task->check(s, c, device, {bytes_of_words(nan)}).pass);
}

// ---------------------------------------------------------------------------------------------
// through kevo on PoCL

class MlaDecodePagedPasses : public ::testing::TestWithParam<test::PassingKernel> {};

TEST_P(MlaDecodePagedPasses, EverySmallSizeAndTrialOnFourSeedsWithItsMargin) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    test::expect_ok_on_every_seed(kTask, GetParam(), kSeeds, 4);
}

INSTANTIATE_TEST_SUITE_P(MlaDecodePagedKernels, MlaDecodePagedPasses,
                         ::testing::Values(test::PassingKernel{"seed.cl", true, 50}, test::PassingKernel{"best.cl", true, 50},
                                           test::PassingKernel{"mla_decode_paged_recipe_bf16p", false, 2}),
                         test::passing_kernel_name);

struct Wrong {
    std::string stem;
    std::string trial;  // the trial that holds the structure, where the kernel must fail first
};

void PrintTo(const Wrong& w, std::ostream* os) { *os << w.stem; }

const Wrong kWrong[] = {
    {"mla_decode_paged_slightly_wrong", "outlier"},        // 1/sqrt(576) fixed: the outlier scale
    {"mla_decode_paged_wrong_scale", "nominal"},           // 1/sqrt(192) fixed
    {"mla_decode_paged_no_rope", "nominal"},               // scores over the 512 latent dims only
    {"mla_decode_paged_drop_partial_page", "nominal"},     // contexts ending inside a page (700 in pages of 64)
    {"mla_decode_paged_only_full_last_page", "nominal"},   // request 2's whole pages (pages of 16)
    {"mla_decode_paged_logical_pages", "nominal"},         // the shuffled block table
    {"mla_decode_paged_page_size_64", "nominal"},          // pages of 16
    {"mla_decode_paged_head_swap", "nominal"},             // heads 0 and 1
    {"mla_decode_paged_no_max", "outlier"},                // logits above 125
    {"mla_decode_paged_only_negative_logits", "outlier"},  // head 0's logits below -115
};

class MlaDecodePagedWrong : public ::testing::TestWithParam<Wrong> {};

TEST_P(MlaDecodePagedWrong, IsRejectedInTheTrialThatHoldsItOnFourSeeds) {
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
        // The evaluator stops at the first failing trial: it holds the structure, and every trial before
        // it passed.
        const auto& failed = doc["sizes"].back()["trials"].back();
        EXPECT_FALSE(failed["pass"].get<bool>()) << failed.dump();
        EXPECT_EQ(failed["trial"], w.trial) << w.stem << " seed " << seed << ": " << failed.dump();
        for (const auto& size : doc["sizes"])
            for (const auto& t : size["trials"])
                if (&t != &failed) {
                    EXPECT_TRUE(t["pass"].get<bool>()) << w.stem << " seed " << seed << ": " << t.dump();
                }
    }
}

INSTANTIATE_TEST_SUITE_P(MlaDecodePagedCandidates, MlaDecodePagedWrong, ::testing::ValuesIn(kWrong),
                         [](const auto& info) { return info.param.stem; });

}  // namespace
}  // namespace kevo
