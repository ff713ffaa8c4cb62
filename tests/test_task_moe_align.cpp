// moe_align (tasks/moe_align): the reference on hand-computed cases (a softmax routing with ties and
// its alignment, a grouped routing where the group limit and the bias decide), the check on both
// sides (every ordering and tie-break a production kernel may give passes; a wrong expert, a missing
// or duplicated pair, wrong padding, a wrong num_tokens_post_padded, a wrong renormalisation, an
// ignored group limit, a choice beyond the tie tolerance fail), the spec's sizes and files, and
// through the real kevo binary on PoCL at the small profile and input seeds 1 to 4: the seed, best.cl
// and a kernel taking every freedom the other way pass at every size and in both trials with a margin
// of at least 50, and every wrong kernel (tests/candidates/moe_align_*.cl) is rejected in the trial
// and the size family that hold what it gets wrong, every trial before passing.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <limits>
#include <ostream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "backend/kernel_language.hpp"
#include "ml_candidates.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

constexpr int kSeeds = 4;
const char* const kTask = "moe_align";

std::unique_ptr<Task> load() {
    auto task = make_task(kTask);
    EXPECT_TRUE(task.has_value());
    return task ? std::move(*task) : nullptr;
}

SizeSpec tiny(int64_t t, int64_t e, int64_t k, int64_t groups, int64_t topk_group, int64_t block, int64_t renorm) {
    return {"tiny", false,
            {{"T", t}, {"E", e}, {"k", k}, {"groups", groups}, {"topk_group", topk_group}, {"block", block}, {"renorm", renorm}}};
}

template <class T>
std::vector<T> values(const std::vector<std::byte>& b) {
    std::vector<T> v(b.size() / sizeof(T));
    std::memcpy(v.data(), b.data(), v.size() * sizeof(T));
    return v;
}
template <class T>
std::vector<std::byte> bytes(const std::vector<T>& v) {
    std::vector<std::byte> b(v.size() * sizeof(T));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
}
void set_f32(HostBuffer& b, const std::vector<float>& v) {
    ASSERT_EQ(b.count<float>(), v.size()) << b.name;
    std::memcpy(b.data.data(), v.data(), v.size() * sizeof(float));
}

// ---------------------------------------------------------------------------------------------
// the reference by hand

// T 3, E 4, k 2, block 4. Token 0: logits (1, 3, 2, 0): experts 1, 2. Token 1: (2, 0, 2, 1): 0 and 2
// tied, both in. Token 2: (0, 1, 0.5, 0.5): expert 1, then 2 and 3 tied for the second place: the
// lower index, 2. Pairs p = 2 t + j: expert 0 {2}, 1 {0, 4}, 2 {1, 3, 5}, 3 none; each padded to 4
// rows: 12 rows, expert 3 none; sentinel 6; capacity 6 + 4 * 3 = 18; expert_ids (5 blocks) 0 1 2 0 0.
TEST(MoeAlignReference, SoftmaxTopkTiesToTheLowerIndexRenormalisedAndAligned) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec size = tiny(3, 4, 2, 0, 0, 4, 1);
    for (int renorm : {1, 0}) {
        Case c = task->make_case(size, 1, Trial::nominal);
        set_f32(c.buffers[0], {1, 3, 2, 0, 2, 0, 2, 1, 0, 1, 0.5f, 0.5f});
        c.constants["renormalize"] = renorm;
        const Reference ref = task->reference(size, c);
        ASSERT_EQ(ref.results.size(), 5u);
        EXPECT_EQ(values<int32_t>(ref.results[1]), (std::vector<int32_t>{1, 2, 0, 2, 1, 2}));
        const auto w = values<float>(ref.results[0]);
        ASSERT_EQ(w.size(), 6u);
        const double z0 = std::exp(1.0) + std::exp(3.0) + std::exp(2.0) + 1, z1 = 2 * std::exp(2.0) + 1 + std::exp(1.0),
                     z2 = 1 + std::exp(1.0) + 2 * std::exp(0.5);
        if (renorm) {
            EXPECT_NEAR(w[0], 1 / (1 + std::exp(-1.0)), 1e-7);
            EXPECT_NEAR(w[1], 1 / (1 + std::exp(1.0)), 1e-7);
            EXPECT_NEAR(w[2], 0.5, 1e-7);
            EXPECT_NEAR(w[3], 0.5, 1e-7);
            EXPECT_NEAR(w[4], 1 / (1 + std::exp(-0.5)), 1e-7);
            EXPECT_NEAR(w[5], 1 / (1 + std::exp(0.5)), 1e-7);
        } else {
            EXPECT_NEAR(w[0], std::exp(3.0) / z0, 1e-7);
            EXPECT_NEAR(w[1], std::exp(2.0) / z0, 1e-7);
            EXPECT_NEAR(w[2], std::exp(2.0) / z1, 1e-7);
            EXPECT_NEAR(w[3], std::exp(2.0) / z1, 1e-7);
            EXPECT_NEAR(w[4], std::exp(1.0) / z2, 1e-7);
            EXPECT_NEAR(w[5], std::exp(0.5) / z2, 1e-7);
        }
        EXPECT_EQ(values<int32_t>(ref.results[2]), (std::vector<int32_t>{2, 6, 6, 6, 0, 4, 6, 6, 1, 3, 5, 6, 6, 6, 6, 6, 6, 6}));
        EXPECT_EQ(values<int32_t>(ref.results[3]), (std::vector<int32_t>{0, 1, 2, 0, 0}));
        EXPECT_EQ(values<int32_t>(ref.results[4]), (std::vector<int32_t>{12}));
        // And the check takes the reference as it is.
        EXPECT_TRUE(task->check(size, c, ref, ref.results).pass) << renorm;
    }
}

// E 8 in 4 groups of 2, 2 groups kept, k 2, block 4, one token. Sigmoids (0.9, 0.1 | 0.7, 0.6 |
// 0.65, 0.62 | 0.2, 0.1), no bias: group sums 1.0, 1.3, 1.27, 0.3 keep groups 1 and 2 (their maxima
// would keep 0 and 1), and the choice is experts 2 (0.7) and 4 (0.65), not 0 (0.9). With a bias of
// 0.1 on expert 5 its score 0.72 comes first: experts 5, 2, weighted by their sigmoids 0.62 and 0.7,
// renormalised and times 2.5. Rows: expert 2's range [1 (pair 1), 2, 2, 2], expert 5's [0, 2, 2, 2];
// 8 rows; capacity 2 + 8 * 3 = 26; 7 blocks: expert_ids 2 5 0 0 0 0 0.
TEST(MoeAlignReference, GroupedTopkKeepsTheGroupsOfLargestTopTwoSumAndWeightsUnbiased) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec size = tiny(1, 8, 2, 4, 2, 4, 1);
    const std::vector<double> sig = {0.9, 0.1, 0.7, 0.6, 0.65, 0.62, 0.2, 0.1};
    std::vector<float> logits;
    for (double q : sig) logits.push_back(static_cast<float>(std::log(q / (1 - q))));
    for (float bias5 : {0.0f, 0.1f}) {
        Case c = task->make_case(size, 1, Trial::nominal);
        set_f32(c.buffers[0], logits);
        std::vector<float> bias(8, 0.0f);
        bias[5] = bias5;
        set_f32(c.buffers[1], bias);
        ASSERT_EQ(c.constants.at("routed_scaling_factor"), 2.5);
        const Reference ref = task->reference(size, c);
        const auto ids = values<int32_t>(ref.results[1]);
        const auto w = values<float>(ref.results[0]);
        if (bias5 == 0) {
            EXPECT_EQ(ids, (std::vector<int32_t>{2, 4}));
            EXPECT_NEAR(w[0], 2.5 * 0.7 / 1.35, 1e-6);
            EXPECT_NEAR(w[1], 2.5 * 0.65 / 1.35, 1e-6);
            EXPECT_EQ(values<int32_t>(ref.results[2])[0], 0);  // expert 2's range first: pair 0
        } else {
            EXPECT_EQ(ids, (std::vector<int32_t>{5, 2}));
            EXPECT_NEAR(w[0], 2.5 * 0.62 / 1.32, 1e-6);
            EXPECT_NEAR(w[1], 2.5 * 0.7 / 1.32, 1e-6);
            std::vector<int32_t> sorted(26, 2);
            sorted[0] = 1, sorted[4] = 0;
            EXPECT_EQ(values<int32_t>(ref.results[2]), sorted);
            EXPECT_EQ(values<int32_t>(ref.results[3]), (std::vector<int32_t>{2, 5, 0, 0, 0, 0, 0}));
        }
        EXPECT_EQ(values<int32_t>(ref.results[4]), (std::vector<int32_t>{8}));
        EXPECT_TRUE(task->check(size, c, ref, ref.results).pass);
    }
}

// ---------------------------------------------------------------------------------------------
// the check on both sides

struct Shape {
    size_t t, e, k, b;
};
Shape shape(const SizeSpec& s) {
    return {static_cast<size_t>(s.param("T")), static_cast<size_t>(s.param("E")), static_cast<size_t>(s.param("k")),
            static_cast<size_t>(s.param("block"))};
}

// The alignment of `ids` built the other way from the reference: each expert's pairs in descending
// order.
std::vector<std::vector<std::byte>> aligned(const Shape& s, const std::vector<float>& w, const std::vector<int32_t>& ids) {
    std::vector<size_t> count(s.e, 0), offset(s.e, 0);
    for (int32_t id : ids) count[static_cast<size_t>(id)]++;
    size_t total = 0;
    for (size_t e = 0; e < s.e; ++e) offset[e] = total, total += (count[e] + s.b - 1) / s.b * s.b;
    const size_t capacity = s.t * s.k + s.e * (s.b - 1), blocks = (capacity + s.b - 1) / s.b;
    std::vector<int32_t> sorted(capacity, static_cast<int32_t>(s.t * s.k)), expert_ids(blocks, 0);
    std::vector<size_t> cursor = offset;
    for (size_t p = ids.size(); p-- > 0;) sorted[cursor[static_cast<size_t>(ids[p])]++] = static_cast<int32_t>(p);
    for (size_t e = 0; e < s.e; ++e)
        for (size_t r = offset[e]; r < offset[e] + (count[e] + s.b - 1) / s.b * s.b; r += s.b) expert_ids[r / s.b] = static_cast<int32_t>(e);
    return {bytes(w), bytes(ids), bytes(sorted), bytes(expert_ids), bytes(std::vector<int32_t>{static_cast<int32_t>(total)})};
}

struct Routed {
    std::vector<float> w;
    std::vector<int32_t> ids;
};
Routed routed(const Reference& ref) { return {values<float>(ref.results[0]), values<int32_t>(ref.results[1])}; }

double softmax_p(const float* row, size_t e, size_t i) {
    double m = row[0];
    for (size_t j = 0; j < e; ++j) m = std::max(m, static_cast<double>(row[j]));
    double z = 0;
    for (size_t j = 0; j < e; ++j) z += std::exp(row[j] - m);
    return std::exp(row[i] - m) / z;
}

// A token t and an unchosen expert whose logit relates to a chosen one's as `relate` says.
struct Swap {
    size_t t = 0, slot = 0;
    int32_t other = -1;
};
template <class Rel>
Swap find_swap(const Case& c, const Shape& s, const std::vector<int32_t>& ids, Rel relate) {
    const float* l = c.buffers[0].as<float>();
    for (size_t t = 0; t < s.t; ++t) {
        const float* row = l + t * s.e;
        for (size_t j = 0; j < s.k; ++j)
            for (size_t o = 0; o < s.e; ++o) {
                if (std::find(&ids[t * s.k], &ids[t * s.k] + s.k, static_cast<int32_t>(o)) != &ids[t * s.k] + s.k) continue;
                if (relate(row[ids[t * s.k + j]], row[o])) return {t, j, static_cast<int32_t>(o)};
            }
    }
    return {};
}

TEST(MoeAlignCheck, EveryOrderAndTieBreakPassesAndEachStructuralErrorFails) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec size = task->spec().profiles.at("small").at(0);  // qwen3, renormalised
    const Shape s = shape(size);
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(size, 3, trial);
        const Reference ref = task->reference(size, c);
        const auto ok = task->check(size, c, ref, ref.results);
        EXPECT_TRUE(ok.pass) << trial_name(trial) << ": " << ok.message;
        EXPECT_EQ(ok.kind, "topk_weights");
        EXPECT_LT(ok.error, ok.tolerance / 50) << ok.message;
        // Reversed slots and each expert's pairs descending: the same routing, another order.
        Routed r = routed(ref);
        for (size_t t = 0; t < s.t; ++t) {
            std::reverse(r.ids.begin() + t * s.k, r.ids.begin() + (t + 1) * s.k);
            std::reverse(r.w.begin() + t * s.k, r.w.begin() + (t + 1) * s.k);
        }
        const auto other = task->check(size, c, ref, aligned(s, r.w, r.ids));
        EXPECT_TRUE(other.pass) << other.message;
    }
    const Case c = task->make_case(size, 3, Trial::nominal);
    const Reference ref = task->reference(size, c);
    const float* logits = c.buffers[0].as<float>();
    // An exact tie across the k-th place taken the other way (the weight is the same) passes, and so
    // does a near-tie one ulp apart; a near-tie 2^-11 apart taken the wrong way fails.
    {
        Routed r = routed(ref);
        const Swap tie = find_swap(c, s, r.ids, [](float chosen, float other) { return chosen == other; });
        ASSERT_GE(tie.other, 0) << "no exact tie across the boundary";
        r.ids[tie.t * s.k + tie.slot] = tie.other;
        EXPECT_TRUE(task->check(size, c, ref, aligned(s, r.w, r.ids)).pass);
    }
    {
        Routed r = routed(ref);
        const Swap ulp = find_swap(c, s, r.ids, [](float chosen, float other) {
            return other < chosen && std::nextafter(other, std::numeric_limits<float>::infinity()) == chosen;
        });
        ASSERT_GE(ulp.other, 0) << "no one-ulp near-tie";
        const float* row = logits + ulp.t * s.e;
        double sum = 0;
        r.ids[ulp.t * s.k + ulp.slot] = ulp.other;
        for (size_t j = 0; j < s.k; ++j) sum += softmax_p(row, s.e, static_cast<size_t>(r.ids[ulp.t * s.k + j]));
        for (size_t j = 0; j < s.k; ++j)
            r.w[ulp.t * s.k + j] = static_cast<float>(softmax_p(row, s.e, static_cast<size_t>(r.ids[ulp.t * s.k + j])) / sum);
        const auto got = task->check(size, c, ref, aligned(s, r.w, r.ids));
        EXPECT_TRUE(got.pass) << got.message;
    }
    {
        Routed r = routed(ref);
        const Swap near = find_swap(c, s, r.ids, [](float chosen, float other) {
            const double d = static_cast<double>(chosen) - other;
            return d > 0x1.0p-12 && d < 0x1.0p-10;
        });
        ASSERT_GE(near.other, 0) << "no planted near-tie";
        r.ids[near.t * s.k + near.slot] = near.other;
        const auto bad = task->check(size, c, ref, aligned(s, r.w, r.ids));
        EXPECT_FALSE(bad.pass);
        EXPECT_EQ(bad.kind, "topk_ids") << bad.message;
        EXPECT_GT(bad.error, bad.tolerance);
        EXPECT_NE(bad.message.find(fmt::format("token {}", near.t)), std::string::npos) << bad.message;
    }
    // A duplicated expert; the weights not renormalised; a NaN weight.
    {
        Routed r = routed(ref);
        r.ids[1] = r.ids[0];
        const auto bad = task->check(size, c, ref, aligned(s, r.w, r.ids));
        EXPECT_FALSE(bad.pass);
        EXPECT_NE(bad.message.find("twice"), std::string::npos) << bad.message;
    }
    {
        Routed r = routed(ref);
        for (size_t t = 0; t < s.t; ++t)
            for (size_t j = 0; j < s.k; ++j)
                r.w[t * s.k + j] = static_cast<float>(softmax_p(logits + t * s.e, s.e, static_cast<size_t>(r.ids[t * s.k + j])));
        const auto bad = task->check(size, c, ref, aligned(s, r.w, r.ids));
        EXPECT_FALSE(bad.pass);
        EXPECT_EQ(bad.kind, "topk_weights") << bad.message;
        EXPECT_GT(bad.error, bad.tolerance);
        EXPECT_NE(bad.message.find("renormalised"), std::string::npos) << bad.message;
        Routed n = routed(ref);
        n.w[5] = std::numeric_limits<float>::quiet_NaN();
        EXPECT_FALSE(task->check(size, c, ref, aligned(s, n.w, n.ids)).pass);
    }
    // The alignment: the reference's own outputs, edited.
    auto edit = [&](auto change) {
        auto out = ref.results;
        auto sorted = values<int32_t>(out[2]);
        auto expert_ids = values<int32_t>(out[3]);
        auto post = values<int32_t>(out[4]);
        change(sorted, expert_ids, post);
        out[2] = bytes(sorted), out[3] = bytes(expert_ids), out[4] = bytes(post);
        return task->check(size, c, ref, out);
    };
    const auto ids = values<int32_t>(ref.results[1]);
    const auto sentinel = static_cast<int32_t>(s.t * s.k);
    const auto first_of = [&](const std::vector<int32_t>& sorted, int32_t expert) {
        for (size_t r = 0; r < sorted.size(); ++r)
            if (sorted[r] != sentinel && ids[static_cast<size_t>(sorted[r])] == expert) return r;
        return sorted.size();
    };
    struct Bad {
        const char* what;
        const char* says;
        std::function<void(std::vector<int32_t>&, std::vector<int32_t>&, std::vector<int32_t>&)> change;
    };
    const std::vector<Bad> bad = {
        {"a pair in another expert's range", "routed to expert",
         [&](auto& sorted, auto&, auto&) { std::swap(sorted[first_of(sorted, ids[0])], sorted[first_of(sorted, ids[1])]); }},
        {"a missing pair", "sentinel", [&](auto& sorted, auto&, auto&) { sorted[first_of(sorted, ids[0])] = sentinel; }},
        {"a duplicated pair", "second time",
         [&](auto& sorted, auto&, auto&) {
             // Two pairs of the hot expert (a range of whole blocks): the second replaced by the first.
             const auto hot = static_cast<int32_t>(c.constants.at("hot_expert"));
             const size_t r = first_of(sorted, hot);
             sorted[r + 1] = sorted[r];
         }},
        {"padding before a pair", "sentinel",
         [&](auto& sorted, auto&, auto&) {
             for (size_t r = 1; r < sorted.size(); ++r)
                 if (sorted[r] == sentinel && sorted[r - 1] != sentinel) {
                     std::swap(sorted[r], sorted[r - 1]);
                     return;
                 }
         }},
        {"padding of -1", "padding sentinel",
         [&](auto& sorted, auto&, auto&) {
             for (size_t r = 1; r < sorted.size(); ++r)
                 if (sorted[r] == sentinel && sorted[r - 1] != sentinel) {
                     sorted[r] = -1;
                     return;
                 }
         }},
        {"the tail unwritten", "past num_tokens_post_padded", [&](auto& sorted, auto&, auto&) { sorted.back() = -1; }},
        {"num_tokens_post_padded one block more", "num_tokens_post_padded",
         [&](auto&, auto&, auto& post) { post[0] += static_cast<int32_t>(s.b); }},
        {"num_tokens_post_padded unpadded", "num_tokens_post_padded", [&](auto&, auto&, auto& post) { post[0] = sentinel; }},
        {"a block of the wrong expert", "expert_ids", [&](auto&, auto& expert_ids, auto&) { expert_ids[0] += 1; }},
        {"an unused block not zeroed", "past the", [&](auto&, auto& expert_ids, auto&) { expert_ids.back() = -1; }},
    };
    for (const auto& b : bad) {
        const auto got = edit(b.change);
        EXPECT_FALSE(got.pass) << b.what;
        EXPECT_EQ(got.kind, "align") << b.what << ": " << got.message;
        EXPECT_GT(got.error, got.tolerance) << b.what;
        EXPECT_NE(got.message.find(b.says), std::string::npos) << b.what << ": " << got.message;
    }
}

TEST(MoeAlignCheck, GroupedChoiceOutsideTheKeptGroupsFailsAndAGroupTieEitherWayPasses) {
    auto task = load();
    ASSERT_TRUE(task);
    const SizeSpec size = task->spec().profiles.at("small").at(2);  // dsv3
    ASSERT_EQ(size.param("groups"), 8);
    const Shape s = shape(size);
    const Case c = task->make_case(size, 2, Trial::nominal);
    const Reference ref = task->reference(size, c);
    const auto ok = task->check(size, c, ref, ref.results);
    ASSERT_TRUE(ok.pass) << ok.message;
    EXPECT_LT(ok.error, ok.tolerance / 50) << ok.message;
    const float* l = c.buffers[0].as<float>();
    const float* bias = c.buffers[1].as<float>();
    const size_t n = s.e / 8;
    auto score = [&](size_t t, size_t i) { return 1 / (1 + std::exp(-static_cast<double>(l[t * s.e + i]))) + bias[i]; };
    // The group limit ignored: a token whose best single score lies in a group the reference did not
    // keep (the V2-vs-V3 pattern plants them), that expert in place of the last choice.
    Routed r = routed(ref);
    bool found = false;
    for (size_t t = 0; t < s.t && !found; ++t) {
        size_t top = 0;
        for (size_t i = 1; i < s.e; ++i)
            if (score(t, i) > score(t, top)) top = i;
        bool kept = false;
        for (size_t j = 0; j < s.k; ++j) kept = kept || static_cast<size_t>(r.ids[t * s.k + j]) / n == top / n;
        if (kept) continue;
        r.ids[t * s.k + s.k - 1] = static_cast<int32_t>(top);
        found = true;
    }
    ASSERT_TRUE(found);
    const auto bad = task->check(size, c, ref, aligned(s, r.w, r.ids));
    EXPECT_FALSE(bad.pass);
    EXPECT_EQ(bad.kind, "topk_ids") << bad.message;
    EXPECT_NE(bad.message.find("group"), std::string::npos) << bad.message;
    // The exact group tie (groups 0 and 1 identical, biases equal): the reference keeps group 0; the
    // same choice made from group 1 instead (experts + n) passes.
    Routed tie = routed(ref);
    size_t swapped = 0;
    for (size_t t = 0; t < s.t; ++t) {
        bool twins = true;
        for (size_t i = 0; i < n; ++i) twins = twins && l[t * s.e + i] == l[t * s.e + n + i];
        bool in0 = false, in1 = false;
        for (size_t j = 0; j < s.k; ++j) {
            in0 = in0 || static_cast<size_t>(tie.ids[t * s.k + j]) / n == 0;
            in1 = in1 || static_cast<size_t>(tie.ids[t * s.k + j]) / n == 1;
        }
        if (!twins || !in0 || in1) continue;
        for (size_t j = 0; j < s.k; ++j)
            if (static_cast<size_t>(tie.ids[t * s.k + j]) / n == 0) tie.ids[t * s.k + j] += static_cast<int32_t>(n);
        ++swapped;
    }
    EXPECT_GT(swapped, 0u) << "no token keeps one of the twin groups at the boundary";
    const auto twin = task->check(size, c, ref, aligned(s, tie.w, tie.ids));
    EXPECT_TRUE(twin.pass) << twin.message;
    // Biased weights (s instead of the sigmoid) are off by the bias: rejected.
    Routed biased = routed(ref);
    const double scale = c.constants.at("routed_scaling_factor");
    for (size_t t = 0; t < s.t; ++t) {
        double sum = 0;
        for (size_t j = 0; j < s.k; ++j) sum += score(t, static_cast<size_t>(biased.ids[t * s.k + j]));
        for (size_t j = 0; j < s.k; ++j)
            biased.w[t * s.k + j] = static_cast<float>(scale * score(t, static_cast<size_t>(biased.ids[t * s.k + j])) / sum);
    }
    EXPECT_FALSE(task->check(size, c, ref, aligned(s, biased.w, biased.ids)).pass);
}

TEST(MoeAlignSpec, FourKernelsBothFamiliesInEveryProfileAndTheBriefNamesNoSize) {
    auto task = load();
    ASSERT_TRUE(task);
    const auto& spec = task->spec();
    EXPECT_EQ(spec.pack, "ml");
    EXPECT_EQ(spec.category, "moe");
    EXPECT_EQ(spec.order, 118);
    EXPECT_EQ(spec.bound, Bound::bandwidth);
    ASSERT_EQ(spec.kernels.size(), 4u);
    EXPECT_EQ(spec.kernels[0].name, "topk_softmax");
    EXPECT_EQ(spec.kernels[1].name, "grouped_topk");
    EXPECT_EQ(spec.kernels[2].name, "moe_align_count");
    EXPECT_EQ(spec.kernels[3].name, "moe_align_scatter");
    for (const char* profile : {"small", "paper", "large"}) {
        const auto& sizes = spec.profiles.at(profile);
        ASSERT_EQ(sizes.size(), 4u) << profile;
        int heldout = 0, softmax = 0, grouped = 0;
        for (const auto& s : sizes) {
            heldout += s.heldout;
            if (!s.heldout) (s.param("groups") ? grouped : softmax) += 1;
            EXPECT_LT(s.param("T"), 65536) << s.label;
            EXPECT_GE(s.param("T"), s.param("block")) << s.label;
            EXPECT_EQ(s.label.rfind("dsv3", 0) == 0, s.param("groups") > 0) << s.label;
        }
        EXPECT_EQ(heldout, 1) << profile;
        EXPECT_GE(softmax, 1) << profile;
        EXPECT_GE(grouped, 1) << profile;
    }
    test::expect_signatures_in_task_files(kTask, spec);
    const std::string brief(task_file(kTask, "brief.md"));
    EXPECT_NE(brief.find("ceil("), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// through kevo on PoCL

class MoeAlignPasses : public ::testing::TestWithParam<test::PassingKernel> {};

TEST_P(MoeAlignPasses, EverySizeAndTrialOnFourSeedsWithMargin50) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    test::expect_ok_on_every_seed(kTask, GetParam(), kSeeds, 4);
}

INSTANTIATE_TEST_SUITE_P(Kernels, MoeAlignPasses,
                         ::testing::Values(test::PassingKernel{"seed.cl", true}, test::PassingKernel{"best.cl", true},
                                           test::PassingKernel{"moe_align_recipe_reversed", false}),
                         test::passing_kernel_name);

struct Wrong {
    std::string stem;
    std::string trial;  // the trial that holds the structure, where the kernel must fail first
    bool grouped;       // the family that is wrong: grouped (dsv3) or softmax sizes
};

void PrintTo(const Wrong& w, std::ostream* os) { *os << w.stem; }

const Wrong kWrong[] = {
    {"moe_align_no_renorm", "nominal", false},
    {"moe_align_always_renorm", "outlier", false},
    {"moe_align_tie_drop", "nominal", false},
    {"moe_align_no_group_limit", "nominal", true},
    {"moe_align_group_max", "nominal", true},
    {"moe_align_biased_weights", "nominal", true},
    {"moe_align_no_bias", "nominal", true},
    {"moe_align_no_scale", "nominal", true},
    {"moe_align_fixed_scale", "outlier", true},
    {"moe_align_pad_full_multiple", "nominal", false},
    {"moe_align_pad_empty", "nominal", false},
    {"moe_align_unpadded_count", "nominal", false},
    {"moe_align_unpadded_offsets", "nominal", false},
    {"moe_align_sentinel_minus1", "nominal", false},
    {"moe_align_no_tail_fill", "nominal", false},
    {"moe_align_expert_ids_tail", "nominal", false},
    {"moe_align_first_block_only", "nominal", false},
    {"moe_align_drops_last_pair", "nominal", false},
    {"moe_align_slightly_wrong", "nominal", false},
};

class MoeAlignWrong : public ::testing::TestWithParam<Wrong> {};

TEST_P(MoeAlignWrong, IsRejectedInTheTrialThatHoldsItOnFourSeeds) {
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
        EXPECT_EQ(last["label"].get<std::string>().rfind("dsv3", 0) == 0, w.grouped) << w.stem << ": " << last.dump();
        EXPECT_GT(failed["error"].get<double>(), failed["tolerance"].get<double>()) << failed.dump();
        for (const auto& size : doc["sizes"])
            for (const auto& t : size["trials"])
                if (&t != &failed) {
                    EXPECT_TRUE(t["pass"].get<bool>()) << w.stem << " seed " << seed << ": " << t.dump();
                }
    }
}

INSTANTIATE_TEST_SUITE_P(Candidates, MoeAlignWrong, ::testing::ValuesIn(kWrong),
                         [](const auto& info) { return info.param.stem; });

}  // namespace
}  // namespace kevo
