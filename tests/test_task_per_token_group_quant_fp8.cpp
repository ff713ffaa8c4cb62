// Tests of per_token_group_quant_fp8 (the fp8 activation quantisation before DeepSeek-V3's
// block-scaled GEMMs): its spec and sizes, the reference against a hand-computed tiny case, the
// check on host-made right and wrong outputs (scales within 1 fp32 ulp; bytes of either recipe,
// near-midpoint neighbours, ties to even on exact midpoints, the sign of -0), the outlier trial's
// structures, and through the real kevo binary on PoCL at input seeds 1 to 4: the seed and best
// kernels and the reciprocal-multiply recipe pass, and every wrong kernel in
// tests/candidates/per_token_group_quant_fp8_*.cl is rejected, in the trial that holds its structure.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "core/dtypes.hpp"
#include "ml_candidates.hpp"
#include "task/bf16_buffer.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

const std::string kTask = "per_token_group_quant_fp8";
constexpr int kSeeds = 4;

std::unique_ptr<Task> load() {
    auto task = make_task(kTask);
    EXPECT_TRUE(task.has_value());
    return std::move(task.value());
}

SizeSpec size_of(int64_t t, int64_t h) { return {std::to_string(t) + "x" + std::to_string(h), false, {{"T", t}, {"H", h}}}; }

std::vector<std::byte> float_bytes(const std::vector<float>& v) {
    std::vector<std::byte> out(v.size() * 4);
    std::memcpy(out.data(), v.data(), out.size());
    return out;
}

std::vector<float> floats_of(const std::vector<std::byte>& b) {
    std::vector<float> out(b.size() / 4);
    std::memcpy(out.data(), b.data(), b.size());
    return out;
}

float next_up(float f, int ulps = 1) { return std::bit_cast<float>(std::bit_cast<uint32_t>(f) + ulps); }

// ---------------------------------------------------------------------------------------------
// spec

TEST(PerTokenGroupQuantFp8Spec, PackOrderProfilesAndSignatures) {
    const auto task = load();
    const auto& spec = task->spec();
    EXPECT_EQ(spec.pack, "ml");
    EXPECT_EQ(spec.category, "quantization");
    EXPECT_EQ(spec.order, 127);
    EXPECT_EQ(spec.bound, Bound::bandwidth);
    for (const auto& name : task_names()) {
        if (name == kTask) continue;
        auto other = make_task(name);
        ASSERT_TRUE(other.has_value()) << name;
        EXPECT_NE((*other)->spec().order, spec.order) << name << " has the same order";
    }
    for (const char* profile : {"small", "paper", "large"}) {
        const auto& sizes = spec.profiles.at(profile);
        ASSERT_EQ(sizes.size(), 4u) << profile;
        int heldout = 0;
        std::set<std::string> labels;
        for (const auto& s : sizes) {
            heldout += s.heldout;
            labels.insert(s.label);
            EXPECT_EQ(s.param("H") % 128, 0) << s.label;
            EXPECT_LT(s.param("T"), 65536) << s.label;
            EXPECT_FALSE(s.device_reference) << s.label;
        }
        EXPECT_EQ(heldout, 1) << profile;
        EXPECT_EQ(labels.size(), 4u) << profile;
    }
    // The hot decode shape (Atrex: (1, 7168), 72750 calls) is scored.
    EXPECT_EQ(spec.profiles.at("paper").front().label, "1x7168");
    ASSERT_EQ(spec.kernels.size(), 1u);
    EXPECT_EQ(signature_text(spec.kernels[0], language_named("cuda")),
              "extern \"C\" __global__ void per_token_group_quant_fp8(const __nv_bfloat16* x, unsigned char* q, float* "
              "scales, unsigned hidden, unsigned tokens, float eps)");
    EXPECT_EQ(signature_text(spec.kernels[0], language_named("opencl")),
              "__kernel void per_token_group_quant_fp8(__global const ushort* x, __global uchar* q, __global float* "
              "scales, uint hidden, uint tokens, float eps)");
    for (const char* file : {"seed.cl", "seed.cu", "best.cl", "best.cu", "brief.md"})
        EXPECT_FALSE(task_file(kTask, file).empty()) << file;
}

// ---------------------------------------------------------------------------------------------
// reference: one token, two groups, by hand

struct Tiny {
    std::unique_ptr<Task> task = load();
    SizeSpec size = size_of(1, 256);
    Case c = task->make_case(size, 1, Trial::nominal);  // eps 1e-10
    Reference ref;

    // Group 0: amax 3.5, so s = 3.5 / 448 = 2^-7 exactly and x / s = 128 x; group 1 all zero.
    Tiny() {
        std::vector<float> x(256, 0.0f);
        x[0] = 3.5f;                   // 448             -> 0x7e
        x[1] = -1.0f;                  // -128 = -2^7     -> 0xf0
        x[2] = std::ldexp(1.0f, -17);  // 2^-10: midpoint of 0 and 2^-9 -> even: 0x00
        x[3] = 3 * std::ldexp(1.0f, -17);  // 3 2^-10: midpoint of 1 and 2 quanta -> 0x02
        x[4] = -0.0f;                  // -> 0x80
        x[5] = 17.0f / 128;            // 17: midpoint of 16 (0x58) and 18 (0x59) -> 0x58
        x[6] = 19.0f / 128;            // 19: midpoint of 18 (0x59) and 20 (0x5a) -> 0x5a
        x[7] = -0.25f;                 // -32 = -2^5     -> 0xe0
        x[8] = std::ldexp(1.0f, -18);  // 2^-11: below half the smallest subnormal -> 0x00
        x[9] = -std::ldexp(1.0f, -18); // -> 0x80
        c.buffers[0] = make_bf16_buffer("x", BufferRole::input, x);
        ref = task->reference(size, c);
    }
    CheckResult check(const std::vector<uint8_t>& q, const std::vector<float>& scales) const {
        std::vector<std::byte> qb(q.size());
        std::memcpy(qb.data(), q.data(), q.size());
        return task->check(size, c, ref, {qb, float_bytes(scales)});
    }
    std::vector<uint8_t> ref_q() const {
        std::vector<uint8_t> q(ref.results[0].size());
        std::memcpy(q.data(), ref.results[0].data(), q.size());
        return q;
    }
};

TEST(PerTokenGroupQuantFp8Reference, HandComputedCase) {
    const Tiny t;
    ASSERT_EQ(t.ref.results.size(), 2u);
    const auto scales = floats_of(t.ref.results[1]);
    ASSERT_EQ(scales.size(), 2u);
    EXPECT_EQ(scales[0], std::ldexp(1.0f, -7));
    EXPECT_EQ(scales[1], 1e-10f / 448.0f);
    const auto q = t.ref_q();
    ASSERT_EQ(q.size(), 256u);
    const uint8_t want[10] = {0x7e, 0xf0, 0x00, 0x02, 0x80, 0x58, 0x5a, 0xe0, 0x00, 0x80};
    for (int i = 0; i < 10; ++i) EXPECT_EQ(q[i], want[i]) << "element " << i;
    for (size_t i = 10; i < 128; ++i) EXPECT_EQ(q[i], 0x00) << i;
    for (size_t i = 128; i < 256; ++i) EXPECT_EQ(q[i], 0x00) << i;
}

// ---------------------------------------------------------------------------------------------
// the check on host-made outputs

TEST(PerTokenGroupQuantFp8Check, ReferenceOutputsPassExactly) {
    const Tiny t;
    const auto r = t.check(t.ref_q(), floats_of(t.ref.results[1]));
    EXPECT_TRUE(r.pass) << r.message;
    EXPECT_EQ(r.error, 0);
}

TEST(PerTokenGroupQuantFp8Check, ScalesWithinOneUlp) {
    const Tiny t;
    auto scales = floats_of(t.ref.results[1]);
    scales[1] = next_up(scales[1]);
    const auto one = t.check(t.ref_q(), scales);
    EXPECT_TRUE(one.pass) << one.message;
    scales[1] = next_up(scales[1]);
    const auto two = t.check(t.ref_q(), scales);
    EXPECT_FALSE(two.pass);
    EXPECT_EQ(two.kind, "scale_ulp");
    EXPECT_EQ(two.error, 2);
    EXPECT_EQ(two.worst_index, 1);
    scales = floats_of(t.ref.results[1]);
    scales[1] = 1.0f;  // the "all-zero block gets scale 1" convention is not this task's
    EXPECT_FALSE(t.check(t.ref_q(), scales).pass);
    scales[1] = std::numeric_limits<float>::quiet_NaN();
    const auto nan = t.check(t.ref_q(), scales);
    EXPECT_FALSE(nan.pass);
    EXPECT_EQ(nan.kind, "nan");
}

TEST(PerTokenGroupQuantFp8Check, ExactMidpointsTieToEven) {
    const Tiny t;
    const auto scales = floats_of(t.ref.results[1]);
    for (const auto& [index, odd] : std::vector<std::pair<size_t, uint8_t>>{{2, 0x01}, {3, 0x01}, {5, 0x59}, {6, 0x59}}) {
        auto q = t.ref_q();
        q[index] = odd;
        const auto r = t.check(q, scales);
        EXPECT_FALSE(r.pass) << "element " << index;
        EXPECT_EQ(r.kind, "e4m3_quotient");
        EXPECT_EQ(r.worst_index, static_cast<int64_t>(index));
        EXPECT_EQ(r.error, 1);
    }
}

TEST(PerTokenGroupQuantFp8Check, NearMidpointNeighbourPassesWithItsDistance) {
    // amax 1: s = fl(1 / 448) = (1 + eta) / 448, not exact. x = 3/64 = 21 / 448, so x / s = 21 / (1 + eta):
    // within |eta| <= 2^-24 of the midpoint of 20 (0x5a) and 22 (0x5b) but not on it. Both neighbours
    // pass (an approximate division may land on either side), the other one at distance ~|eta|.
    Tiny t;
    std::vector<float> x(128, 0.0f);
    x[0] = 1.0f;
    x[1] = 3.0f / 64;
    t.size = size_of(1, 128);
    t.c = t.task->make_case(t.size, 1, Trial::nominal);
    t.c.buffers[0] = make_bf16_buffer("x", BufferRole::input, x);
    t.ref = t.task->reference(t.size, t.c);
    const auto scales = floats_of(t.ref.results[1]);
    ASSERT_EQ(scales[0], 1.0f / 448.0f);
    ASSERT_NE(static_cast<double>(scales[0]) * 448, 1.0);
    auto q = t.ref_q();
    ASSERT_TRUE(q[1] == 0x5a || q[1] == 0x5b) << int(q[1]);
    q[1] = q[1] == 0x5a ? 0x5b : 0x5a;
    const auto r = t.check(q, scales);
    EXPECT_TRUE(r.pass) << r.message;
    EXPECT_EQ(r.kind, "e4m3_quotient");
    EXPECT_EQ(r.worst_index, 1);
    EXPECT_GT(r.error, 0);
    EXPECT_LE(r.error, std::ldexp(1.0, -23));
    EXPECT_DOUBLE_EQ(r.tolerance, std::ldexp(1.0, -21));
    // Two e4m3 steps from the quotient is never admitted.
    q[1] = 0x5c;
    const auto far = t.check(q, scales);
    EXPECT_FALSE(far.pass);
    EXPECT_GT(far.error, 0.05);
}

TEST(PerTokenGroupQuantFp8Check, SignOfZeroAndNanBytes) {
    const Tiny t;
    const auto scales = floats_of(t.ref.results[1]);
    auto q = t.ref_q();
    q[4] = 0x00;  // x = -0.0
    const auto zero = t.check(q, scales);
    EXPECT_FALSE(zero.pass);
    EXPECT_EQ(zero.worst_index, 4);
    q = t.ref_q();
    q[9] = 0x00;  // x = -2^-18: a negative that rounds to zero
    EXPECT_FALSE(t.check(q, scales).pass);
    q = t.ref_q();
    q[0] = 0x7f;  // NaN where 448 belongs
    const auto nan = t.check(q, scales);
    EXPECT_FALSE(nan.pass);
    EXPECT_EQ(nan.kind, "nan");
    EXPECT_EQ(nan.worst_index, 0);
    q = t.ref_q();
    q[200] = 0x01;  // the all-zero group: only 0x00 (x = +0)
    EXPECT_FALSE(t.check(q, scales).pass);
}

// ---------------------------------------------------------------------------------------------
// the outlier trial holds its structures at every small size

TEST(PerTokenGroupQuantFp8Outlier, HoldsZeroTinySpikeAndMidpointGroups) {
    const auto task = load();
    for (const auto& size : task->spec().profiles.at("small")) {
        const Case nominal = task->make_case(size, 3, Trial::nominal);
        EXPECT_EQ(nominal.constants.at("eps"), static_cast<double>(1e-10f));
        const Case c = task->make_case(size, 3, Trial::outlier);
        EXPECT_EQ(c.constants.at("eps"), static_cast<double>(1e-4f)) << size.label;
        const Reference ref = task->reference(size, c);
        const auto x = bf16_values(c.buffers[0]);
        const auto scales = floats_of(ref.results[1]);
        const auto* q = reinterpret_cast<const uint8_t*>(ref.results[0].data());
        size_t eps_groups = 0, negative_zero_bytes = 0, subnormal_bytes = 0;
        for (float s : scales) eps_groups += s == 1e-4f / 448.0f;
        for (size_t i = 0; i < x.size(); ++i) {
            negative_zero_bytes += q[i] == 0x80;
            subnormal_bytes += (q[i] & 0x7f) > 0 && (q[i] & 0x7f) < 8;
        }
        EXPECT_GE(eps_groups, 3u) << size.label << ": the zero groups and the tiny group";
        EXPECT_GT(negative_zero_bytes, 64u) << size.label;
        EXPECT_GT(subnormal_bytes, 20u) << size.label;
        // Exact midpoints: x / s lands halfway between two e4m3 values (s a power of two).
        size_t midpoints = 0;
        for (size_t i = 0; i < x.size(); ++i) {
            const double v = std::fabs(static_cast<double>(x[i]) / scales[i / 128]);
            if (v == 0 || v >= 448) continue;
            const uint8_t code = float_to_e4m3(static_cast<float>(v)) & 0x7f;
            const double lo = code == 0 ? 0 : (e4m3_to_float(code - 1) + e4m3_to_float(code)) / 2.0;
            const double hi = (e4m3_to_float(code) + e4m3_to_float(code + 1)) / 2.0;
            midpoints += v == lo || v == hi;
        }
        EXPECT_GE(midpoints, 2u * 126) << size.label;
        if (size.param("T") > 1) {
            bool zero_row = false;
            const auto h = static_cast<size_t>(size.param("H"));
            for (size_t r = 0; r < x.size() / h && !zero_row; ++r) {
                zero_row = true;
                for (size_t i = 0; i < h; ++i) zero_row = zero_row && x[r * h + i] == 0;
            }
            EXPECT_TRUE(zero_row) << size.label;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// real kernels through PoCL

TEST(PerTokenGroupQuantFp8Kernels, SeedAndBestPassWithMargin) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    test::expect_ok_with_margin(kTask, "seed.cl");
    test::expect_ok_with_margin(kTask, "best.cl");
}

TEST(PerTokenGroupQuantFp8Kernels, ReciprocalRecipePassesEverySizeAndTrialOnFourSeeds) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string path = test::candidate(kTask + "_recipe_reciprocal.cl");
    ASSERT_TRUE(std::ifstream(path)) << path;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        const auto doc = test::eval_small(kTask, path, seed);
        ASSERT_TRUE(doc.is_object());
        ASSERT_EQ(doc["verdict"], "ok") << "seed " << seed << ": " << doc.dump(2);
        ASSERT_EQ(doc["sizes"].size(), 4u) << doc.dump(2);
        for (const auto& size : doc["sizes"]) ASSERT_EQ(size["trials"].size(), 2u) << size.dump();
        // Its scales are up to 1 ulp off (admitted at 1 ulp: margin >= 1); its bytes are its own recipe.
        EXPECT_GE(test::smallest_margin(doc), 1.0) << "seed " << seed;
    }
}

struct Wrong {
    std::string stem;
    // The trial that holds the structure, where the kernel must fail first; "either" where nominal
    // data also holds it by chance (exact midpoints, e4m3 subnormals), so a size's nominal trial may
    // already reject it.
    std::string trial;
};

void PrintTo(const Wrong& w, std::ostream* os) { *os << w.stem; }

const Wrong kWrong[] = {
    {"only_no_eps", "outlier"},     {"only_fixed_eps", "outlier"}, {"only_ties_away", "either"},
    {"only_ftz", "either"},         {"round_toward_zero", "nominal"}, {"per_token_amax", "nominal"},
    {"sat_nan", "nominal"},         {"slightly_wrong", "nominal"},
};

class PerTokenGroupQuantFp8Wrong : public ::testing::TestWithParam<Wrong> {};

TEST_P(PerTokenGroupQuantFp8Wrong, IsRejectedInTheTrialThatHoldsItOnFourSeeds) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const Wrong& w = GetParam();
    const std::string path = test::candidate(kTask + "_" + w.stem + ".cl");
    ASSERT_TRUE(std::ifstream(path)) << path;
    for (int seed = 1; seed <= kSeeds; ++seed) {
        const auto doc = test::eval_small(kTask, path, seed);
        ASSERT_TRUE(doc.is_object());
        ASSERT_EQ(doc["verdict"], "incorrect") << w.stem << " seed " << seed << ": " << doc.dump(2);
        EXPECT_FALSE(doc["diagnostics"].get<std::string>().empty());
        ASSERT_FALSE(doc["sizes"].empty()) << doc.dump(2);
        const auto& failed = doc["sizes"].back()["trials"].back();
        EXPECT_FALSE(failed["pass"].get<bool>()) << failed.dump();
        if (w.trial != "either") {
            EXPECT_EQ(failed["trial"], w.trial) << w.stem << " seed " << seed << ": " << failed.dump();
        }
        for (const auto& size : doc["sizes"])
            for (const auto& t : size["trials"])
                if (&t != &failed) {
                    EXPECT_TRUE(t["pass"].get<bool>()) << w.stem << " seed " << seed << ": " << t.dump();
                }
        std::printf("%s seed %d: rejected at %s, %s trial, %s\n", w.stem.c_str(), seed,
                    doc["sizes"].back()["label"].get<std::string>().c_str(), failed["trial"].get<std::string>().c_str(),
                    failed["kind"].get<std::string>().c_str());
    }
}

INSTANTIATE_TEST_SUITE_P(Candidates, PerTokenGroupQuantFp8Wrong, ::testing::ValuesIn(kWrong),
                         [](const auto& info) { return info.param.stem; });

}  // namespace
}  // namespace kevo
