// Tests of the multi-field, bit-exact and reduction tasks (lbm, ising, gradshaf): specs and sizes,
// references against independent hand computations on tiny grids, the checks and their messages,
// the outlier trials, and the real seeds and broken variants evaluated through PoCL.
#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <numbers>
#include <set>

#include "core/rng.hpp"
#include "kevo_process.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

const std::vector<std::string> kFieldTasks = {"lbm", "ising", "gradshaf"};

std::unique_ptr<Task> load(const std::string& name) {
    auto task = make_task(name);
    EXPECT_TRUE(task.has_value()) << name;
    return std::move(task.value());
}

SizeSpec custom(const std::string& a, int64_t va, const std::string& b, int64_t vb, const std::string& c, int64_t vc) {
    return {"custom", false, {{a, va}, {b, vb}, {c, vc}}};
}

std::vector<float> floats_of(const std::vector<std::byte>& bytes) {
    auto view = as_floats(bytes);
    return {view.begin(), view.end()};
}

// ---------------------------------------------------------------------------------------------
// specs

TEST(FieldsSpec, ProfilesOrdersAndPaperSizes) {
    const std::map<std::string, int> order = {{"lbm", 50}, {"ising", 51}, {"gradshaf", 70}};
    const std::map<std::string, std::vector<std::string>> paper = {
        {"lbm", {"64x64x50", "128x128x100", "256x256x100", "192x192x75"}},
        {"ising", {"256x256x100", "1024x1024x50", "2048x2048x25", "1536x1536x40"}},
        {"gradshaf", {"65x65x30", "257x257x40", "513x513x30", "129x129x35"}},
    };
    for (const auto& name : kFieldTasks) {
        auto task = load(name);
        const auto& spec = task->spec();
        EXPECT_EQ(spec.name, name);
        EXPECT_EQ(spec.order, order.at(name));
        EXPECT_EQ(spec.bound, Bound::bandwidth) << name;
        for (const char* profile : {"small", "paper", "large"}) {
            ASSERT_TRUE(spec.profiles.count(profile)) << name << " " << profile;
            const auto& sizes = spec.profiles.at(profile);
            ASSERT_EQ(sizes.size(), 4u) << name << " " << profile;
            int heldout = 0;
            for (const auto& s : sizes) {
                heldout += s.heldout;
                if (std::string(profile) != "large") {
                    EXPECT_FALSE(s.device_reference) << name << " " << s.label;
                }
            }
            EXPECT_EQ(heldout, 1) << name << " " << profile;
        }
        const auto& sizes = spec.profiles.at("paper");
        for (size_t i = 0; i < 4; ++i) {
            EXPECT_EQ(sizes[i].label, paper.at(name)[i]) << name;
            EXPECT_EQ(sizes[i].heldout, i == 3) << name << " " << sizes[i].label;
        }
        // small sizes are meaningful: none is square, so a kernel assuming NX == NY fails there.
        for (const auto& s : spec.profiles.at("small")) EXPECT_NE(s.params[0].second, s.params[1].second) << s.label;
    }
    // The checkerboard needs even sides everywhere.
    auto ising = load("ising");
    for (const auto& [profile, sizes] : ising->spec().profiles)
        for (const auto& s : sizes) EXPECT_TRUE(s.param("nx") % 2 == 0 && s.param("ny") % 2 == 0) << s.label;
}

TEST(FieldsSpec, BriefsNameSignaturesAndNoSizes) {
    for (const auto& name : kFieldTasks) {
        auto task = load(name);
        const std::string brief(task_file(name, "brief.md"));
        ASSERT_FALSE(brief.empty()) << name;
        for (const auto& k : task->spec().kernels) {
            EXPECT_NE(brief.find(signature_text(k, language_named("cuda"))), std::string::npos) << name << ": " << signature_text(k, language_named("cuda"));
            EXPECT_NE(brief.find(signature_text(k, language_named("opencl"))), std::string::npos) << name << ": " << signature_text(k, language_named("opencl"));
        }
        for (const auto& [profile, sizes] : task->spec().profiles)
            for (const auto& s : sizes) EXPECT_EQ(brief.find(s.label), std::string::npos) << name << " names " << s.label;
        EXPECT_NE(brief.find("ceil("), std::string::npos) << name;
    }
}

TEST(FieldsSpec, SeedsHaveExactSignaturesAndGuardedKnobs) {
    for (const auto& name : kFieldTasks) {
        auto task = load(name);
        for (const char* file : {"seed.cu", "seed.cl"}) {
            const std::string seed(task_file(name, file));
            ASSERT_FALSE(seed.empty()) << name << " " << file;
            for (const auto& k : task->spec().kernels) {
                const auto& signature = signature_text(k, language_for_suffix(std::string_view(file).substr(5)));
                EXPECT_NE(seed.find(signature), std::string::npos) << name << " " << file << " " << k.name;
                EXPECT_NE(seed.find("// kevo: launch " + k.name + " block="), std::string::npos) << name << " " << file;
            }
            for (const char* knob : {"BX", "BY"}) EXPECT_NE(seed.find(std::string("#ifndef ") + knob), std::string::npos);
        }
    }
    // The reduction's default geometry is one block, for every size.
    auto gradshaf = load("gradshaf");
    for (const auto& s : gradshaf->spec().profiles.at("large")) {
        auto c = gradshaf->make_case(s, 1, Trial::nominal);
        ASSERT_EQ(c.launches.size(), 2u * static_cast<size_t>(s.param("steps")));
        EXPECT_EQ(c.launches[0].kernel, "gradshaf_axis_reduce");
        EXPECT_EQ(c.launches[0].domain, (Dim3{1, 1, 1}));
        EXPECT_EQ(c.launches[1].kernel, "gradshaf_step");
        break;  // building one large case is enough
    }
}

// ---------------------------------------------------------------------------------------------
// lbm

constexpr int kLbmCx[9] = {0, 1, 0, -1, 0, 1, -1, -1, 1};
constexpr int kLbmCy[9] = {0, 0, 1, 0, -1, 1, 1, -1, -1};
constexpr double kLbmW[9] = {4. / 9, 1. / 9, 1. / 9, 1. / 9, 1. / 9, 1. / 36, 1. / 36, 1. / 36, 1. / 36};

TEST(FieldsLbm, CaseLayoutAndWork) {
    auto task = load("lbm");
    const auto size = custom("nx", 6, "ny", 4, "steps", 3);
    auto c = task->make_case(size, 3, Trial::nominal);
    ASSERT_EQ(c.buffers.size(), 2u);
    EXPECT_EQ(c.buffers[0].bytes(), 9u * 24 * 4);
    EXPECT_EQ(c.buffers[1].role, BufferRole::output);
    ASSERT_EQ(c.launches.size(), 3u);
    EXPECT_EQ(c.launches[1].args[0].buffer, 1);
    EXPECT_EQ(c.results, std::vector<int>{1});
    EXPECT_DOUBLE_EQ(c.work, 72.0 * 24 * 3);
    // Nominal start: equilibrium at rest, f_k = w_k rho, densest at the centre (3, 2).
    const float* f = c.buffers[0].as<float>();
    for (int k = 0; k < 9; ++k) EXPECT_NEAR(f[k * 24 + 2 * 6 + 3] / f[2 * 6 + 3], kLbmW[k] / kLbmW[0], 1e-6);
    EXPECT_NEAR(f[2 * 6 + 3] / kLbmW[0], 1.05, 1e-6);
}

// One step on a 4 x 3 grid, pulled, summed and relaxed by hand from the case's own start.
TEST(FieldsLbm, OneStepMatchesHandComputation) {
    auto task = load("lbm");
    const size_t nx = 4, ny = 3, n = nx * ny;
    const auto size = custom("nx", 4, "ny", 3, "steps", 1);
    auto c = task->make_case(size, 11, Trial::outlier);  // off-equilibrium, moving: every term counts
    const double tau = c.constants.at("tau");
    const float* f0 = c.buffers[0].as<float>();
    auto got = floats_of(task->reference(size, c).results.at(0));
    for (size_t y = 0; y < ny; ++y)
        for (size_t x = 0; x < nx; ++x) {
            double in[9], rho = 0, jx = 0, jy = 0;
            for (int k = 0; k < 9; ++k) {
                const size_t sx = (x + nx - kLbmCx[k]) % nx, sy = (y + ny - kLbmCy[k]) % ny;
                in[k] = f0[k * n + sy * nx + sx];
                rho += in[k];
                jx += kLbmCx[k] * in[k];
                jy += kLbmCy[k] * in[k];
            }
            const double ux = jx / rho, uy = jy / rho;
            for (int k = 0; k < 9; ++k) {
                const double cu = kLbmCx[k] * ux + kLbmCy[k] * uy;
                const double feq = kLbmW[k] * rho * (1 + 3 * cu + 4.5 * cu * cu - 1.5 * (ux * ux + uy * uy));
                EXPECT_NEAR(got[k * n + y * nx + x], in[k] - (in[k] - feq) / tau, 1e-6) << k << " " << x << " " << y;
            }
        }
}

TEST(FieldsLbm, ConservesMassAndMomentum) {
    auto task = load("lbm");
    const auto size = custom("nx", 10, "ny", 7, "steps", 9);
    auto c = task->make_case(size, 5, Trial::outlier);
    auto totals = [](const float* f, size_t n) {
        std::array<double, 3> t{};
        for (int k = 0; k < 9; ++k)
            for (size_t i = 0; i < n; ++i) {
                t[0] += f[k * n + i];
                t[1] += kLbmCx[k] * f[k * n + i];
                t[2] += kLbmCy[k] * f[k * n + i];
            }
        return t;
    };
    const auto before = totals(c.buffers[0].as<float>(), 70);
    const auto after_bytes = task->reference(size, c).results.at(0);
    const auto after = totals(reinterpret_cast<const float*>(after_bytes.data()), 70);
    for (int m = 0; m < 3; ++m) EXPECT_NEAR(after[m], before[m], 1e-4) << "moment " << m;
    EXPECT_GT(std::abs(before[1]) + std::abs(before[2]), 1e-3);  // the outlier start really moves
}

TEST(FieldsLbm, HardCodedTauFailsOutlierAndMessageNamesPopulation) {
    auto task = load("lbm");
    for (const auto& size : task->spec().profiles.at("small")) {
        auto c = task->make_case(size, 21, Trial::outlier);
        EXPECT_GE(c.constants.at("tau"), 0.6);
        EXPECT_LE(c.constants.at("tau"), 1.4);
        auto ref = task->reference(size, c);
        auto hard = c;
        hard.constants["tau"] = 0.8;
        auto r = task->check(size, c, ref, task->reference(size, hard).results);
        EXPECT_FALSE(r.pass) << size.label;
        EXPECT_GT(r.error, 2 * r.tolerance) << size.label;
    }
    const auto size = task->spec().profiles.at("small").front();
    auto c = task->make_case(size, 2, Trial::nominal);
    auto ref = task->reference(size, c);
    EXPECT_TRUE(task->check(size, c, ref, ref.results).pass);
    auto got = floats_of(ref.results[0]);
    got[7 * 48 * 40 + 3 * 48 + 5] += 0.01f;
    auto r = task->check(size, c, ref, {to_bytes(got)});
    EXPECT_FALSE(r.pass);
    EXPECT_NE(r.message.find("population 7 at (x=5, y=3)"), std::string::npos) << r.message;
}

// ---------------------------------------------------------------------------------------------
// ising

float uniform_of(uint32_t seed, uint32_t step, uint32_t site) {
    const uint32_t x = rng::fmix32(rng::fmix32(seed + step * 0x9E3779B9u) ^ site);
    return static_cast<float>(x >> 8) / 16777216.0f;
}

TEST(FieldsIsing, AcceptanceTableIsFloat32AndOutlierVariesIt) {
    auto task = load("ising");
    const auto size = task->spec().profiles.at("small").front();
    auto c = task->make_case(size, 9, Trial::nominal);
    ASSERT_EQ(c.buffers.size(), 2u);
    EXPECT_EQ(c.buffers[0].type, ElemType::i8);
    EXPECT_EQ(c.buffers[0].role, BufferRole::state);
    EXPECT_EQ(c.buffers[1].role, BufferRole::input);
    const float* p = c.buffers[1].as<float>();
    EXPECT_EQ(p[0], 1.0f);
    EXPECT_EQ(p[2], 1.0f);
    EXPECT_EQ(p[3], std::exp(-4.0f * 0.42f));
    EXPECT_EQ(p[4], std::exp(-8.0f * 0.42f));
    EXPECT_EQ(c.constants.at("seed"), 0xC0FFEE01u);
    EXPECT_EQ(c.launches.size(), 2u * 20);
    EXPECT_EQ(c.launches[3].args[4].u32, 3u);  // step
    EXPECT_DOUBLE_EQ(c.work, 2.0 * 64 * 48 * 20);
    for (uint64_t seed = 1; seed <= 20; ++seed) {
        auto o = task->make_case(size, seed, Trial::outlier);
        const double beta = o.constants.at("beta");
        EXPECT_TRUE(beta >= 0.3 && beta <= 0.6 && std::abs(beta - 0.42) >= 0.03) << beta;
        EXPECT_NE(o.buffers[1].as<float>()[3], p[3]);
        EXPECT_NE(o.constants.at("seed"), 0xC0FFEE01u);
    }
}

// A 2 x 2 lattice: every site sees each of its two neighbours twice through the wrap. One launch
// (colour 0) is replayed by hand: h, s*h, the acceptance, the hash.
TEST(FieldsIsing, TwoByTwoFirstStepByHand) {
    auto task = load("ising");
    const auto size = custom("nx", 2, "ny", 2, "sweeps", 1);
    for (uint64_t seed = 1; seed <= 8; ++seed) {
        auto c = task->make_case(size, seed, Trial::nominal);
        int8_t* s = c.buffers[0].as<int8_t>();
        const float* p = c.buffers[1].as<float>();
        const auto rseed = static_cast<uint32_t>(c.constants.at("seed"));
        std::array<int, 4> want = {s[0], s[1], s[2], s[3]};
        // step 0: sites (0,0) and (1,1); each has neighbours (1,0) and (0,1), twice each.
        for (uint32_t site : {0u, 3u}) {
            const int h = 2 * s[1] + 2 * s[2];
            const int prod = s[site] * h;
            if (uniform_of(rseed, 0, site) < p[(prod + 4) / 2]) want[site] = -want[site];
        }
        // step 1: sites (1,0) and (0,1), whose neighbours are the updated colour-0 sites.
        for (uint32_t site : {1u, 2u}) {
            const int h = 2 * want[0] + 2 * want[3];
            const int prod = want[site] * h;
            if (uniform_of(rseed, 1, site) < p[(prod + 4) / 2]) want[site] = -want[site];
        }
        const auto got = task->reference(size, c).results.at(0);
        for (int i = 0; i < 4; ++i) EXPECT_EQ(static_cast<int8_t>(got[i]), want[i]) << "seed " << seed << " site " << i;
    }
}

// The energy E = -sum over bonds of s_i s_j, counted by hand.
int energy(const std::vector<std::byte>& spins, size_t nx, size_t ny) {
    auto at = [&](size_t x, size_t y) { return static_cast<int>(static_cast<int8_t>(spins[(y % ny) * nx + x % nx])); };
    int e = 0;
    for (size_t y = 0; y < ny; ++y)
        for (size_t x = 0; x < nx; ++x) e -= at(x, y) * (at(x + 1, y) + at(x, y + 1));
    return e;
}

TEST(FieldsIsing, LimitsOfTheAcceptanceTable) {
    auto task = load("ising");
    const size_t nx = 12, ny = 8;
    const auto size = custom("nx", 12, "ny", 8, "sweeps", 3);
    auto c = task->make_case(size, 4, Trial::nominal);
    const std::vector<std::byte> start(c.buffers[0].data);
    auto run = [&](std::array<float, 5> table) {
        std::memcpy(c.buffers[1].as<float>(), table.data(), sizeof(table));
        return task->reference(size, c).results.at(0);
    };
    // Infinite temperature: every site flips at every launch; three sweeps flip every spin 3 times.
    auto hot = run({1, 1, 1, 1, 1});
    for (size_t i = 0; i < nx * ny; ++i) EXPECT_EQ(static_cast<int8_t>(hot[i]), -static_cast<int8_t>(start[i]));
    // Nothing is ever accepted: the lattice is unchanged.
    EXPECT_EQ(run({0, 0, 0, 0, 0}), start);
    // Zero temperature: moves that raise the energy are refused, so the energy never rises.
    EXPECT_LE(energy(run({1, 1, 1, 0, 0}), nx, ny), energy(start, nx, ny));
    EXPECT_LT(energy(run({1, 1, 1, 0, 0}), nx, ny), energy(start, nx, ny));  // a hot start has moves to make
}

TEST(FieldsIsing, CheckCountsDifferingSpinsAndNamesTheFirst) {
    auto task = load("ising");
    const auto size = task->spec().profiles.at("small").front();  // 64 x 48
    auto c = task->make_case(size, 6, Trial::outlier);
    auto ref = task->reference(size, c);
    auto r = task->check(size, c, ref, ref.results);
    EXPECT_TRUE(r.pass) << r.message;
    EXPECT_EQ(r.kind, "bit_exact");
    auto got = ref.results[0];
    for (size_t i : {size_t{5 * 64 + 9}, size_t{40 * 64 + 1}}) got[i] = std::byte(-static_cast<int8_t>(got[i]));
    r = task->check(size, c, ref, {got});
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.error, 2);
    EXPECT_EQ(r.worst_index, 5 * 64 + 9);
    EXPECT_NE(r.message.find("2 of 3072 spins differ"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("(x=9, y=5)"), std::string::npos) << r.message;
}

// ---------------------------------------------------------------------------------------------
// gradshaf

TEST(FieldsGradshaf, NominalStartAndConstants) {
    auto task = load("gradshaf");
    const auto size = custom("nr", 7, "nz", 5, "steps", 3);
    auto c = task->make_case(size, 1, Trial::nominal);
    ASSERT_EQ(c.buffers.size(), 3u);
    EXPECT_EQ(c.buffers[2].bytes(), 4096u * 4u);  // psi_axis: room for 4096 partial maxima (brief: the scratch)
    EXPECT_EQ(c.buffers[2].role, BufferRole::output);
    EXPECT_EQ(c.results, std::vector<int>{1});
    EXPECT_DOUBLE_EQ(c.work, 12.0 * 35 * 3);
    EXPECT_FLOAT_EQ(static_cast<float>(c.constants.at("dr")), 1.0f / 6);
    EXPECT_FLOAT_EQ(static_cast<float>(c.constants.at("dz")), 1.0f / 4);
    EXPECT_EQ(c.constants.at("p_axis"), 200.0);
    const float* psi = c.buffers[0].as<float>();
    EXPECT_EQ(psi[0], 0.0f);
    EXPECT_EQ(psi[6], 0.0f);
    EXPECT_FLOAT_EQ(psi[2 * 7 + 3], 1.0f);  // sin(pi/2) sin(pi/2) at the centre
    EXPECT_FLOAT_EQ(psi[1 * 7 + 1], static_cast<float>(std::sin(std::numbers::pi / 4) * std::sin(std::numbers::pi / 6)));
}

// One step on a 5 x 4 grid from the outlier start (random boundary, noise), by hand.
TEST(FieldsGradshaf, OneStepMatchesHandComputation) {
    auto task = load("gradshaf");
    const size_t nr = 5, nz = 4;
    const auto size = custom("nr", 5, "nz", 4, "steps", 1);
    auto c = task->make_case(size, 3, Trial::outlier);
    const float* psi = c.buffers[0].as<float>();
    const auto& k = c.constants;
    double axis = -1e30;
    for (size_t j = 1; j + 1 < nz; ++j)
        for (size_t i = 1; i + 1 < nr; ++i) axis = std::max(axis, static_cast<double>(psi[j * nr + i]));
    auto got = floats_of(task->reference(size, c).results.at(0));
    for (size_t j = 0; j < nz; ++j)
        for (size_t i = 0; i < nr; ++i) {
            const size_t idx = j * nr + i;
            if (i == 0 || j == 0 || i == nr - 1 || j == nz - 1) {
                EXPECT_EQ(got[idx], psi[idx]);
                continue;
            }
            const double dr = k.at("dr"), dz = k.at("dz"), r = k.at("rmin") + static_cast<double>(i) * dr;
            const double x = psi[idx] / axis;
            const double jphi = (x > 0 && x < 1) ? r * k.at("p_axis") * 4 * x * (1 - x) : 0;
            const double rhs = -k.at("mu0") * r * jphi;
            // psi_RR - psi_R / R + psi_ZZ by central differences.
            const double lap = (psi[idx + 1] - 2.0 * psi[idx] + psi[idx - 1]) / (dr * dr) -
                               (psi[idx + 1] - psi[idx - 1]) / (2 * dr * r) +
                               (psi[idx + nr] - 2.0 * psi[idx] + psi[idx - nr]) / (dz * dz);
            const double diag = -2 / (dr * dr) - 2 / (dz * dz);
            EXPECT_NEAR(got[idx], psi[idx] + k.at("omega") * (rhs - lap) / diag, 1e-5) << i << " " << j;
        }
}

TEST(FieldsGradshaf, OutlierBoundaryExceedsInteriorMaxAndHardCodedPaxisFails) {
    auto task = load("gradshaf");
    for (const auto& size : task->spec().profiles.at("small")) {
        const auto nr = static_cast<size_t>(size.param("nr")), nz = static_cast<size_t>(size.param("nz"));
        auto c = task->make_case(size, 13, Trial::outlier);
        const float* psi = c.buffers[0].as<float>();
        float interior = -1e30f, right_edge = -1e30f;
        for (size_t j = 1; j + 1 < nz; ++j) {
            for (size_t i = 1; i + 1 < nr; ++i) interior = std::max(interior, psi[j * nr + i]);
            right_edge = std::max(right_edge, psi[j * nr + nr - 1]);
        }
        // A reduction that strays onto the boundary sees another maximum.
        EXPECT_GT(right_edge, interior) << size.label;
        EXPECT_NE(c.constants.at("dr"), static_cast<double>(1.0f / static_cast<float>(nr - 1)));
        auto ref = task->reference(size, c);
        auto hard = c;
        hard.constants["p_axis"] = 200.0;
        auto r = task->check(size, c, ref, task->reference(size, hard).results);
        EXPECT_FALSE(r.pass) << size.label;
        auto nominal = task->make_case(size, 13, Trial::nominal);
        auto nominal_ref = task->reference(size, nominal);
        EXPECT_TRUE(task->check(size, nominal, nominal_ref, nominal_ref.results).pass);
    }
}

// ---------------------------------------------------------------------------------------------
// the real kernels through PoCL

std::string write_temp(const std::string& name, std::string_view text) {
    const std::string path = ::testing::TempDir() + "fields_" + std::to_string(::getpid()) + "_" + name;
    std::ofstream(path) << text;
    return path;
}

nlohmann::json eval_small(const std::string& task, const std::string& path, const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"eval", task, path, "--backend", "opencl", "--profile", "small", "--sizes", "all",
                                     "--check-only", "--json", "--timeout", "60"};
    args.insert(args.end(), extra.begin(), extra.end());
    const auto r = test::run_kevo(args);
    auto doc = r.json();
    EXPECT_TRUE(doc.is_object()) << "stdout is not one JSON document:\n" << r.out << "\nstderr:\n" << r.err;
    return doc;
}

class FieldsSeeds : public ::testing::TestWithParam<std::string> {};

TEST_P(FieldsSeeds, SeedIsCorrectAtEverySmallSize) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string path = write_temp(GetParam() + "_seed.cl", task_file(GetParam(), "seed.cl"));
    const auto doc = eval_small(GetParam(), path);
    std::remove(path.c_str());
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc["verdict"], "ok") << doc.dump(2);
    EXPECT_EQ(doc["sizes"].size(), 4u) << doc.dump(2);
    for (const auto& s : doc["sizes"]) EXPECT_TRUE(s["correct"].get<bool>()) << s.dump();
}

INSTANTIATE_TEST_SUITE_P(Fields, FieldsSeeds, ::testing::ValuesIn(kFieldTasks));

class FieldsBroken : public ::testing::TestWithParam<std::string> {};

TEST_P(FieldsBroken, VariantIsIncorrect) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string stem = GetParam();
    const std::string task = stem.substr(0, stem.find('_'));
    const auto doc = eval_small(task, test::candidate(stem + ".cl"), {"--seed", "5"});
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc["verdict"], "incorrect") << doc.dump(2);
    EXPECT_FALSE(doc["diagnostics"].get<std::string>().empty());
}

INSTANTIATE_TEST_SUITE_P(Fields, FieldsBroken,
                         ::testing::Values("lbm_wrong_constant", "lbm_off_by_one", "lbm_hardcoded_size",
                                           "ising_wrong_constant", "ising_off_by_one", "ising_hardcoded_size",
                                           "gradshaf_wrong_constant", "gradshaf_off_by_one", "gradshaf_hardcoded_size"));

TEST(FieldsCandidatesText, VariantsOpenWithACommentAndKeepTheSignatures) {
    for (const auto& name : kFieldTasks) {
        auto task = load(name);
        for (const char* kind : {"_wrong_constant", "_off_by_one", "_hardcoded_size"})
            for (const char* suffix : {".cu", ".cl"}) {
                const std::string text = test::slurp(test::candidate(name + kind + suffix));
                ASSERT_FALSE(text.empty()) << name << kind << suffix;
                EXPECT_EQ(text.rfind("// " + name + kind + ":", 0), 0u) << name << kind << suffix;
                for (const auto& k : task->spec().kernels)
                    EXPECT_NE(text.find(signature_text(k, language_for_suffix(std::string_view(suffix).substr(1)))),
                              std::string::npos)
                        << name << kind << suffix << " " << k.name;
            }
    }
}

}  // namespace
}  // namespace kevo
