// Tests of the first three tasks (saxpy, heat2d, nbody) and the shared check helpers: specs and
// sizes, deterministic inputs, outlier trials, references against hand computations, checks,
// briefs and seeds, and the fault kernels under tests/candidates/.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>

#include "seed_geometry.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

std::unique_ptr<Task> load(const std::string& name) {
    auto task = make_task(name);
    EXPECT_TRUE(task.has_value()) << name;
    return std::move(task.value());
}

std::vector<float> floats_of(const std::vector<std::byte>& bytes) {
    auto view = as_floats(bytes);
    return {view.begin(), view.end()};
}

std::vector<std::byte> bytes_of(const std::vector<float>& values) { return to_bytes(values); }

SizeSpec find_size(const Task& task, const std::string& profile, const std::string& label) {
    for (const auto& s : task.spec().profiles.at(profile))
        if (s.label == label) return s;
    ADD_FAILURE() << "no size " << label << " in " << profile;
    return {};
}

// Runs one size's case through the reference and returns the result as floats.
std::vector<float> reference_of(const Task& task, const SizeSpec& size, const Case& c) {
    auto ref = task.reference(size, c);
    EXPECT_EQ(ref.results.size(), c.results.size());
    return floats_of(ref.results.at(0));
}

const std::vector<std::string> kTasks = {"saxpy", "heat2d", "nbody"};

// ---------------------------------------------------------------------------------------------
// check helpers

TEST(TasksChecks, ShortSciDropsExponentPadding) {
    EXPECT_EQ(short_sci(3.14e-2), "3.1e-2");
    EXPECT_EQ(short_sci(1e-4), "1.0e-4");
    EXPECT_EQ(short_sci(2.5e12), "2.5e12");
    EXPECT_EQ(short_sci(0.0), "0.0e0");
}

TEST(TasksChecks, ToleranceUsesFloorAndMagnitude) {
    EXPECT_DOUBLE_EQ((Tolerance{0, 1e-5, 1}.resolve(0.5)), 1e-5);
    EXPECT_DOUBLE_EQ((Tolerance{0, 1e-5, 1}.resolve(200)), 2e-3);
    EXPECT_DOUBLE_EQ((Tolerance{1e-4, 1e-5, 0}.resolve(10)), 2e-4);
}

TEST(TasksChecks, IndexFormattersNameTheElement) {
    EXPECT_EQ(flat_index()(42), "[42]");
    EXPECT_EQ(grid_index(5, 4)(17), "(x=2, y=3)");
    EXPECT_EQ(grid_index(4, 3, 2)(13), "(x=1, y=0, z=1)");
    EXPECT_EQ(vec4_index("body")(9), "body 2 (y)");
}

TEST(TasksChecks, MaxAbsReportsWorstElementAndTolerance) {
    std::vector<float> want(100000, 1.0f), got = want;
    got[77777] = 1.5f;  // the worst
    got[123] = 1.2f;
    auto r = check_max_abs(got, want, Tolerance{1e-4, 0, 0}, grid_index(1000, 100));
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.kind, "max_abs");
    EXPECT_EQ(r.worst_index, 77777);
    EXPECT_NEAR(r.error, 0.5, 1e-7);
    EXPECT_DOUBLE_EQ(r.tolerance, 1e-4);
    EXPECT_NE(r.message.find("(x=777, y=77)"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("got 1.5, expected 1"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("tolerance 1.0e-4"), std::string::npos) << r.message;

    auto ok = check_max_abs(want, want, Tolerance{1e-4, 0, 0});
    EXPECT_TRUE(ok.pass);
    EXPECT_EQ(ok.error, 0);
}

TEST(TasksChecks, NonFiniteFailsWithFirstIndex) {
    std::vector<float> want(50000, 2.0f), got = want;
    got[40000] = std::numeric_limits<float>::quiet_NaN();
    got[30001] = std::numeric_limits<float>::infinity();
    auto r = check_max_abs(got, want, Tolerance{1, 1, 0});
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.kind, "nan");
    EXPECT_EQ(r.worst_index, 30001);
    EXPECT_NE(r.message.find("Inf at [30001]"), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("first of 2"), std::string::npos) << r.message;

    auto sized = check_max_abs(std::span<const float>(got).first(10), want, Tolerance{1, 1, 0});
    EXPECT_FALSE(sized.pass);
    EXPECT_EQ(sized.kind, "size");
}

TEST(TasksChecks, OutlierDrawAvoidsTheNominalGap) {
    for (int k = 0; k < 1000; ++k) {
        const double u = k / 1000.0;
        const double v = draw_outlier(u, 0.05, 0.245, 0.20, 0.02);
        EXPECT_GE(v, 0.05);
        EXPECT_LE(v, 0.245);
        EXPECT_FALSE(v > 0.18 && v < 0.22) << v;
    }
}

// ---------------------------------------------------------------------------------------------
// specs, sizes, briefs, seeds (all three tasks)

TEST(TasksSpec, ProfilesHaveThreeInDistributionSizesAndOneHeldOut) {
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto& spec = task->spec();
        EXPECT_EQ(spec.name, name);
        for (const char* profile : {"small", "paper", "large"}) {
            ASSERT_TRUE(spec.profiles.count(profile)) << name << " " << profile;
            const auto& sizes = spec.profiles.at(profile);
            ASSERT_EQ(sizes.size(), 4u) << name << " " << profile;
            int heldout = 0;
            std::set<std::string> labels;
            for (const auto& s : sizes) {
                heldout += s.heldout;
                labels.insert(s.label);
            }
            EXPECT_EQ(heldout, 1) << name << " " << profile;
            EXPECT_EQ(labels.size(), 4u) << name << " " << profile;
        }
    }
}

// label -> held-out, for one profile.
std::map<std::string, bool> labels_of(const Task& task, const std::string& profile) {
    std::map<std::string, bool> out;
    for (const auto& s : task.spec().profiles.at(profile)) out[s.label] = s.heldout;
    return out;
}

TEST(TasksSpec, PaperSizesAreThoseOfTasksMd) {
    using M = std::map<std::string, bool>;
    EXPECT_EQ(labels_of(*load("saxpy"), "paper"),
              (M{{"1048576", false}, {"16777216", false}, {"67108864", false}, {"4194304", true}}));
    EXPECT_EQ(labels_of(*load("heat2d"), "paper"),
              (M{{"256x256x50", false}, {"512x512x100", false}, {"1024x1024x50", false}, {"768x768x75", true}}));
    EXPECT_EQ(labels_of(*load("nbody"), "paper"), (M{{"256", false}, {"1024", false}, {"2048", false}, {"512", true}}));

    auto heat = load("heat2d");
    const auto s = find_size(*heat, "paper", "512x512x100");
    EXPECT_EQ(s.param("nx"), 512);
    EXPECT_EQ(s.param("ny"), 512);
    EXPECT_EQ(s.param("steps"), 100);
    auto nbody = load("nbody");
    for (const auto& size : nbody->spec().profiles.at("small")) EXPECT_EQ(size.param("steps"), 10);
}

TEST(TasksSpec, SmallAndLargeProfiles) {
    using M = std::map<std::string, bool>;
    EXPECT_EQ(labels_of(*load("saxpy"), "small"),
              (M{{"65536", false}, {"262144", false}, {"1048576", false}, {"300007", true}}));
    EXPECT_EQ(labels_of(*load("heat2d"), "small"),
              (M{{"64x64x10", false}, {"96x80x10", false}, {"128x128x20", false}, {"100x75x15", true}}));
    EXPECT_EQ(labels_of(*load("nbody"), "small"), (M{{"128", false}, {"256", false}, {"512", false}, {"384", true}}));
    EXPECT_EQ(labels_of(*load("saxpy"), "large"),
              (M{{"67108864", false}, {"134217728", false}, {"268435456", false}, {"100663303", true}}));
    EXPECT_EQ(labels_of(*load("heat2d"), "large"),
              (M{{"4096x4096x20", false}, {"8192x8192x10", false}, {"6144x4096x20", false}, {"5000x3000x20", true}}));
    EXPECT_EQ(labels_of(*load("nbody"), "large"),
              (M{{"8192", false}, {"16384", false}, {"32768", false}, {"12288", true}}));
    auto heat = load("heat2d");
    const auto s = find_size(*heat, "small", "96x80x10");
    EXPECT_EQ(s.param("nx"), 96);
    EXPECT_EQ(s.param("ny"), 80);
}

TEST(TasksSpec, OrderRegimeAndBound) {
    EXPECT_EQ(load("saxpy")->spec().order, 0);
    EXPECT_EQ(load("heat2d")->spec().order, 10);
    EXPECT_EQ(load("nbody")->spec().order, 40);
    EXPECT_EQ(load("saxpy")->spec().regime, "R0 smoke");
    EXPECT_EQ(load("heat2d")->spec().regime, "R1 stencil");
    EXPECT_EQ(load("nbody")->spec().regime, "R2 compute-bound");
    EXPECT_EQ(load("nbody")->spec().bound, Bound::compute);
    EXPECT_EQ(load("heat2d")->spec().bound, Bound::bandwidth);
}

TEST(TasksSpec, BriefNamesSignaturesAndNoHeldOutSize) {
    for (const auto& name : kTasks) {
        auto task = load(name);
        const std::string brief(task_file(name, "brief.md"));
        ASSERT_FALSE(brief.empty()) << name;
        for (const auto& k : task->spec().kernels) {
            EXPECT_NE(brief.find(signature_text(k, language_named("cuda"))), std::string::npos) << name << ": " << signature_text(k, language_named("cuda"));
            EXPECT_NE(brief.find(signature_text(k, language_named("opencl"))), std::string::npos) << name << ": " << signature_text(k, language_named("opencl"));
        }
        for (const auto& [profile, sizes] : task->spec().profiles)
            for (const auto& s : sizes)
                if (s.heldout) EXPECT_EQ(brief.find(s.label), std::string::npos) << name << " leaks " << s.label;
        EXPECT_NE(brief.find("ceil("), std::string::npos) << name << " must say how the grid is derived";
    }
}

TEST(TasksSpec, SeedsHaveExactSignaturesAndDefaultGeometry) {
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto& kernel = task->spec().kernels.at(0);
        for (const char* file : {"seed.cu", "seed.cl"}) {
            const std::string seed(task_file(name, file));
            ASSERT_FALSE(seed.empty()) << name << " " << file;
            const auto& signature = signature_text(kernel, language_for_suffix(std::string_view(file).substr(5)));
            EXPECT_NE(seed.find(signature), std::string::npos) << name << " " << file;
            // The first value of every knob the launch directive names is the default block.
            test::expect_seed_declares_default_geometry(*task, file, seed);
        }
    }
}

TEST(TasksSpec, CasesDescribeTheirLaunchPlan) {
    auto saxpy = load("saxpy");
    auto sc = saxpy->make_case(find_size(*saxpy, "small", "300007"), 1, Trial::nominal);
    ASSERT_EQ(sc.launches.size(), 1u);
    EXPECT_EQ(sc.launches[0].domain, (Dim3{300007, 1, 1}));
    EXPECT_EQ(sc.launches[0].args.size(), 4u);
    EXPECT_EQ(sc.results, std::vector<int>{1});
    EXPECT_EQ(sc.buffers[0].role, BufferRole::input);
    EXPECT_EQ(sc.buffers[1].role, BufferRole::state);
    EXPECT_DOUBLE_EQ(sc.work, 12.0 * 300007);
    EXPECT_DOUBLE_EQ(sc.working_set_bytes, 8.0 * 300007);

    auto heat = load("heat2d");
    auto hc = heat->make_case(find_size(*heat, "small", "100x75x15"), 1, Trial::nominal);
    ASSERT_EQ(hc.launches.size(), 15u);
    EXPECT_EQ(hc.launches[0].domain, (Dim3{100, 75, 1}));
    EXPECT_EQ(hc.launches[0].args[0].buffer, 0);
    EXPECT_EQ(hc.launches[0].args[1].buffer, 1);
    EXPECT_EQ(hc.launches[1].args[0].buffer, 1);
    EXPECT_EQ(hc.launches[1].args[1].buffer, 0);
    EXPECT_EQ(hc.results, std::vector<int>{1});  // 15 steps: the last one writes B
    EXPECT_EQ(hc.buffers[0].role, BufferRole::state);
    EXPECT_EQ(hc.buffers[1].role, BufferRole::output);
    EXPECT_DOUBLE_EQ(hc.work, 8.0 * 100 * 75 * 15);
    auto hc_even = heat->make_case(find_size(*heat, "small", "64x64x10"), 1, Trial::nominal);
    EXPECT_EQ(hc_even.results, std::vector<int>{0});  // 10 steps: back in A

    auto nbody = load("nbody");
    auto nc = nbody->make_case(find_size(*nbody, "small", "128"), 1, Trial::nominal);
    ASSERT_EQ(nc.launches.size(), 10u);
    EXPECT_EQ(nc.launches[0].domain, (Dim3{128, 1, 1}));
    EXPECT_EQ(nc.launches[0].args.size(), 9u);
    EXPECT_EQ(nc.results, std::vector<int>{0});  // 10 steps: back in pos_a
    EXPECT_DOUBLE_EQ(nc.work, 20.0 * 128 * 128 * 10);
    EXPECT_EQ(nc.buffers[nc.launches[1].args[0].buffer].name, "pos_b");
    EXPECT_EQ(nc.buffers[nc.launches[1].args[1].buffer].name, "pos_a");
}

// ---------------------------------------------------------------------------------------------
// deterministic inputs, outlier trials

TEST(TasksCases, DeterministicForASeedAndDifferentAcrossSeeds) {
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto size = task->spec().profiles.at("small").front();
        auto a = task->make_case(size, 42, Trial::nominal);
        auto b = task->make_case(size, 42, Trial::nominal);
        auto c = task->make_case(size, 43, Trial::nominal);
        ASSERT_EQ(a.buffers.size(), b.buffers.size());
        bool any_differs = false;
        for (size_t i = 0; i < a.buffers.size(); ++i) {
            EXPECT_EQ(a.buffers[i].data, b.buffers[i].data) << name << " buffer " << i;
            if (a.buffers[i].role != BufferRole::output) any_differs |= a.buffers[i].data != c.buffers[i].data;
        }
        EXPECT_TRUE(any_differs) << name;
        EXPECT_EQ(a.constants, c.constants) << name << ": nominal constants do not depend on the seed";
    }
}

TEST(TasksCases, OutlierTrialChangesEveryConstant) {
    const std::map<std::string, std::map<std::string, double>> nominal = {
        {"saxpy", {{"a", 2.5}}}, {"heat2d", {{"alpha", 0.2}}}, {"nbody", {{"dt", 1e-3}, {"eps", 0.05}, {"G", 1.0}}}};
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto size = task->spec().profiles.at("small").front();
        auto base = task->make_case(size, 7, Trial::nominal);
        for (const auto& [key, value] : nominal.at(name)) EXPECT_NEAR(base.constants.at(key), value, 1e-6 * value);
        std::set<double> seen;
        for (uint64_t seed = 1; seed <= 8; ++seed) {
            auto c = task->make_case(size, seed, Trial::outlier);
            for (const auto& [key, value] : nominal.at(name)) {
                const double v = c.constants.at(key);
                EXPECT_GT(std::fabs(v - value), 0.05 * value) << name << " " << key << " seed " << seed;
                seen.insert(v);
            }
        }
        EXPECT_EQ(seen.size(), 8 * nominal.at(name).size()) << name << ": outlier constants must vary with the seed";
    }
}

TEST(TasksCases, OutlierConstantsStayInTheirStableRange) {
    auto heat = load("heat2d");
    auto nbody = load("nbody");
    auto saxpy = load("saxpy");
    for (uint64_t seed = 100; seed < 140; ++seed) {
        const double alpha = heat->make_case(heat->spec().profiles.at("small")[0], seed, Trial::outlier).constants.at("alpha");
        EXPECT_GE(alpha, 0.05 - 1e-7);
        EXPECT_LE(alpha, 0.245 + 1e-7);
        auto nc = nbody->make_case(nbody->spec().profiles.at("small")[0], seed, Trial::outlier);
        EXPECT_GE(nc.constants.at("dt"), 5e-4 - 1e-9);
        EXPECT_LE(nc.constants.at("dt"), 1.5e-3 + 1e-9);
        EXPECT_GE(nc.constants.at("eps"), 0.03 - 1e-7);
        EXPECT_LE(nc.constants.at("eps"), 0.08 + 1e-7);
        EXPECT_GE(nc.constants.at("G"), 0.5 - 1e-7);
        EXPECT_LE(nc.constants.at("G"), 2.0 + 1e-7);
        const double a = saxpy->make_case(saxpy->spec().profiles.at("small")[0], seed, Trial::outlier).constants.at("a");
        EXPECT_GE(std::fabs(a), 1.0 - 1e-7);
        EXPECT_LE(std::fabs(a), 4.0 + 1e-7);
    }
}

TEST(TasksCases, OutlierInputsAreScaled) {
    auto heat = load("heat2d");
    const auto size = find_size(*heat, "small", "64x64x10");
    auto nominal = heat->make_case(size, 5, Trial::nominal);
    auto outlier = heat->make_case(size, 5, Trial::outlier);
    const float* u = nominal.buffers[0].as<float>();
    const float* v = outlier.buffers[0].as<float>();
    EXPECT_EQ(u[0], 0.0f);
    EXPECT_EQ(v[0], -20.0f);  // the boundary is offset too
    EXPECT_FLOAT_EQ(v[64 * 10 + 10], 50.0f * u[64 * 10 + 10] - 20.0f);

    auto saxpy = load("saxpy");
    auto sc = saxpy->make_case(find_size(*saxpy, "small", "65536"), 5, Trial::outlier);
    float peak = 0;
    for (float x : floats_of(sc.buffers[0].data)) peak = std::max(peak, std::fabs(x));
    for (float y : floats_of(sc.buffers[1].data)) peak = std::max(peak, std::fabs(y));
    EXPECT_EQ(peak, 1e6f);

    auto nbody = load("nbody");
    auto nn = nbody->make_case(find_size(*nbody, "small", "128"), 5, Trial::nominal);
    auto no = nbody->make_case(find_size(*nbody, "small", "128"), 5, Trial::outlier);
    EXPECT_FLOAT_EQ(no.buffers[0].as<float>()[5], 2.0f * nn.buffers[0].as<float>()[5]);
    EXPECT_FLOAT_EQ(no.buffers[4].as<float>()[5], 0.5f * nn.buffers[4].as<float>()[5]);
    EXPECT_EQ(no.buffers[0].as<float>()[3], 0.0f);  // w
    EXPECT_NEAR(no.buffers[1].as<float>()[5], 200.0f * nn.buffers[1].as<float>()[5], 1e-5);
}

// ---------------------------------------------------------------------------------------------
// references against hand computations

TEST(TasksReference, SaxpyMatchesHandComputation) {
    auto task = load("saxpy");
    SizeSpec size{"5", false, {{"n", 5}}};
    auto c = task->make_case(size, 3, Trial::outlier);
    const float a = static_cast<float>(c.constants.at("a"));
    const std::vector<float> x = floats_of(c.buffers[0].data), y = floats_of(c.buffers[1].data);
    const auto got = reference_of(*task, size, c);
    ASSERT_EQ(got.size(), 5u);
    for (int i = 0; i < 5; ++i) EXPECT_NEAR(got[i], a * x[i] + y[i], 1e-6 * std::max(1.0f, std::fabs(got[i]))) << i;
}

TEST(TasksReference, Heat2dOneStepOnAFiveByFourGrid) {
    auto task = load("heat2d");
    SizeSpec size{"5x4x1", false, {{"nx", 5}, {"ny", 4}, {"steps", 1}}};
    auto c = task->make_case(size, 11, Trial::nominal);
    ASSERT_EQ(c.results, std::vector<int>{1});
    // Replace the field by known values, boundary included, to exercise the Dirichlet copy.
    float* u = c.buffers[0].as<float>();
    for (int i = 0; i < 20; ++i) u[i] = static_cast<float>(i * i % 7);
    const double alpha = c.constants.at("alpha");
    const auto got = reference_of(*task, size, c);
    ASSERT_EQ(got.size(), 20u);
    auto at = [&](int x, int y) { return static_cast<double>(u[y * 5 + x]); };
    for (int y = 0; y < 4; ++y)
        for (int x = 0; x < 5; ++x) {
            const bool edge = x == 0 || y == 0 || x == 4 || y == 3;
            const double want =
                edge ? at(x, y)
                     : at(x, y) + alpha * (at(x - 1, y) + at(x + 1, y) + at(x, y - 1) + at(x, y + 1) - 4 * at(x, y));
            EXPECT_NEAR(got[y * 5 + x], want, 1e-6) << "(x=" << x << ", y=" << y << ")";
        }
    // Cell (x=1, y=1) by hand: centre 36%7 = 1; W 25%7 = 4, E 49%7 = 0, N 1%7 = 1, S 121%7 = 2.
    EXPECT_NEAR(got[6], 1.0 + 0.2 * (4 + 0 + 1 + 2 - 4 * 1.0), 1e-6);
}

TEST(TasksReference, Heat2dTwoStepsEqualTwoSingleSteps) {
    auto task = load("heat2d");
    SizeSpec one{"9x6x1", false, {{"nx", 9}, {"ny", 6}, {"steps", 1}}};
    SizeSpec two{"9x6x2", false, {{"nx", 9}, {"ny", 6}, {"steps", 2}}};
    auto c2 = task->make_case(two, 4, Trial::outlier);
    EXPECT_EQ(c2.results, std::vector<int>{0});
    auto c1 = task->make_case(one, 4, Trial::outlier);
    const auto after_one = reference_of(*task, one, c1);
    std::memcpy(c1.buffers[0].data.data(), after_one.data(), after_one.size() * sizeof(float));
    const auto after_two = reference_of(*task, one, c1);
    const auto direct = reference_of(*task, two, c2);
    for (size_t i = 0; i < direct.size(); ++i) EXPECT_NEAR(direct[i], after_two[i], 1e-5) << i;
}

TEST(TasksReference, NbodyTwoBodiesOneStep) {
    auto task = load("nbody");
    SizeSpec size{"2", false, {{"n", 2}, {"steps", 1}}};
    auto c = task->make_case(size, 9, Trial::outlier);
    ASSERT_EQ(c.results, std::vector<int>{2});  // one step: pos_b
    float* pos = c.buffers[0].as<float>();
    float* vel = c.buffers[1].as<float>();
    float* mass = c.buffers[4].as<float>();
    const float p[8] = {0.1f, -0.2f, 0.3f, 0.0f, 0.5f, 0.1f, -0.4f, 0.0f};
    const float v[8] = {0.01f, 0.0f, -0.02f, 0.0f, 0.0f, 0.03f, 0.0f, 0.0f};
    std::memcpy(pos, p, sizeof p);
    std::memcpy(vel, v, sizeof v);
    mass[0] = 1.25f;
    mass[1] = 0.75f;
    const double dt = c.constants.at("dt"), eps = c.constants.at("eps"), g = c.constants.at("G");
    const auto got = reference_of(*task, size, c);
    ASSERT_EQ(got.size(), 8u);
    for (int i = 0; i < 2; ++i) {
        const int j = 1 - i;
        double d[3], r2 = eps * eps;
        for (int k = 0; k < 3; ++k) {
            d[k] = static_cast<double>(p[4 * j + k]) - p[4 * i + k];
            r2 += d[k] * d[k];
        }
        for (int k = 0; k < 3; ++k) {
            const double acc = g * mass[j] * d[k] / std::pow(r2, 1.5);  // the self term is zero
            const double vel_new = v[4 * i + k] + acc * dt;
            EXPECT_NEAR(got[4 * i + k], p[4 * i + k] + vel_new * dt, 1e-7) << "body " << i << " axis " << k;
        }
        EXPECT_EQ(got[4 * i + 3], 0.0f);
    }
}

// ---------------------------------------------------------------------------------------------
// checks of each task

TEST(TasksCheck, PassesItselfFailsPerturbedAndNan) {
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto size = task->spec().profiles.at("small")[1];
        auto c = task->make_case(size, 21, Trial::nominal);
        auto ref = task->reference(size, c);
        auto same = task->check(size, c, ref, ref.results);
        EXPECT_TRUE(same.pass) << name << ": " << same.message;
        EXPECT_EQ(same.error, 0) << name;

        const auto n = ref.results[0].size() / sizeof(float);
        const size_t victim = n / 3 + 1;
        auto perturbed = floats_of(ref.results[0]);
        perturbed[victim] += 0.5f;
        perturbed[n / 2] += 0.25f;
        auto bad = task->check(size, c, ref, {bytes_of(perturbed)});
        EXPECT_FALSE(bad.pass) << name;
        if (name == "saxpy") {
            // Per element: the worst is the larger error relative to its element's own terms.
            EXPECT_EQ(bad.kind, "per_element") << name;
            const bool victim_worst = bad.worst_index == static_cast<int64_t>(victim);
            EXPECT_TRUE(victim_worst || bad.worst_index == static_cast<int64_t>(n / 2)) << bad.worst_index;
            EXPECT_NEAR(bad.error, victim_worst ? 0.5 : 0.25, 1e-3) << name;
        } else {
            EXPECT_EQ(bad.kind, "max_abs") << name;
            EXPECT_EQ(bad.worst_index, static_cast<int64_t>(victim)) << name;
            EXPECT_NEAR(bad.error, 0.5, 1e-3) << name;
        }

        auto poisoned = floats_of(ref.results[0]);
        poisoned[n - 1] = std::numeric_limits<float>::quiet_NaN();
        poisoned[victim] = std::numeric_limits<float>::quiet_NaN();
        auto nan = task->check(size, c, ref, {bytes_of(poisoned)});
        EXPECT_FALSE(nan.pass) << name;
        EXPECT_EQ(nan.kind, "nan") << name;
        EXPECT_EQ(nan.worst_index, static_cast<int64_t>(victim)) << name;

        auto missing = task->check(size, c, ref, {});
        EXPECT_FALSE(missing.pass) << name;
    }
}

TEST(TasksCheck, Heat2dMessageGivesCoordinatesAndValues) {
    auto task = load("heat2d");
    const auto size = find_size(*task, "small", "96x80x10");
    auto c = task->make_case(size, 2, Trial::nominal);
    auto ref = task->reference(size, c);
    auto got = floats_of(ref.results[0]);
    got[3 * 96 + 17] += 0.03f;
    auto r = task->check(size, c, ref, {bytes_of(got)});
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.worst_index, 3 * 96 + 17);
    EXPECT_NE(r.message.find("at (x=17, y=3): got "), std::string::npos) << r.message;
    EXPECT_NE(r.message.find("expected "), std::string::npos) << r.message;
    // 2e-5 times the field's magnitude: the start's (U[0, 1)), which the result never exceeds.
    EXPECT_NEAR(r.tolerance, 2e-5 * max_magnitude(as_floats(c.buffers[0].data)), 1e-12);
    EXPECT_NEAR(r.tolerance, 2e-5, 1e-9);
}

TEST(TasksCheck, NbodyMessageNamesTheBody) {
    auto task = load("nbody");
    const auto size = find_size(*task, "small", "128");
    auto c = task->make_case(size, 2, Trial::nominal);
    auto ref = task->reference(size, c);
    auto got = floats_of(ref.results[0]);
    got[4 * 37 + 2] -= 0.1f;
    auto r = task->check(size, c, ref, {bytes_of(got)});
    EXPECT_FALSE(r.pass);
    EXPECT_NE(r.message.find("body 37 (z)"), std::string::npos) << r.message;
}

// ---------------------------------------------------------------------------------------------
// The design of the trials catches the faults it is meant to catch. The faulty kernels are
// emulated on the CPU here (the references with a wrong constant, a dropped tail); the real
// kernels under tests/candidates/ run through the evaluator's own tests.

TEST(TasksTrials, HardCodedConstantsFailTheOutlierTrialButPassNominal) {
    auto heat = load("heat2d");
    auto nbody = load("nbody");
    for (uint64_t seed = 1; seed <= 3; ++seed) {
        for (const auto& size : heat->spec().profiles.at("small")) {
            auto nominal = heat->make_case(size, seed, Trial::nominal);
            auto c = heat->make_case(size, seed, Trial::outlier);
            auto ref = heat->reference(size, c);
            auto hard = c;
            hard.constants["alpha"] = static_cast<double>(0.20f);
            EXPECT_FALSE(heat->check(size, c, ref, heat->reference(size, hard).results).pass) << size.label;
            auto nominal_ref = heat->reference(size, nominal);
            EXPECT_TRUE(heat->check(size, nominal, nominal_ref, nominal_ref.results).pass);
        }
        // A kernel that hard-codes dt fails the outlier trial at every size (the fast outlier
        // bodies make the drift v*dt expose it).
        for (const auto& size : nbody->spec().profiles.at("small")) {
            auto c = nbody->make_case(size, seed, Trial::outlier);
            auto hard = c;
            hard.constants["dt"] = static_cast<double>(1e-3f);
            auto r = nbody->check(size, c, nbody->reference(size, c), nbody->reference(size, hard).results);
            EXPECT_FALSE(r.pass) << size.label << " seed " << seed;
            EXPECT_GT(r.error, 2 * r.tolerance) << size.label << " seed " << seed << ": too close to call";
        }
    }
}

// With positions checked to 1e-4 of the extent (the first draft allowed 1e-3 + 1e-3 of it), a
// kernel that hard-codes G fails the outlier trial at every size, and one that hard-codes eps at
// some size for every seed (an outlier eps can fall as close as 0.005 to the nominal 0.05).
TEST(TasksTrials, NbodyHardCodedGOrEpsFailsTheOutlierTrial) {
    auto nbody = load("nbody");
    for (uint64_t seed = 1; seed <= 3; ++seed)
        for (const auto& [name, nominal] : {std::pair{"G", 1.0}, std::pair{"eps", 0.05}}) {
            double worst = 0;
            for (const auto& size : nbody->spec().profiles.at("small")) {
                auto c = nbody->make_case(size, seed, Trial::outlier);
                auto hard = c;
                hard.constants[name] = static_cast<double>(static_cast<float>(nominal));
                const auto r = nbody->check(size, c, nbody->reference(size, c), nbody->reference(size, hard).results);
                if (std::string(name) == "G") EXPECT_FALSE(r.pass) << size.label << " seed " << seed << ": " << r.message;
                worst = std::max(worst, r.error / r.tolerance);
            }
            EXPECT_GT(worst, 2) << name << " seed " << seed << ": too close to call at every size";
        }
}

TEST(TasksTrials, SaxpyTailDropPassesInDistributionAndFailsHeldOut) {
    auto task = load("saxpy");
    for (const auto& size : task->spec().profiles.at("small")) {
        auto c = task->make_case(size, 77, Trial::nominal);
        auto ref = task->reference(size, c);
        // What saxpy_tail_drop leaves in y: the update up to n & ~1023, the initial values after.
        auto got = floats_of(ref.results[0]);
        const auto* y0 = c.buffers[1].as<float>();
        for (size_t i = got.size() & ~size_t{1023}; i < got.size(); ++i) got[i] = y0[i];
        auto r = task->check(size, c, ref, {bytes_of(got)});
        EXPECT_EQ(r.pass, !size.heldout) << size.label << ": " << r.message;
    }
}

// ---------------------------------------------------------------------------------------------
// fault and attack kernels

// Every file under tests/candidates/ for these tasks. saxpy_first_call_only exists only as .cu:
// it keeps its state in a mutable device global, which OpenCL 1.2 does not have (and y cannot
// carry it, since the host restores y before every run).
const std::vector<std::pair<std::string, std::string>> kCandidates = {
    {"saxpy_compile_error", "saxpy"},  {"saxpy_infinite_loop", "saxpy"},    {"saxpy_oob_write", "saxpy"},
    {"saxpy_nan", "saxpy"},            {"saxpy_include", "saxpy"},          {"saxpy_tail_drop", "saxpy"},
    {"heat2d_partial", "heat2d"},      {"heat2d_wrong_formula", "heat2d"},  {"heat2d_hardcoded_alpha", "heat2d"},
    {"nbody_hardcoded_dt", "nbody"},   {"saxpy_first_call_only", "saxpy"},
};

std::string read_candidate(const std::string& file) {
    std::ifstream in(std::filesystem::path(KEVO_CANDIDATES_DIR) / file);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
}

TEST(TasksCandidates, FaultKernelsUseTheTaskSignatures) {
    for (const auto& [stem, task_name] : kCandidates) {
        auto task = load(task_name);
        const auto& kernel = task->spec().kernels.at(0);
        for (const char* suffix : {".cu", ".cl"}) {
            if (stem == "saxpy_first_call_only" && std::string(suffix) == ".cl") continue;
            const std::string file = stem + suffix;
            const std::string text = read_candidate(file);
            ASSERT_FALSE(text.empty()) << file;
            EXPECT_EQ(text.rfind("// ", 0), 0u) << file << " must open with a comment saying what it does wrong";
            const std::string& signature = signature_text(kernel, language_for_suffix(std::string_view(suffix).substr(1)));
            EXPECT_NE(text.find(signature), std::string::npos) << file;
        }
    }
    // The compile error sits on line 4, as its comment says.
    for (const char* file : {"saxpy_compile_error.cu", "saxpy_compile_error.cl"}) {
        std::istringstream lines(read_candidate(file));
        std::string line;
        for (int i = 0; i < 4; ++i) std::getline(lines, line);
        EXPECT_NE(line.find("+;"), std::string::npos) << file;
    }
}

}  // namespace
}  // namespace kevo
