// Tests of the tasks hmc, lj and fft3d: specs and sizes, references against independent inline
// computations (one HMC step by hand, one LJ step by brute force, an FFT impulse and Parseval),
// the checks' failure modes, and, through the real kevo binary on PoCL, that each seed passes and
// each broken variant under tests/candidates/ is found incorrect.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstring>
#include <fstream>
#include <limits>
#include <numbers>
#include <set>

#include <fmt/format.h>

#include "core/rng.hpp"
#include "kevo_process.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

using test::candidate;
using test::has_device;
using test::run_kevo;

std::unique_ptr<Task> load(const std::string& name) {
    auto task = make_task(name);
    EXPECT_TRUE(task.has_value()) << name;
    return std::move(task.value());
}

const std::vector<std::string> kTasks = {"hmc", "lj", "fft3d"};

// ---------------------------------------------------------------------------------------------
// specs

TEST(IrregularSpec, ProfilesOrderAndPaperSizes) {
    const std::map<std::string, int> order = {{"hmc", 41}, {"lj", 60}, {"fft3d", 80}};
    const std::map<std::string, std::set<std::string>> paper = {
        {"hmc", {"8x16384x200", "16x4096x200", "32x1024x200", "24x2048x200"}},
        {"lj", {"1728x5x13.8x20", "4096x7x18.4x15", "10648x10x25.3x10", "2744x6x16.1x12"}},
        {"fft3d", {"32x32x32", "64x64x64", "128x128x128", "256x256x256"}}};
    const std::map<std::string, std::string> paper_heldout = {
        {"hmc", "24x2048x200"}, {"lj", "2744x6x16.1x12"}, {"fft3d", "256x256x256"}};
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto& spec = task->spec();
        EXPECT_EQ(spec.order, order.at(name));
        for (const char* profile : {"small", "paper", "large"}) {
            const auto& sizes = spec.profiles.at(profile);
            ASSERT_EQ(sizes.size(), 4u) << name << " " << profile;
            int heldout = 0;
            for (const auto& s : sizes) {
                heldout += s.heldout;
                if (std::string(profile) != "large") EXPECT_FALSE(s.device_reference) << name << " " << s.label;
            }
            EXPECT_EQ(heldout, 1) << name << " " << profile;
        }
        std::set<std::string> labels;
        for (const auto& s : spec.profiles.at("paper")) {
            labels.insert(s.label);
            EXPECT_EQ(s.heldout, s.label == paper_heldout.at(name)) << name << " " << s.label;
        }
        EXPECT_EQ(labels, paper.at(name));
        // The brief names the kernels and never a held-out size.
        const std::string brief(task_file(name, "brief.md"));
        for (const auto& k : spec.kernels) {
            EXPECT_NE(brief.find(signature_text(k, language_named("cuda"))), std::string::npos) << signature_text(k, language_named("cuda"));
            EXPECT_NE(brief.find(signature_text(k, language_named("opencl"))), std::string::npos) << signature_text(k, language_named("opencl"));
        }
        for (const auto& [profile, sizes] : spec.profiles)
            for (const auto& s : sizes)
                if (s.heldout) EXPECT_EQ(brief.find(s.label), std::string::npos) << name << " leaks " << s.label;
    }
}

TEST(IrregularSpec, LjBoxesAllowTheCellList) {
    auto task = load("lj");
    for (const auto& [profile, sizes] : task->spec().profiles)
        for (const auto& s : sizes) {
            const double box = static_cast<double>(s.param("l_milli")) / 1000.0;
            const auto k = s.param("k");
            EXPECT_EQ(s.param("n"), k * k * k);
            EXPECT_GE(s.param("m"), 3) << s.label;
            EXPECT_GE(box / static_cast<double>(s.param("m")), 2.5) << s.label;
        }
}

// ---------------------------------------------------------------------------------------------
// hmc

uint32_t fmix(uint32_t x) {
    x ^= x >> 16;
    x *= 0x85EBCA6Bu;
    x ^= x >> 13;
    x *= 0xC2B2AE35u;
    x ^= x >> 16;
    return x;
}

double spec_uniform(uint32_t seed, uint32_t chain, uint32_t counter) {
    return static_cast<double>(fmix(fmix((seed + chain * 0x9E3779B9u) ^ counter)) >> 8) / 16777216.0;
}

TEST(IrregularHmc, FmixIsMurmur3sFinaliser) {
    EXPECT_EQ(rng::fmix32(0u), 0u);
    EXPECT_EQ(rng::fmix32(1u), fmix(1u));
    EXPECT_EQ(fmix(1u), 0x514E28B7u);  // Murmur3 fmix32(1)
}

TEST(IrregularHmc, OneStepByHand) {
    auto task = load("hmc");
    const SizeSpec size{"2x3x1", false, {{"d", 2}, {"k", 3}, {"steps", 1}}};
    const Case c = task->make_case(size, 11, Trial::nominal);
    ASSERT_EQ(c.launches.size(), 1u);
    const auto ref = task->reference(size, c);
    const float* a = c.buffers[3].as<float>();
    const float* q0 = c.buffers[0].as<float>();
    const auto q_ref = as_floats(ref.results[0]);
    const auto* acc_ref = reinterpret_cast<const uint32_t*>(ref.results[1].data());
    const double eps = 0.2;
    for (uint32_t chain = 0; chain < 3; ++chain) {
        double q[2] = {q0[2 * chain], q0[2 * chain + 1]};
        const double u1 = std::max(spec_uniform(0xCAFEBEEFu, chain, 0), 1e-7), u2 = spec_uniform(0xCAFEBEEFu, chain, 1);
        const double r = std::sqrt(-2 * std::log(u1)), th = 2 * std::numbers::pi * u2;
        double p[2] = {r * std::cos(th), r * std::sin(th)};
        auto force = [&](double f[2]) {
            f[0] = a[0] * q[0] + a[1] * q[1];
            f[1] = a[2] * q[0] + a[3] * q[1];
        };
        double f[2];
        force(f);
        const double h0 = 0.5 * (q[0] * f[0] + q[1] * f[1]) + 0.5 * (p[0] * p[0] + p[1] * p[1]);
        const double start[2] = {q[0], q[1]};
        p[0] -= eps / 2 * f[0], p[1] -= eps / 2 * f[1];
        for (int l = 1; l <= 10; ++l) {
            q[0] += eps * p[0], q[1] += eps * p[1];
            force(f);
            const double s = l == 10 ? eps / 2 : eps;
            p[0] -= s * f[0], p[1] -= s * f[1];
        }
        const double h1 = 0.5 * (q[0] * f[0] + q[1] * f[1]) + 0.5 * (p[0] * p[0] + p[1] * p[1]);
        const bool accept = std::log(std::max(spec_uniform(0xCAFEBEEFu, chain, 2), 1e-30)) < -(h1 - h0);
        EXPECT_EQ(acc_ref[chain], accept ? 1u : 0u) << chain;
        for (int i = 0; i < 2; ++i)
            EXPECT_NEAR(q_ref[2 * chain + i], accept ? q[i] : start[i], 1e-5) << chain << " " << i;
    }
}

TEST(IrregularHmc, CheckPassesTheReferenceAndCatchesWrongRuns) {
    auto task = load("hmc");
    const SizeSpec size = task->spec().profiles.at("small")[0];
    const Case c = task->make_case(size, 3, Trial::outlier);
    const auto ref = task->reference(size, c);
    const auto ok = task->check(size, c, ref, ref.results);
    EXPECT_TRUE(ok.pass) << ok.message;

    // The chains of a run at the nominal eps sample the same law but leave the reference path.
    Case nominal_eps = c;
    for (auto& l : nominal_eps.launches) l.args[7] = ArgRef::f(0.2f);
    nominal_eps.constants["eps"] = static_cast<double>(0.2f);
    const auto other = task->reference(size, nominal_eps);
    const auto off = task->check(size, c, ref, other.results);
    EXPECT_FALSE(off.pass);
    EXPECT_NE(off.message.find("chains"), std::string::npos) << off.message;

    auto never = ref.results;  // all proposals rejected
    std::fill(never[1].begin(), never[1].end(), std::byte{0});
    const auto rejected = task->check(size, c, ref, never);
    EXPECT_FALSE(rejected.pass);
    EXPECT_NE(rejected.message.find("acceptance rate"), std::string::npos) << rejected.message;

    auto nan = ref.results;
    reinterpret_cast<float*>(nan[0].data())[7] = std::numeric_limits<float>::quiet_NaN();
    const auto bad = task->check(size, c, ref, nan);
    EXPECT_FALSE(bad.pass);
    EXPECT_EQ(bad.kind, "nan");
}

// ---------------------------------------------------------------------------------------------
// lj

TEST(IrregularLj, OneStepMatchesBruteForce) {
    auto task = load("lj");
    const SizeSpec size{"27x3x7.5x1", false, {{"n", 27}, {"k", 3}, {"m", 3}, {"l_milli", 7500}, {"steps", 1}}};
    for (Trial trial : {Trial::nominal, Trial::outlier}) {
        const Case c = task->make_case(size, 5, trial);
        ASSERT_EQ(c.launches.size(), 3u);
        const auto reference = task->reference(size, c);  // keeps the bytes the span views
        const auto ref = as_floats(reference.results[0]);
        const float* pos = c.buffers[0].as<float>();
        const float* vel = c.buffers[1].as<float>();
        const double box = 7.5, dt = c.constants.at("dt"), rcut2 = c.constants.at("rcut2");
        for (int i = 0; i < 27; ++i) {
            double f[3] = {0, 0, 0};
            for (int j = 0; j < 27; ++j) {
                double d[3], r2 = 0;
                for (int a = 0; a < 3; ++a) {
                    d[a] = static_cast<double>(pos[4 * j + a]) - pos[4 * i + a];
                    d[a] -= box * std::round(d[a] / box);
                    r2 += d[a] * d[a];
                }
                if (r2 >= rcut2 || r2 <= 1e-12) continue;
                const double inv6 = 1 / (r2 * r2 * r2);
                for (int a = 0; a < 3; ++a) f[a] += -24 * (2 * inv6 * inv6 - inv6) / r2 * d[a];
            }
            for (int a = 0; a < 3; ++a) {
                const double v = vel[4 * i + a] + f[a] * dt;
                EXPECT_NEAR(ref[4 * i + a], pos[4 * i + a] + v * dt, 1e-6) << "particle " << i << " axis " << a;
            }
        }
    }
}

TEST(IrregularLj, CheckReportsCellOverflowAndPositionErrors) {
    auto task = load("lj");
    const SizeSpec size = task->spec().profiles.at("small")[0];
    const Case c = task->make_case(size, 9, Trial::nominal);
    const auto ref = task->reference(size, c);
    EXPECT_TRUE(task->check(size, c, ref, ref.results).pass);

    auto overflow = ref.results;
    reinterpret_cast<uint32_t*>(overflow[1].data())[4] = 65;
    const auto r = task->check(size, c, ref, overflow);
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.kind, "cell_overflow");
    EXPECT_NE(r.message.find("cell overflow"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("(cx=1, cy=1, cz=0)"), std::string::npos) << r.message;

    auto moved = ref.results;
    reinterpret_cast<float*>(moved[0].data())[4 * 10 + 1] += 2e-3f;  // the tolerance is 1e-4 L = 8e-4 here
    const auto m = task->check(size, c, ref, moved);
    EXPECT_FALSE(m.pass);
    EXPECT_NE(m.message.find("particle 10 (y)"), std::string::npos) << m.message;
}

// ---------------------------------------------------------------------------------------------
// fft3d

TEST(IrregularFft3d, ImpulseGivesAPlaneWave) {
    auto task = load("fft3d");
    const SizeSpec size{"8x8x8", false, {{"n", 8}}};
    Case c = task->make_case(size, 1, Trial::nominal);
    EXPECT_DOUBLE_EQ(c.work, 48.0 * 512);
    EXPECT_DOUBLE_EQ(c.constants.at("flop"), 5.0 * 512 * 9);
    float* in = c.buffers[0].as<float>();
    std::fill(in, in + 2 * 512, 0.0f);
    const int x0 = 3, y0 = 5, z0 = 6;
    in[2 * ((z0 * 8 + y0) * 8 + x0)] = 2.0f;
    const auto reference = task->reference(size, c);  // keeps the bytes the span views
    const auto out = as_floats(reference.results[0]);
    for (int k = 0; k < 8; ++k)
        for (int j = 0; j < 8; ++j)
            for (int i = 0; i < 8; ++i) {
                const auto want = 2.0 * std::polar(1.0, -2 * std::numbers::pi * (i * x0 + j * y0 + k * z0) / 8.0);
                const size_t e = (k * 8 + j) * 8 + i;
                EXPECT_NEAR(out[2 * e], want.real(), 1e-6);
                EXPECT_NEAR(out[2 * e + 1], want.imag(), 1e-6);
            }
}

TEST(IrregularFft3d, ParsevalAndDcTermOnRandomInput) {
    auto task = load("fft3d");
    const SizeSpec size{"16x16x16", false, {{"n", 16}}};
    const Case c = task->make_case(size, 4, Trial::outlier);
    const auto in = as_floats(c.buffers[0].data);
    const auto reference = task->reference(size, c);  // keeps the bytes the span views
    const auto out = as_floats(reference.results[0]);
    double e_in = 0, e_out = 0, sum_re = 0, sum_im = 0;
    for (size_t i = 0; i < in.size(); i += 2) {
        e_in += double(in[i]) * in[i] + double(in[i + 1]) * in[i + 1];
        e_out += double(out[i]) * out[i] + double(out[i + 1]) * out[i + 1];
        sum_re += in[i], sum_im += in[i + 1];
    }
    EXPECT_NEAR(e_out / (4096.0 * e_in), 1.0, 1e-6);
    EXPECT_NEAR(out[0], sum_re, 1e-3 * std::max(1.0, std::fabs(sum_re)));
    EXPECT_NEAR(out[1], sum_im, 1e-3 * std::max(1.0, std::fabs(sum_im)));

    auto moved = std::vector<float>(out.begin(), out.end());
    moved[2 * ((3 * 16 + 2) * 16 + 1) + 1] += 10.0f * (1 + std::fabs(moved[0]));
    const auto r = task->check(size, c, Reference{{to_bytes(out)}}, {to_bytes(moved)});
    EXPECT_FALSE(r.pass);
    EXPECT_NE(r.message.find("(i=1, j=2, k=3) im"), std::string::npos) << r.message;
}

// ---------------------------------------------------------------------------------------------
// seeds and broken variants on PoCL, through the real binary

std::string seed_file(const std::string& task) {
    const std::string path = ::testing::TempDir() + "irregular_seed_" + task + ".cl";
    std::ofstream(path) << task_file(task, "seed.cl");
    return path;
}

nlohmann::json evaluate(const std::string& task, const std::string& file, bool fixed_seed) {
    std::vector<std::string> args = {"eval", task, file, "--backend", "opencl", "--profile", "small", "--sizes", "all",
                                     "--check-only", "--json", "--timeout", "60"};
    if (fixed_seed) args.insert(args.end(), {"--seed", "5"});
    const auto r = run_kevo(args);
    auto doc = r.json();
    EXPECT_TRUE(doc.is_object()) << "stdout is not one JSON document:\n" << r.out << "\nstderr:\n" << r.err;
    return doc;
}

class IrregularSeeds : public ::testing::TestWithParam<std::string> {};

TEST_P(IrregularSeeds, PassEverySmallSize) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto doc = evaluate(GetParam(), seed_file(GetParam()), false);
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc["verdict"], "ok") << doc.dump(2);
    EXPECT_EQ(doc["sizes"].size(), 4u) << doc.dump(2);
}

INSTANTIATE_TEST_SUITE_P(IrregularTasks, IrregularSeeds, ::testing::ValuesIn(kTasks),
                         [](const auto& info) { return info.param; });

class IrregularVariants : public ::testing::TestWithParam<std::string> {};

TEST_P(IrregularVariants, AreIncorrect) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string path = candidate(GetParam() + ".cl");
    ASSERT_TRUE(std::ifstream(path).good()) << path;
    const std::string task = GetParam().substr(0, GetParam().find('_'));
    const auto doc = evaluate(task, path, true);
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc["verdict"], "incorrect") << doc.dump(2);
    EXPECT_FALSE(doc["diagnostics"].get<std::string>().empty());
}

std::vector<std::string> variant_names() {
    std::vector<std::string> out;
    for (const auto& task : kTasks)
        for (const char* kind : {"wrong_constant", "off_by_one", "hardcoded_size"}) out.push_back(task + "_" + kind);
    return out;
}

INSTANTIATE_TEST_SUITE_P(IrregularCandidates, IrregularVariants, ::testing::ValuesIn(variant_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace kevo
