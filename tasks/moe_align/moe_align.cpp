// ML pack, moe: moe_align, the routing step in front of a fused MoE layer as vLLM and SGLang serve it:
// top-k gating of the router logits, then moe_align_block_size, which groups the (token, choice)
// pairs by expert into blocks of block_size rows. Two size families pick the gating:
//   topk_softmax  (groups = 0; Qwen3, Qwen1.5-MoE, Mixtral) softmax over the E fp32 logits in fp32,
//                 the k largest probabilities, renormalised to sum 1 when the model does (vLLM's
//                 topk_softmax plus fused_topk's renormalize).
//   grouped_topk  (groups > 0; DeepSeek-V3's noaux_tc) s = sigmoid(logit) + correction_bias chooses:
//                 each group of E / groups experts scores the sum of its two best s, the topk_group
//                 best groups stay, the k best s among their experts are the choice; the weights are
//                 the unbiased sigmoids, renormalised, times routed_scaling_factor (vLLM's grouped_topk).
// Then, over the T k pairs p = t k + j (expert topk_ids[p]), for every expert e in ascending order a
// range of ceil(count_e / B) B rows of sorted_token_ids holding its pairs and then the sentinel T k;
// expert_ids[b] is the expert of block b (0 past the last used block), num_tokens_post_padded the
// rows used; every row past them holds the sentinel (vLLM's wrapper fills the whole buffer with it).
// Four kernels, three launches per size: the family's gating, moe_align_count (one work-group:
// counts, offsets, expert_ids, the sentinel fill, cursors in cumsum) and moe_align_scatter.
//
// The check admits every output a correct production kernel gives:
//   - the order of the k choices of a token is free (vLLM's grouped_topk calls torch.topk with
//     sorted=False), and so is the order of an expert's pairs within its range (vLLM's
//     count_and_sort_expert_tokens_kernel places them by atomicAdd; the anchor's reference sorts
//     them ascending): each range must hold exactly the expert's pairs, then its padding;
//   - ties: the reference breaks equal scores toward the lower expert (group) index, as vLLM's
//     topk_softmax does ("lower indices win"), but any choice among scores within a tolerance of the
//     k-th best is admitted (fp32 exp and sigmoid round differently from kernel to kernel), and the
//     weights are judged against the set the kernel chose. Every trial plants exact ties, near-ties
//     inside the tolerance and near-ties 8x beyond it with the larger score at the higher and at
//     the lower index, exact and near group ties, and a V2-vs-V3 group pattern.
// Bandwidth-bound.
#include <algorithm>
#include <bit>
#include <cassert>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <numeric>
#include <vector>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/checks.hpp"
#include "task/outliers.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

// Selection. A correct fp32 kernel compares its own roundings of the scores: softmax probabilities
// of one row share the denominator, so two of them compare as exp(l_a - m) and exp(l_b - m), each
// within a few ulps (expf 1-2, __expf 2 + 1.17 |x| ulps, the argument l - m rounded: u |l - m|) where
// it is normal in fp32 (|l - m| < 87: at most ~2e-5 apart in all); below FLT_MIN they flush. The
// sigmoid scores s = 1 / (1 + exp(-l)) + b are within ~3e-7 absolute. So a chosen expert a is
// admitted over an unchosen b when p_a >= p_b (1 - 2^-14) - 2^-124 (softmax) or s_a >= s_b - 2^-17
// (sigmoid; 2^-16 for the group scores, sums of two). The planted near-ties are 2^-11 apart (8x
// and 16x beyond): a kernel that compares scores in bf16 (2^-8 apart) fails on them.
constexpr double kSoftmaxTieRel = 0x1.0p-14, kSoftmaxTieAbs = 0x1.0p-124;
constexpr double kScoreTie = 0x1.0p-17, kGroupTie = 0x1.0p-16;
constexpr double kNearTie = 0x1.0p-11;       // planted: logits (softmax: the probabilities' ratio) or scores
constexpr double kGroupNearTie = 0x1.0p-10;  // planted between two groups' scores
// Weights: each within 2^-10 of its exact value (over the set the kernel chose) plus 2^-24 of the
// token's weight sum. fp32 softmax or sigmoid and one division err by ~1e-6; the softmax sum of E
// terms accumulated in any fp32 order errs by (E - 1) u at worst (a sequential sum over 512 experts:
// 8e-6 measured), so every order is >= 100x inside typically and >= 16x at the worst case of 1024
// experts; a missing or wrong renormalisation, scaling factor, or biased weights are off by percents
// (>= 10x beyond), and so are bf16 weights (2^-8).
constexpr double kWeightRel = 0x1.0p-10, kWeightFloor = 0x1.0p-24;
constexpr double kNominalScale = 2.5;  // DeepSeek-V3's routed_scaling_factor

enum Stream : uint64_t {
    logit_stream = 1, bias_stream = 2, constant_stream = 3, spike_stream = 4, hot_stream = 5, hot_token_stream = 6,
    hot2_stream = 7, noise_stream = 8
};

struct Shape {
    size_t t = 0, e = 0, k = 0, g = 0, tg = 0, b = 0;
    bool renorm = false;
    bool grouped() const { return g > 0; }
    size_t pairs() const { return t * k; }
    size_t capacity() const { return t * k + e * (b - 1); }
    size_t blocks() const { return (capacity() + b - 1) / b; }
    size_t group_size() const { return e / g; }
};

Shape shape_of(const SizeSpec& size) {
    Shape s;
    s.t = static_cast<size_t>(size.param("T"));
    s.e = static_cast<size_t>(size.param("E"));
    s.k = static_cast<size_t>(size.param("k"));
    s.g = static_cast<size_t>(size.param("groups"));
    s.tg = static_cast<size_t>(size.param("topk_group"));
    s.b = static_cast<size_t>(size.param("block"));
    s.renorm = size.param("renorm") != 0;
    return s;
}

SizeSpec softmax(const char* model, int64_t t, int64_t e, int64_t k, int64_t block, bool renorm, bool heldout = false) {
    return {fmt::format("{}-T{}-B{}", model, t, block), heldout,
            {{"T", t}, {"E", e}, {"k", k}, {"groups", 0}, {"topk_group", 0}, {"block", block}, {"renorm", renorm ? 1 : 0}}};
}
// DeepSeek-V3: 256 routed experts in 8 groups, 4 groups kept, top-8, normalised.
SizeSpec dsv3(int64_t t, int64_t block, bool heldout = false) {
    return {fmt::format("dsv3-T{}-B{}", t, block), heldout,
            {{"T", t}, {"E", 256}, {"k", 8}, {"groups", 8}, {"topk_group", 4}, {"block", block}, {"renorm", 1}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "moe_align";
    s.regime = "ML moe routing";
    s.pack = "ml";
    s.category = "moe";
    s.order = 118;
    s.bound = Bound::bandwidth;
    s.model = "4 B per logit (+ 4 B per expert of bias, grouped) + 12 B per (token, choice) pair (weight and id "
              "written, id read by the alignment) + 4 B per row of sorted_token_ids' capacity (T k + E (B - 1)) + "
              "4 B per block of expert_ids + 4 B";
    s.tolerance = "topk_ids: a set of k distinct experts no unchosen expert beats beyond the tie tolerance (softmax: "
                  "p_a >= p_b (1 - 2^-14) - 2^-124; grouped: within topk_group groups no unchosen group beats by "
                  "2^-16, s_a >= s_b - 2^-17), any order, any tie-break; topk_weights within 2^-10 relative + "
                  "2^-24 of the token's sum of the exact weights over the chosen set; alignment exact against the "
                  "kernel's own ids (each expert's pairs in any order, then its padding; expert_ids, "
                  "num_tokens_post_padded, the sentinel T k everywhere else); NaN or Inf fails";
    using P = ParamType;
    s.kernels = {
        {"topk_softmax",
         {sig::const_ptr("gating_output", P::f32), sig::ptr("topk_weights", P::f32), sig::ptr("topk_ids", P::i32),
          sig::value("tokens", P::u32), sig::value("experts", P::u32), sig::value("topk", P::u32),
          sig::value("renormalize", P::u32)},
         2, Dim3{256, 1, 1}},
        {"grouped_topk",
         {sig::const_ptr("gating_output", P::f32), sig::const_ptr("correction_bias", P::f32),
          sig::ptr("topk_weights", P::f32), sig::ptr("topk_ids", P::i32), sig::value("tokens", P::u32),
          sig::value("experts", P::u32), sig::value("topk", P::u32), sig::value("n_group", P::u32),
          sig::value("topk_group", P::u32), sig::value("renormalize", P::u32),
          sig::value("routed_scaling_factor", P::f32)},
         2, Dim3{256, 1, 1}},
        {"moe_align_count",
         {sig::const_ptr("topk_ids", P::i32), sig::ptr("sorted_token_ids", P::i32), sig::ptr("expert_ids", P::i32),
          sig::ptr("num_tokens_post_padded", P::i32), sig::ptr("cumsum", P::i32), sig::value("pairs", P::u32),
          sig::value("experts", P::u32), sig::value("block_size", P::u32), sig::value("capacity", P::u32)},
         1, Dim3{256, 1, 1}},
        {"moe_align_scatter",
         {sig::const_ptr("topk_ids", P::i32), sig::ptr("sorted_token_ids", P::i32), sig::ptr("cumsum", P::i32),
          sig::value("pairs", P::u32), sig::value("experts", P::u32)},
         1, Dim3{256, 1, 1}},
    };
    // (E, k, renormalised): Qwen3-235B-A22B / 30B-A3B (128, 8, yes), Qwen1.5-MoE-A2.7B (60, 4, no),
    // Mixtral-8x7B (8, 2, yes: its softmax over the top-2 logits), Qwen3-Next-80B-A3B (512, 10, yes);
    // DeepSeek-V3 grouped. block: vLLM's fused_moe configs take BLOCK_SIZE_M 16 for decode batches, 64
    // or 128 for prefill (Atrex's traced calls: 128). small: PoCL in well under a second; every size
    // has T >= block (the outlier trial routes exactly a multiple of block pairs to one expert).
    // paper: decode batches and Atrex's most-called prefill (T 8192); large: prefill chunks of 45-61k
    // tokens (T below 65536: the gating's launch domain has the tokens along y).
    s.profiles["small"] = {softmax("qwen3", 37, 128, 8, 16, true), softmax("qwen15", 200, 60, 4, 32, false), dsv3(80, 64),
                           softmax("mixtral", 75, 8, 2, 16, true, true)};
    s.profiles["paper"] = {softmax("qwen3", 256, 128, 8, 16, true), dsv3(128, 16), softmax("qwen3", 8192, 128, 8, 128, true),
                           dsv3(2048, 64, true)};
    s.profiles["large"] = {softmax("qwen3next", 49152, 512, 10, 128, true), dsv3(61440, 128),
                           softmax("qwen3", 61440, 128, 8, 64, true), dsv3(45056, 64, true)};
    return s;
}

// ---------------------------------------------------------------------------------------------
// scores in double

double sigmoid(double l) { return 1.0 / (1.0 + std::exp(-l)); }
double logit_of(double q) { return std::log(q / (1.0 - q)); }

// Softmax probabilities of one row, exact in double from the stored fp32 logits.
void softmax_row(const float* l, size_t e, double* p) {
    double m = -std::numeric_limits<double>::infinity();
    for (size_t i = 0; i < e; ++i) m = std::max(m, static_cast<double>(l[i]));
    double sum = 0;
    for (size_t i = 0; i < e; ++i) sum += p[i] = std::exp(static_cast<double>(l[i]) - m);
    for (size_t i = 0; i < e; ++i) p[i] /= sum;
}

// Biased scores s (choice) and sigmoids w (weights) of one row.
void sigmoid_row(const float* l, const float* bias, size_t e, double* s, double* w) {
    for (size_t i = 0; i < e; ++i) {
        w[i] = sigmoid(static_cast<double>(l[i]));
        s[i] = w[i] + static_cast<double>(bias[i]);
    }
}

// The sum of the two best scores of each group.
void group_scores(const double* s, const Shape& sh, double* gs) {
    const size_t n = sh.group_size();
    for (size_t g = 0; g < sh.g; ++g) {
        double a = -std::numeric_limits<double>::infinity(), b = a;
        for (size_t i = g * n; i < (g + 1) * n; ++i) {
            if (s[i] > a) b = a, a = s[i];
            else if (s[i] > b) b = s[i];
        }
        gs[g] = a + b;
    }
}

// Indices of v[0..n) by value descending, ties to the lower index (the reference's rule), the first
// `count` of them.
std::vector<size_t> best(const double* v, size_t n, size_t count) {
    std::vector<size_t> idx(n);
    std::iota(idx.begin(), idx.end(), size_t{0});
    const auto by = [v](size_t a, size_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); };
    count = std::min(count, n);
    std::partial_sort(idx.begin(), idx.begin() + static_cast<std::ptrdiff_t>(count), idx.end(), by);
    idx.resize(count);
    return idx;
}

// The reference's choice of one token: experts in descending order (ties to the lower index).
// `select` holds the choice scores; for the grouped family `allowed` is filled with the kept groups.
std::vector<size_t> choose(const double* select, const Shape& sh, std::vector<double>& masked, uint32_t* group_mask = nullptr) {
    if (!sh.grouped()) return best(select, sh.e, sh.k);
    std::vector<double> gs(sh.g);
    group_scores(select, sh, gs.data());
    uint32_t mask = 0;
    for (size_t g : best(gs.data(), sh.g, sh.tg)) mask |= 1u << g;
    masked.assign(select, select + sh.e);
    for (size_t i = 0; i < sh.e; ++i)
        if (!(mask >> (i / sh.group_size()) & 1u)) masked[i] = -std::numeric_limits<double>::infinity();
    if (group_mask) *group_mask = mask;
    return best(masked.data(), sh.e, sh.k);
}

// ---------------------------------------------------------------------------------------------
// inputs

// Indices of a row by value descending (ties to the lower index), leaving out `skip`.
std::vector<size_t> ranked(const double* v, size_t n, int64_t skip) {
    std::vector<size_t> idx;
    idx.reserve(n);
    for (size_t i = 0; i < n; ++i)
        if (static_cast<int64_t>(i) != skip) idx.push_back(i);
    std::sort(idx.begin(), idx.end(), [v](size_t a, size_t b) { return v[a] > v[b] || (v[a] == v[b] && a < b); });
    return idx;
}

// The planted tie of a token, by (t + 1) mod 8. Softmax family (logits): 1 the k-th and (k+1)-th
// equal; 2 two equal inside the top k; 3 three equal across the boundary (k-1-th to k+1-th); 4 the
// (k+1)-th one ulp above the k-th (inside the tolerance: either is admitted); 5 and 6 the two 2^-11
// apart (beyond it), the larger at the higher index (5) or the lower (6). Grouped family: 1 groups 0
// and 1 identical (their biases are equal) at the topk_group boundary; 2 and 3 the two 2^-10 apart,
// group 1 (2) or group 0 (3) larger; 4-6 as the softmax 4-6 on the biased scores of the kept groups'
// experts (4: 2^-30 apart); 7 the V2-vs-V3 pattern (the best single expert's group loses on its top-2
// sum). The hot expert (exactly `hot` chosen by the tokens it is planted in) is never touched.
int pattern_of(size_t t) { return static_cast<int>((t + 1) % 8); }

void plant_softmax_tie(float* row, const Shape& sh, int pattern, int64_t hot, bool hot_chosen) {
    if (pattern < 1 || pattern > 6) return;
    std::vector<double> v(row, row + sh.e);
    const auto r = ranked(v.data(), sh.e, hot);
    const size_t kk = sh.k - (hot_chosen ? 1 : 0);  // the choices left to the other experts
    if (kk < 1 || r.size() < kk + 2) return;
    const size_t x = r[kk - 1], y = r[kk];
    const float value = row[x];
    switch (pattern) {
        case 1: row[y] = value; break;
        case 2:
            if (kk >= 3) row[r[2]] = row[r[1]];
            else if (kk == 2) row[r[1]] = row[r[0]];
            break;
        case 3:
            if (kk >= 2) row[r[kk - 1]] = row[r[kk]] = row[r[kk - 2]];
            break;
        case 4: row[y] = std::nextafter(value, std::numeric_limits<float>::infinity()); break;
        default: {  // 5, 6
            const float lower = static_cast<float>(static_cast<double>(value) - kNearTie);
            if (!(row[r[kk + 1]] < lower)) return;  // the next one too close: leave the row
            const size_t hi = std::max(x, y), lo = std::min(x, y);
            row[pattern == 5 ? hi : lo] = value;
            row[pattern == 5 ? lo : hi] = lower;
        }
    }
}

// Sets l so that sigmoid(l) + bias = target, where that is possible (returns false otherwise).
bool solve_score(float& l, double target, float bias) {
    const double q = target - static_cast<double>(bias);
    if (!(q > 1e-6 && q < 1 - 1e-6)) return false;
    l = static_cast<float>(logit_of(q));
    return true;
}

void plant_grouped_tie(float* row, const float* bias, const Shape& sh, int pattern, int64_t hot, bool hot_chosen,
                       uint64_t seed, size_t t) {
    const size_t n = sh.group_size();
    std::vector<double> s(sh.e), w(sh.e), gs(sh.g), masked;
    sigmoid_row(row, bias, sh.e, s.data(), w.data());
    if (pattern >= 1 && pattern <= 3) {
        // Groups 0 and 1 (equal biases) made identical and shifted to sit between the (tg-1)-th and
        // tg-th best of the other groups.
        if (sh.g < 3 || sh.tg < 1 || sh.tg >= sh.g - 1) return;
        if (hot >= 0 && static_cast<size_t>(hot) < 2 * n) return;
        for (size_t i = 0; i < n; ++i) row[n + i] = row[i];
        group_scores(s.data(), sh, gs.data());
        std::vector<double> others(gs.begin() + 2, gs.end());
        std::sort(others.begin(), others.end(), std::greater<double>());
        const double upper = sh.tg >= 2 ? others[sh.tg - 2] : others[0] + 0.2, lower = others[sh.tg - 1];
        const double target = 0.5 * (upper + lower), half_gap = 0.5 * (upper - lower);
        auto g0 = [&](double c) {
            double a = -1e300, b = -1e300;
            for (size_t i = 0; i < n; ++i) {
                const double v = sigmoid(static_cast<double>(static_cast<float>(row[i] + c))) + bias[i];
                if (v > a) b = a, a = v;
                else if (v > b) b = v;
            }
            return a + b;
        };
        double lo = -40, hi = 40;
        if (!(g0(lo) < target && g0(hi) > target)) return;
        for (int it = 0; it < 100; ++it) {
            const double mid = 0.5 * (lo + hi);
            (g0(mid) < target ? lo : hi) = mid;
        }
        const auto c = static_cast<float>(0.5 * (lo + hi));
        for (size_t i = 0; i < n; ++i) row[i] = row[n + i] = row[i] + c;
        if (pattern == 1 || half_gap <= 4 * kGroupNearTie) return;
        // One group's best expert raised by 2^-10 in score: group 1 (2, the higher index) or group 0 (3).
        const size_t g = pattern == 2 ? 1 : 0;
        size_t top = g * n;
        for (size_t i = g * n; i < (g + 1) * n; ++i)
            if (row[i] > row[top]) top = i;
        float l = row[top];
        const double score = sigmoid(static_cast<double>(row[top])) + bias[top];
        if (solve_score(l, score + kGroupNearTie, bias[top])) row[top] = l;
        return;
    }
    if (pattern >= 4 && pattern <= 6) {
        uint32_t mask = 0;
        choose(s.data(), sh, masked, &mask);
        for (size_t i = 0; i < sh.e; ++i)
            if (static_cast<int64_t>(i) == hot) masked[i] = -std::numeric_limits<double>::infinity();
        const auto r = ranked(masked.data(), sh.e, hot);
        const size_t kk = sh.k - (hot_chosen ? 1 : 0);
        if (kk < 1 || r.size() < kk + 2 || !std::isfinite(masked[r[kk + 1]])) return;
        const size_t x = r[kk - 1], y = r[kk];
        const double v = s[x];
        if (pattern == 4) {
            float l = row[y];
            if (solve_score(l, v + 0x1.0p-30, bias[y])) row[y] = l;
            return;
        }
        if (!(s[r[kk + 1]] < v - 2 * kNearTie)) return;
        const size_t hi = std::max(x, y), lo = std::min(x, y);
        const size_t larger = pattern == 5 ? hi : lo, smaller = pattern == 5 ? lo : hi;
        float la = row[larger], lb = row[smaller];
        if (solve_score(la, v, bias[larger]) && solve_score(lb, v - kNearTie, bias[smaller])) row[larger] = la, row[smaller] = lb;
        return;
    }
    if (pattern == 7) {
        // Group 2 holds the best single expert (sigmoid 0.999) and nothing else; group 3 two at 0.6;
        // topk_group - 1 strong groups of 0.75s; the rest weak (0.02). Top-2 sums keep the strong groups
        // and group 3; the groups' maxima would keep group 2 instead, and no group limit takes its expert.
        if (sh.g < 4 || sh.tg < 2 || sh.tg + 2 > sh.g || n < 2) return;
        auto noise = [&](size_t i) { return 0.05 * rng::normal(seed, noise_stream, t * sh.e + i); };
        std::vector<size_t> rest;
        for (size_t g = 0; g < sh.g; ++g)
            if (g != 2 && g != 3) rest.push_back(g);
        for (size_t g = 0; g < sh.g; ++g) {
            const bool strong = std::find(rest.begin(), rest.begin() + static_cast<std::ptrdiff_t>(sh.tg - 1), g) !=
                                rest.begin() + static_cast<std::ptrdiff_t>(sh.tg - 1);
            for (size_t j = 0; j < n; ++j) {
                const size_t i = g * n + j;
                double l = logit_of(0.02) + noise(i);
                if (strong) l = logit_of(0.75) + noise(i);
                if (g == 2 && j == 0) l = logit_of(0.999);
                if (g == 3 && j < 2) l = logit_of(0.6) + 0.1 * noise(i);
                row[i] = static_cast<float>(l);
            }
        }
    }
}

// ---------------------------------------------------------------------------------------------
// buffers

enum SoftmaxBuf { s_logits, s_weights, s_ids, s_sorted, s_expert_ids, s_post, s_cumsum };
enum GroupedBuf { g_logits, g_bias, g_weights, g_ids, g_sorted, g_expert_ids, g_post, g_cumsum };

struct Layout {
    int logits, bias, weights, ids, sorted, expert_ids, post, cumsum;
};
Layout layout_of(const Shape& s) {
    if (s.grouped()) return {g_logits, g_bias, g_weights, g_ids, g_sorted, g_expert_ids, g_post, g_cumsum};
    return {s_logits, -1, s_weights, s_ids, s_sorted, s_expert_ids, s_post, s_cumsum};
}

HostBuffer f32_buffer(std::string name, BufferRole role, const std::vector<float>& v) {
    auto b = make_buffer<float>(std::move(name), role, ElemType::f32, v.size());
    std::copy(v.begin(), v.end(), b.as<float>());
    return b;
}

template <class T>
std::vector<std::byte> bytes_of(const std::vector<T>& v) {
    std::vector<std::byte> out(v.size() * sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), v.data(), out.size());
    return out;
}

template <class T>
std::vector<T> values_of(const std::vector<std::byte>& bytes) {
    std::vector<T> out(bytes.size() / sizeof(T));
    if (!out.empty()) std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
    return out;
}

// The alignment of a routing: per expert its count, padded count and first row.
struct Alignment {
    std::vector<size_t> count, padded, offset;
    size_t total = 0;
};
Alignment align_of(const std::vector<int32_t>& ids, const Shape& s) {
    Alignment a;
    a.count.assign(s.e, 0);
    for (int32_t id : ids) a.count[static_cast<size_t>(id)] += 1;
    a.padded.resize(s.e);
    a.offset.resize(s.e);
    for (size_t e = 0; e < s.e; ++e) {
        a.padded[e] = (a.count[e] + s.b - 1) / s.b * s.b;
        a.offset[e] = a.total;
        a.total += a.padded[e];
    }
    return a;
}

class MoeAlignTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Shape s = shape_of(size);
        assert(s.t >= 1 && s.t < 65536 && s.e >= 2 && s.e <= 1024 && s.k >= 1 && s.k <= 16 && s.k < s.e);
        assert(s.b >= 1 && s.b <= 1024 && (s.b & (s.b - 1)) == 0);
        assert(!s.grouped() || (s.g <= 16 && s.e % s.g == 0 && s.group_size() >= 2 && s.tg >= 1 && s.tg <= s.g &&
                                s.k <= s.tg * s.group_size()));
        std::vector<float> logits(s.t * s.e), bias;
        rng::fill_normal(logits, seed, logit_stream, 0.0f, s.grouped() ? 1.5f : 1.0f);
        if (s.grouped()) {
            bias.resize(s.e);
            rng::fill_normal(bias, seed, bias_stream, 0.0f, 0.02f);
            for (size_t i = 0; i < s.group_size(); ++i) bias[s.group_size() + i] = bias[i];  // groups 0 and 1 twins
        }
        bool renorm = s.renorm;
        double scale = kNominalScale;
        if (trial == Trial::outlier) {
            // The model's other choice, and (grouped) a scaling factor away from DeepSeek-V3's 2.5.
            renorm = !renorm;
            scale = draw_outlier(rng::uniform(seed, constant_stream, 0), 1.0, 4.0, kNominalScale, 0.25);
            // Spikes (a few logits of tens: sigmoids saturate to exact 0 and 1 in fp32, softmax rows
            // with one dominant expert and the others far below FLT_MIN).
            outliers::plant_spikes(logits, {0.01, 30, 0}, seed, spike_stream);
            if (!s.grouped())
                for (size_t t = 0; t < s.t; ++t) {
                    float* row = &logits[t * s.e];
                    if (t % 16 == 5 || t % 16 == 13)  // large logits: exp without the max overflows
                        for (size_t i = 0; i < s.e; ++i) row[i] += t % 16 == 5 ? 90.0f : -90.0f;
                    if (pattern_of(t) == 7)  // every expert tied
                        for (size_t i = 0; i < s.e; ++i) row[i] = 0.25f;
                }
        }
        // The hot expert: chosen by exactly 2 * block (or block) tokens, so its range is whole blocks
        // with no padding, and by no other token. The outlier trial adds a second hot expert, chosen by
        // ~90% of the tokens (many blocks of one expert). Grouped: the hot expert lies outside groups 0-3.
        const size_t lo_expert = s.grouped() && s.g >= 6 ? 4 * s.group_size() : 0;
        const auto hot = static_cast<int64_t>(lo_expert + rng::bits(seed, hot_stream, 0) % (s.e - lo_expert));
        std::vector<size_t> eligible;
        for (size_t t = 0; t < s.t; ++t)
            if (!s.grouped() || pattern_of(t) != 7) eligible.push_back(t);
        const size_t hot_count = eligible.size() >= 2 * s.b ? 2 * s.b : eligible.size() >= s.b ? s.b : 0;
        std::vector<uint8_t> hot_chosen(s.t, 0);
        for (size_t i : outliers::pick_distinct(eligible.size(), hot_count, seed, hot_token_stream)) hot_chosen[eligible[i]] = 1;
        int64_t hot2 = -1;
        if (trial == Trial::outlier) {
            hot2 = static_cast<int64_t>(rng::bits(seed, hot2_stream, 0) % s.e);
            if (hot2 == hot) hot2 = (hot2 + 1) % static_cast<int64_t>(s.e);
        }
        parallel_for(s.t, [&](size_t begin, size_t end) {
            for (size_t t = begin; t < end; ++t) {
                float* row = &logits[t * s.e];
                float mx = row[0], mn = row[0];
                for (size_t i = 1; i < s.e; ++i) mx = std::max(mx, row[i]), mn = std::min(mn, row[i]);
                if (hot2 >= 0 && rng::uniform(seed, hot2_stream, t + 1) < 0.9)
                    row[hot2] = s.grouped() ? 9.0f : mx + 0.5f;
                if (s.grouped()) row[hot] = hot_chosen[t] ? 12.0f : -12.0f;
                else row[hot] = hot_chosen[t] ? mx + 1.0f : mn - 1.0f;
                if (s.grouped())
                    plant_grouped_tie(row, bias.data(), s, pattern_of(t), hot, hot_chosen[t] != 0, seed, t);
                else
                    plant_softmax_tie(row, s, pattern_of(t), hot, hot_chosen[t] != 0);
            }
        }, 256);

        Case c;
        const Layout at = layout_of(s);
        c.buffers.push_back(f32_buffer("gating_output", BufferRole::input, logits));
        if (s.grouped()) c.buffers.push_back(f32_buffer("correction_bias", BufferRole::input, bias));
        c.buffers.push_back(make_buffer<float>("topk_weights", BufferRole::output, ElemType::f32, s.pairs()));
        c.buffers.push_back(make_buffer<int32_t>("topk_ids", BufferRole::output, ElemType::i32, s.pairs()));
        c.buffers.push_back(make_buffer<int32_t>("sorted_token_ids", BufferRole::output, ElemType::i32, s.capacity()));
        c.buffers.push_back(make_buffer<int32_t>("expert_ids", BufferRole::output, ElemType::i32, s.blocks()));
        c.buffers.push_back(make_buffer<int32_t>("num_tokens_post_padded", BufferRole::output, ElemType::i32, 1));
        c.buffers.push_back(make_buffer<int32_t>("cumsum", BufferRole::state, ElemType::i32, s.e + 1));
        const auto u = [](size_t v) { return ArgRef::u(static_cast<uint32_t>(v)); };
        const auto b = [](int i) { return ArgRef::buf(i); };
        if (s.grouped())
            c.launches.push_back({"grouped_topk",
                                  {b(at.logits), b(at.bias), b(at.weights), b(at.ids), u(s.t), u(s.e), u(s.k), u(s.g),
                                   u(s.tg), u(renorm ? 1 : 0), ArgRef::f(static_cast<float>(scale))},
                                  Dim3{1, s.t, 1}});
        else
            c.launches.push_back({"topk_softmax",
                                  {b(at.logits), b(at.weights), b(at.ids), u(s.t), u(s.e), u(s.k), u(renorm ? 1 : 0)},
                                  Dim3{1, s.t, 1}});
        c.launches.push_back({"moe_align_count",
                              {b(at.ids), b(at.sorted), b(at.expert_ids), b(at.post), b(at.cumsum), u(s.pairs()), u(s.e),
                               u(s.b), u(s.capacity())},
                              Dim3{1, 1, 1}});
        c.launches.push_back({"moe_align_scatter", {b(at.ids), b(at.sorted), b(at.cumsum), u(s.pairs()), u(s.e)},
                              Dim3{s.pairs(), 1, 1}});
        c.results = {at.weights, at.ids, at.sorted, at.expert_ids, at.post};
        c.constants = {{"renormalize", renorm ? 1.0 : 0.0}, {"block_size", static_cast<double>(s.b)},
                       {"capacity", static_cast<double>(s.capacity())}, {"hot_expert", static_cast<double>(hot)},
                       {"hot_expert_pairs", static_cast<double>(hot_count)}};
        if (s.grouped()) c.constants["routed_scaling_factor"] = static_cast<double>(static_cast<float>(scale));
        const double pairs = static_cast<double>(s.pairs());
        c.work = 4.0 * static_cast<double>(s.t * s.e) + (s.grouped() ? 4.0 * static_cast<double>(s.e) : 0.0) +
                 12.0 * pairs + 4.0 * static_cast<double>(s.capacity()) + 4.0 * static_cast<double>(s.blocks()) + 4.0;
        c.working_set_bytes = c.work;
        return c;
    }

    HostFootprint host_footprint(const SizeSpec& size) const override {
        const Shape s = shape_of(size);
        const uint64_t case_bytes = 4ull * s.t * s.e + 4ull * s.e + 8ull * s.pairs() + 4ull * s.capacity() + 4ull * s.blocks();
        return {case_bytes, case_bytes + 8ull * s.pairs() + 4ull * s.capacity()};
    }

    // results: topk_weights (descending, ties to the lower index), topk_ids, sorted_token_ids (each
    // expert's pairs ascending), expert_ids, num_tokens_post_padded.
    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Shape s = shape_of(size);
        const Layout at = layout_of(s);
        const bool renorm = c.constants.at("renormalize") != 0;
        const double scale = s.grouped() ? c.constants.at("routed_scaling_factor") : 1.0;
        const float* logits = c.buffers[at.logits].as<float>();
        const float* bias = s.grouped() ? c.buffers[at.bias].as<float>() : nullptr;
        std::vector<float> weights(s.pairs());
        std::vector<int32_t> ids(s.pairs());
        parallel_for(s.t, [&](size_t begin, size_t end) {
            std::vector<double> sel(s.e), w(s.e), masked;
            for (size_t t = begin; t < end; ++t) {
                const float* row = logits + t * s.e;
                if (s.grouped()) sigmoid_row(row, bias, s.e, sel.data(), w.data());
                else softmax_row(row, s.e, sel.data()), w = sel;
                const auto chosen = choose(sel.data(), s, masked);
                double sum = 0;
                for (size_t i : chosen) sum += w[i];
                for (size_t j = 0; j < s.k; ++j) {
                    ids[t * s.k + j] = static_cast<int32_t>(chosen[j]);
                    weights[t * s.k + j] = static_cast<float>((renorm ? w[chosen[j]] / sum : w[chosen[j]]) * scale);
                }
            }
        }, 64);
        const Alignment a = align_of(ids, s);
        std::vector<int32_t> sorted(s.capacity(), static_cast<int32_t>(s.pairs())), expert_ids(s.blocks(), 0);
        std::vector<size_t> cursor = a.offset;
        for (size_t p = 0; p < s.pairs(); ++p) sorted[cursor[static_cast<size_t>(ids[p])]++] = static_cast<int32_t>(p);
        for (size_t e = 0; e < s.e; ++e)
            for (size_t r = a.offset[e]; r < a.offset[e] + a.padded[e]; r += s.b) expert_ids[r / s.b] = static_cast<int32_t>(e);
        const std::vector<int32_t> post = {static_cast<int32_t>(a.total)};
        return Reference{{to_bytes(weights), bytes_of(ids), bytes_of(sorted), bytes_of(expert_ids), bytes_of(post)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != 5 || ref.results.size() != 5) return failure("size", 1, "the run returned no output for the five buffers");
        const Shape s = shape_of(size);
        const auto weights = values_of<float>(outputs[0]);
        const auto ids = values_of<int32_t>(outputs[1]);
        const auto sorted = values_of<int32_t>(outputs[2]);
        const auto expert_ids = values_of<int32_t>(outputs[3]);
        const auto post = values_of<int32_t>(outputs[4]);
        if (weights.size() != s.pairs() || ids.size() != s.pairs() || sorted.size() != s.capacity() ||
            expert_ids.size() != s.blocks() || post.size() != 1)
            return failure("size", 1, "an output has the wrong length");
        CheckResult routed = check_routing(s, c, ref, weights, ids);
        if (!routed.pass) return routed;
        CheckResult aligned = check_alignment(s, ids, sorted, expert_ids, post[0]);
        if (!aligned.pass) return aligned;
        routed.message += "; " + aligned.message;
        return routed;
    }

private:
    static CheckResult failure(std::string kind, double error, std::string message, int64_t where = -1) {
        CheckResult r;
        r.kind = std::move(kind);
        r.error = error;
        r.tolerance = 0;
        r.worst_index = where;
        r.message = std::move(message);
        return r;
    }

    // The gating: every token's k ids a valid choice, every weight within its tolerance.
    static CheckResult check_routing(const Shape& s, const Case& c, const Reference& ref, const std::vector<float>& weights,
                                     const std::vector<int32_t>& ids) {
        const Layout at = layout_of(s);
        const bool renorm = c.constants.at("renormalize") != 0;
        const double scale = s.grouped() ? c.constants.at("routed_scaling_factor") : 1.0;
        const float* logits = c.buffers[at.logits].as<float>();
        const float* bias = s.grouped() ? c.buffers[at.bias].as<float>() : nullptr;
        const auto ref_ids = values_of<int32_t>(ref.results[1]);
        // Per token: the first problem found (empty: none), the worst weight's error and tolerance.
        std::vector<std::string> problem(s.t);
        std::vector<uint8_t> nan(s.t, 0);
        std::vector<double> err(s.t, 0), tol(s.t, 1);
        std::vector<size_t> worst_slot(s.t, 0);
        parallel_for(s.t, [&](size_t begin, size_t end) {
            std::vector<double> sel(s.e), w(s.e), masked;
            std::vector<uint8_t> in(s.e);
            for (size_t t = begin; t < end; ++t) {
                const int32_t* got = &ids[t * s.k];
                std::fill(in.begin(), in.end(), 0);
                bool ok = true;
                for (size_t j = 0; j < s.k && ok; ++j) {
                    if (got[j] < 0 || static_cast<size_t>(got[j]) >= s.e) {
                        problem[t] = fmt::format("slot {} holds expert {}, outside [0, {})", j, got[j], s.e);
                        ok = false;
                    } else if (in[static_cast<size_t>(got[j])]) {
                        problem[t] = fmt::format("expert {} is chosen twice (slot {})", got[j], j);
                        ok = false;
                    } else {
                        in[static_cast<size_t>(got[j])] = 1;
                    }
                }
                if (!ok) continue;
                const float* row = logits + t * s.e;
                if (s.grouped()) sigmoid_row(row, bias, s.e, sel.data(), w.data());
                else softmax_row(row, s.e, sel.data()), w = sel;
                bool same = true;
                for (size_t j = 0; j < s.k; ++j) same = same && in[static_cast<size_t>(ref_ids[t * s.k + j])];
                if (!same) {
                    problem[t] = s.grouped() ? grouped_choice(s, sel.data(), in) : softmax_choice(s, sel.data(), in);
                    if (!problem[t].empty()) continue;
                }
                double sum = 0, abs_sum = 0;
                for (size_t j = 0; j < s.k; ++j) sum += w[static_cast<size_t>(got[j])];
                for (size_t j = 0; j < s.k; ++j) {
                    const double want = (renorm ? w[static_cast<size_t>(got[j])] / sum : w[static_cast<size_t>(got[j])]) * scale;
                    abs_sum += std::fabs(want);
                }
                double worst = -1;
                for (size_t j = 0; j < s.k; ++j) {
                    const double want = (renorm ? w[static_cast<size_t>(got[j])] / sum : w[static_cast<size_t>(got[j])]) * scale;
                    const float g = weights[t * s.k + j];
                    if (!std::isfinite(g)) {
                        nan[t] = 1;
                        problem[t] = fmt::format("the weight of slot {} (expert {}) is {}", j, got[j], g);
                        break;
                    }
                    const double e = std::fabs(static_cast<double>(g) - want), tl = kWeightRel * std::fabs(want) + kWeightFloor * abs_sum;
                    if (e / tl > worst) worst = e / tl, err[t] = e, tol[t] = tl, worst_slot[t] = j;
                }
                if (!problem[t].empty()) continue;
                if (err[t] > tol[t]) {
                    const size_t j = worst_slot[t];
                    const double want = (renorm ? w[static_cast<size_t>(got[j])] / sum : w[static_cast<size_t>(got[j])]) * scale;
                    problem[t] = fmt::format("the weight of slot {} (expert {}) is {:.9g}, want {:.9g} ({}; {}), off by {} "
                                             "against a tolerance of {}",
                                             j, got[j], weights[t * s.k + j], want,
                                             renorm ? "renormalised over the chosen experts" : "not renormalised",
                                             s.grouped() ? fmt::format("routed_scaling_factor {:.6g}", scale) : "softmax",
                                             short_sci(err[t]), short_sci(tol[t]));
                }
            }
        }, 64);
        // Reported in this order: a wrong choice, a non-finite weight, weights beyond their tolerance.
        size_t chosen_bad = 0, nan_bad = 0, weight_bad = 0, first_chosen = s.t, first_nan = s.t;
        for (size_t t = 0; t < s.t; ++t) {
            if (problem[t].empty()) continue;
            if (nan[t]) nan_bad++, first_nan = std::min(first_nan, t);
            else if (err[t] > tol[t]) weight_bad++;
            else chosen_bad++, first_chosen = std::min(first_chosen, t);
        }
        if (chosen_bad || nan_bad) {
            const bool chosen = chosen_bad > 0;
            const size_t t = chosen ? first_chosen : first_nan;
            CheckResult r = failure(chosen ? "topk_ids" : "nan", static_cast<double>(chosen ? chosen_bad : nan_bad),
                                    fmt::format("{}: {} of {} tokens wrong; the first, token {}: {}",
                                                chosen ? "topk_ids" : "topk_weights", chosen ? chosen_bad : nan_bad, s.t, t,
                                                problem[t]),
                                    static_cast<int64_t>(t * s.k));
            return r;
        }
        if (weight_bad) {
            size_t worst = 0;
            for (size_t t = 0; t < s.t; ++t)
                if (err[t] / tol[t] > err[worst] / tol[worst]) worst = t;
            CheckResult r;
            r.kind = "topk_weights";
            r.error = err[worst], r.tolerance = tol[worst];
            r.worst_index = static_cast<int64_t>(worst * s.k + worst_slot[worst]);
            r.message = fmt::format("topk_weights: {} of {} tokens off; the worst, token {}: {}", weight_bad, s.t, worst,
                                    problem[worst]);
            return r;
        }
        size_t worst = 0;
        for (size_t t = 0; t < s.t; ++t)
            if (err[t] / tol[t] > err[worst] / tol[worst]) worst = t;
        CheckResult r;
        r.pass = true;
        r.kind = "topk_weights";
        r.error = err[worst], r.tolerance = tol[worst];
        r.worst_index = static_cast<int64_t>(worst * s.k + worst_slot[worst]);
        r.message = fmt::format("topk_ids a valid choice for all {} tokens; topk_weights worst {} against {} (token {})", s.t,
                                short_sci(err[worst]), short_sci(tol[worst]), worst);
        return r;
    }

    // Empty when the chosen set (in) is a valid top-k of the probabilities p, else why not.
    static std::string softmax_choice(const Shape& s, const double* p, const std::vector<uint8_t>& in) {
        size_t low = s.e, high = s.e;
        for (size_t i = 0; i < s.e; ++i) {
            if (in[i] && (low == s.e || p[i] < p[low])) low = i;
            if (!in[i] && (high == s.e || p[i] > p[high])) high = i;
        }
        if (p[low] >= p[high] * (1 - kSoftmaxTieRel) - kSoftmaxTieAbs) return {};
        return fmt::format("expert {} (probability {:.9g}) is chosen and expert {} ({:.9g}, larger by {} relative) is not",
                           low, p[low], high, p[high], short_sci(p[high] / p[low] - 1));
    }

    // Empty when the chosen set is a valid grouped choice for some admissible set of topk_group
    // groups, else why not.
    static std::string grouped_choice(const Shape& s, const double* sc, const std::vector<uint8_t>& in) {
        const size_t n = s.group_size();
        std::vector<double> gs(s.g);
        group_scores(sc, s, gs.data());
        uint32_t used = 0;
        for (size_t i = 0; i < s.e; ++i)
            if (in[i]) used |= 1u << (i / n);
        const auto kept = best(gs.data(), s.g, s.tg);
        uint32_t ref_mask = 0;
        for (size_t g : kept) ref_mask |= 1u << g;
        if (static_cast<size_t>(std::popcount(used)) > s.tg)
            return fmt::format("its experts lie in {} groups, more than topk_group = {} (the kept groups: {})",
                               std::popcount(used), s.tg, mask_text(ref_mask, s.g));
        double low = std::numeric_limits<double>::infinity();
        for (size_t i = 0; i < s.e; ++i)
            if (in[i]) low = std::min(low, sc[i]);
        // Every admissible set of groups holding the used ones.
        bool groups_ok = false;
        std::string expert_problem;
        for (uint32_t mask = 0; mask < (1u << s.g); ++mask) {
            if (static_cast<size_t>(std::popcount(mask)) != s.tg || (mask & used) != used) continue;
            double in_min = std::numeric_limits<double>::infinity(), out_max = -in_min;
            for (size_t g = 0; g < s.g; ++g) {
                if (mask >> g & 1u) in_min = std::min(in_min, gs[g]);
                else out_max = std::max(out_max, gs[g]);
            }
            if (in_min < out_max - kGroupTie) continue;
            groups_ok = true;
            size_t high = s.e;
            for (size_t i = 0; i < s.e; ++i)
                if (!in[i] && (mask >> (i / n) & 1u) && (high == s.e || sc[i] > sc[high])) high = i;
            if (high == s.e || low >= sc[high] - kScoreTie) return {};
            if (expert_problem.empty()) {
                size_t lo = 0;
                for (size_t i = 0; i < s.e; ++i)
                    if (in[i] && sc[i] == low) lo = i;
                expert_problem = fmt::format("expert {} (biased score {:.9g}) is chosen and expert {} ({:.9g}, of kept "
                                             "group {}) is not",
                                             lo, low, high, sc[high], high / n);
            }
        }
        if (groups_ok) return expert_problem;
        size_t g_out = s.g;
        for (size_t g = 0; g < s.g; ++g)
            if ((used >> g & 1u) && !(ref_mask >> g & 1u) && (g_out == s.g || gs[g] < gs[g_out])) g_out = g;
        return fmt::format("it takes experts from group {} (top-2 score {:.9g}), which is not among the {} best groups {} "
                           "(the {}-th best scores {:.9g})",
                           g_out, g_out < s.g ? gs[g_out] : 0.0, s.tg, mask_text(ref_mask, s.g), s.tg, gs[kept.back()]);
    }

    static std::string mask_text(uint32_t mask, size_t g) {
        std::string out = "{";
        for (size_t i = 0; i < g; ++i)
            if (mask >> i & 1u) out += (out.size() > 1 ? ", " : "") + std::to_string(i);
        return out + "}";
    }

    // The alignment against the kernel's own (valid) ids.
    static CheckResult check_alignment(const Shape& s, const std::vector<int32_t>& ids, const std::vector<int32_t>& sorted,
                                       const std::vector<int32_t>& expert_ids, int32_t post) {
        const Alignment a = align_of(ids, s);
        const auto sentinel = static_cast<int32_t>(s.pairs());
        if (post != static_cast<int32_t>(a.total))
            return failure("align", 1,
                           fmt::format("num_tokens_post_padded is {}, want {} (the {} pairs, each expert's count padded to a "
                                       "multiple of block_size {})",
                                       post, a.total, s.pairs(), s.b));
        // expert_ids: the expert of every used block, 0 past them.
        size_t wrong = 0, first = 0;
        std::string why;
        const size_t used_blocks = a.total / s.b;
        std::vector<int32_t> owner(s.blocks(), 0);
        for (size_t e = 0; e < s.e; ++e)
            for (size_t r = a.offset[e]; r < a.offset[e] + a.padded[e]; r += s.b) owner[r / s.b] = static_cast<int32_t>(e);
        for (size_t blk = 0; blk < s.blocks(); ++blk)
            if (expert_ids[blk] != owner[blk]) {
                if (!wrong++) {
                    first = blk;
                    why = blk < used_blocks ? fmt::format("block {} (rows {} to {}) is expert {}'s, not {}", blk, blk * s.b,
                                                          blk * s.b + s.b - 1, owner[blk], expert_ids[blk])
                                            : fmt::format("block {} lies past the {} used blocks and must hold 0, not {}", blk,
                                                          used_blocks, expert_ids[blk]);
                }
            }
        if (wrong)
            return failure("align", static_cast<double>(wrong),
                           fmt::format("expert_ids: {} of {} entries wrong; the first: {}", wrong, s.blocks(), why),
                           static_cast<int64_t>(first));
        // sorted_token_ids: each expert's range its pairs (any order) then the sentinel; the sentinel past.
        std::vector<int64_t> seen(s.pairs(), -1);
        wrong = 0;
        auto flag = [&](size_t row, std::string text) {
            if (!wrong++) first = row, why = std::move(text);
        };
        for (size_t e = 0; e < s.e; ++e) {
            for (size_t r = a.offset[e]; r < a.offset[e] + a.padded[e]; ++r) {
                const int32_t v = sorted[r];
                const size_t row_in = r - a.offset[e];
                const std::string where = fmt::format("row {} (expert {}'s row {} of {}: {} pairs, {} padding)", r, e, row_in,
                                                      a.padded[e], a.count[e], a.padded[e] - a.count[e]);
                if (row_in >= a.count[e]) {
                    if (v != sentinel) flag(r, fmt::format("{} holds {}, not the padding sentinel {}", where, v, sentinel));
                    continue;
                }
                if (v == sentinel) {
                    flag(r, fmt::format("{} holds the sentinel {} where one of the expert's pairs belongs", where, v));
                } else if (v < 0 || v >= sentinel) {
                    flag(r, fmt::format("{} holds {}, neither a pair index (0 to {}) nor the sentinel", where, v, sentinel - 1));
                } else if (ids[static_cast<size_t>(v)] != static_cast<int32_t>(e)) {
                    flag(r, fmt::format("{} holds pair {} (token {}, choice {}), which is routed to expert {}", where, v,
                                        v / static_cast<int32_t>(s.k), v % static_cast<int32_t>(s.k), ids[static_cast<size_t>(v)]));
                } else if (seen[static_cast<size_t>(v)] >= 0) {
                    flag(r, fmt::format("{} holds pair {} a second time (also at row {})", where, v, seen[static_cast<size_t>(v)]));
                } else {
                    seen[static_cast<size_t>(v)] = static_cast<int64_t>(r);
                }
            }
        }
        for (size_t r = a.total; r < s.capacity(); ++r)
            if (sorted[r] != sentinel)
                flag(r, fmt::format("row {} lies past num_tokens_post_padded {} and must hold the sentinel {}, not {}", r, a.total,
                                    sentinel, sorted[r]));
        if (wrong)
            return failure("align", static_cast<double>(wrong),
                           fmt::format("sorted_token_ids: {} of {} rows wrong; the first: {}", wrong, s.capacity(), why),
                           static_cast<int64_t>(first));
        CheckResult r;
        r.pass = true;
        r.kind = "align";
        r.message = fmt::format("alignment exact ({} rows in {} blocks of {}, {} pairs)", a.total, used_blocks, s.b, s.pairs());
        return r;
    }

    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_moe_align_task() { return std::make_unique<MoeAlignTask>(); }

}  // namespace kevo
