// Tests of the 3-D grid tasks wave3d, morton and adi3d: specs and sizes, launch plans and initial
// states, the references against independent hand computations (one stencil step by hand, a
// Morton decode of our own, a dense tridiagonal solve and the analytic decay of a sine mode for
// ADI), the checks, and the seeds and broken kernels through the real kevo binary on PoCL.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <set>

#include "kevo_process.hpp"
#include "seed_geometry.hpp"
#include "task/checks.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

const std::vector<std::string> kTasks = {"wave3d", "morton", "adi3d"};

std::unique_ptr<Task> load(const std::string& name) {
    auto task = make_task(name);
    EXPECT_TRUE(task.has_value()) << name;
    return std::move(task.value());
}

std::vector<float> floats_of(const std::vector<std::byte>& bytes) {
    auto view = as_floats(bytes);
    return {view.begin(), view.end()};
}

std::vector<float> reference_of(const Task& task, const SizeSpec& size, const Case& c) {
    auto ref = task.reference(size, c);
    EXPECT_EQ(ref.results.size(), c.results.size());
    return floats_of(ref.results.at(0));
}

SizeSpec box(int64_t nx, int64_t ny, int64_t nz, int64_t steps) {
    return {"test", false, {{"nx", nx}, {"ny", ny}, {"nz", nz}, {"steps", steps}}};
}

SizeSpec morton_cube(int64_t log_n, int64_t steps) {
    return {"test", false, {{"n", int64_t{1} << log_n}, {"log_n", log_n}, {"steps", steps}}};
}

std::map<std::string, bool> labels_of(const Task& task, const std::string& profile) {
    std::map<std::string, bool> out;
    for (const auto& s : task.spec().profiles.at(profile)) out[s.label] = s.heldout;
    return out;
}

// Our own Morton decode, written independently of the task's encoder.
void decode(uint64_t m, unsigned log_n, uint64_t& x, uint64_t& y, uint64_t& z) {
    x = y = z = 0;
    for (unsigned b = 0; b < log_n; ++b) {
        x |= ((m >> (3 * b)) & 1) << b;
        y |= ((m >> (3 * b + 1)) & 1) << b;
        z |= ((m >> (3 * b + 2)) & 1) << b;
    }
}

// ---------------------------------------------------------------------------------------------
// specs, sizes, briefs, seeds

TEST(Stencil3dSpec, OrderRegimeKernelsAndProfiles) {
    const std::map<std::string, int> order = {{"wave3d", 11}, {"morton", 12}, {"adi3d", 90}};
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto& spec = task->spec();
        EXPECT_EQ(spec.name, name);
        EXPECT_EQ(spec.order, order.at(name));
        EXPECT_EQ(spec.bound, Bound::bandwidth);
        for (const char* profile : {"small", "paper", "large"}) {
            ASSERT_TRUE(spec.profiles.count(profile)) << name << " " << profile;
            const auto& sizes = spec.profiles.at(profile);
            ASSERT_EQ(sizes.size(), 4u) << name << " " << profile;
            int heldout = 0;
            std::set<std::string> labels;
            for (const auto& s : sizes) {
                heldout += s.heldout;
                labels.insert(s.label);
                if (std::string(profile) != "large") EXPECT_FALSE(s.device_reference) << name << " " << s.label;
            }
            EXPECT_EQ(heldout, 1) << name << " " << profile;
            EXPECT_EQ(labels.size(), 4u) << name << " " << profile;
        }
    }
    EXPECT_EQ(load("wave3d")->spec().regime, "R1 stencil");
    EXPECT_EQ(load("morton")->spec().regime, "R1 stencil");
    EXPECT_EQ(load("adi3d")->spec().regime, "R7 wavefront / tridiagonal");
    auto adi_task = load("adi3d");
    const auto& adi = adi_task->spec().kernels;
    ASSERT_EQ(adi.size(), 3u);
    EXPECT_EQ(adi[0].name, "adi_x");
    EXPECT_EQ(adi[1].name, "adi_y");
    EXPECT_EQ(adi[2].name, "adi_z");
    EXPECT_EQ(load("wave3d")->spec().kernels.at(0).default_block, (Dim3{8, 8, 4}));
    EXPECT_EQ(load("morton")->spec().kernels.at(0).default_block, (Dim3{256, 1, 1}));
}

TEST(Stencil3dSpec, PaperSizesAreThoseOfTasksMd) {
    using M = std::map<std::string, bool>;
    EXPECT_EQ(labels_of(*load("wave3d"), "paper"), (M{{"64x64x64x30", false}, {"160x160x160x20", false},
                                                      {"192x192x192x15", false}, {"128x128x128x20", true}}));
    EXPECT_EQ(labels_of(*load("morton"), "paper"), (M{{"32x32x32x120", false}, {"64x64x64x60", false},
                                                      {"128x128x128x30", false}, {"256x256x256x10", true}}));
    EXPECT_EQ(labels_of(*load("adi3d"), "paper"), (M{{"64x64x64x20", false}, {"96x96x96x15", false},
                                                     {"128x128x128x10", false}, {"256x192x128x10", true}}));
    auto adi = load("adi3d");
    for (const auto& s : adi->spec().profiles.at("paper"))
        if (s.heldout) {
            EXPECT_EQ(s.param("nx"), 256);
            EXPECT_EQ(s.param("ny"), 192);
            EXPECT_EQ(s.param("nz"), 128);
            EXPECT_EQ(s.param("steps"), 10);
        }
    auto morton = load("morton");
    for (const auto& [profile, sizes] : morton->spec().profiles)
        for (const auto& s : sizes) EXPECT_EQ(s.param("n"), int64_t{1} << s.param("log_n")) << s.label;
}

TEST(Stencil3dSpec, SmallSizesAreNonCubicAndHeldOutSizesAreUnseen) {
    // A non-cubic in-distribution size in the small profile of the box tasks, so a kernel that
    // assumes a cube fails before the held-out gate.
    for (const char* name : {"wave3d", "adi3d"}) {
        bool prism = false;
        auto task = load(name);
        for (const auto& s : task->spec().profiles.at("small"))
            if (!s.heldout) prism |= s.param("nx") != s.param("ny") || s.param("ny") != s.param("nz");
        EXPECT_TRUE(prism) << name;
    }
    // morton: the held-out N appears in no in-distribution size of its profile.
    auto morton = load("morton");
    for (const auto& [profile, sizes] : morton->spec().profiles) {
        std::set<int64_t> seen;
        int64_t heldout = 0;
        for (const auto& s : sizes) {
            if (s.heldout) heldout = s.param("n");
            else seen.insert(s.param("n"));
        }
        EXPECT_EQ(seen.count(heldout), 0u) << profile;
    }
}

TEST(Stencil3dSpec, BriefsNameSignaturesAndLeakNoHeldOutSize) {
    for (const auto& name : kTasks) {
        auto task = load(name);
        const std::string brief(task_file(name, "brief.md"));
        ASSERT_FALSE(brief.empty()) << name;
        for (const auto& k : task->spec().kernels) {
            EXPECT_NE(brief.find(signature_text(k, language_named("cuda"))), std::string::npos) << name << ": " << signature_text(k, language_named("cuda"));
            EXPECT_NE(brief.find(signature_text(k, language_named("opencl"))), std::string::npos) << name << ": " << signature_text(k, language_named("opencl"));
        }
        for (const auto& [profile, sizes] : task->spec().profiles)
            for (const auto& s : sizes) {
                EXPECT_EQ(brief.find(s.label), std::string::npos) << name << " names size " << s.label;
                if (!s.heldout) continue;
                // No held-out dimension either (morton's original brief named its N). The number
                // may appear only as a block size ("256 threads", directive examples).
                for (const auto& [key, value] : s.params) {
                    if (key == "steps" || key == "log_n" || value <= 8) continue;
                    const std::string number = std::to_string(value);
                    for (size_t at = brief.find(number); at != std::string::npos; at = brief.find(number, at + 1)) {
                        const size_t line_start = brief.rfind('\n', at) + 1;
                        const std::string line = brief.substr(line_start, brief.find('\n', at) - line_start);
                        const bool block_size = brief.compare(at + number.size(), 8, " threads") == 0 ||
                                                line.find("kevo:") != std::string::npos;
                        EXPECT_TRUE(block_size) << name << " mentions held-out " << key << " = " << value << ": " << line;
                    }
                }
            }
        EXPECT_NE(brief.find("ceil("), std::string::npos) << name << " must say how the grid is derived";
    }
}

TEST(Stencil3dSpec, SeedsHaveExactSignaturesAndDefaultGeometry) {
    for (const auto& name : kTasks) {
        auto task = load(name);
        for (const char* file : {"seed.cu", "seed.cl"}) {
            const std::string seed(task_file(name, file));
            ASSERT_FALSE(seed.empty()) << name << " " << file;
            for (const auto& kernel : task->spec().kernels) {
                const auto& signature = signature_text(kernel, language_for_suffix(std::string_view(file).substr(5)));
                EXPECT_NE(seed.find(signature), std::string::npos) << name << " " << file << " " << kernel.name;
            }
            test::expect_seed_declares_default_geometry(*task, file, seed);
        }
    }
}

// ---------------------------------------------------------------------------------------------
// launch plans, initial states, outlier trials

TEST(Stencil3dCases, Wave3dRotatesThreeBuffers) {
    auto task = load("wave3d");
    for (int64_t steps : {1, 2, 3, 4, 7}) {
        auto c = task->make_case(box(10, 9, 7, steps), 1, Trial::nominal);
        ASSERT_EQ(c.launches.size(), static_cast<size_t>(steps));
        for (int64_t s = 0; s < steps; ++s) {
            const auto& l = c.launches[s];
            EXPECT_EQ(l.args[0].buffer, s % 3);
            EXPECT_EQ(l.args[1].buffer, (s + 1) % 3);
            EXPECT_EQ(l.args[2].buffer, (s + 2) % 3);
            EXPECT_EQ(l.domain, (Dim3{10, 9, 7}));
            ASSERT_EQ(l.args.size(), 7u);
            EXPECT_EQ(l.args[3].u32, 10u);
            EXPECT_EQ(l.args[4].u32, 9u);
            EXPECT_EQ(l.args[5].u32, 7u);
            EXPECT_FLOAT_EQ(l.args[6].f32, 0.18f);
        }
        EXPECT_EQ(c.results, std::vector<int>{static_cast<int>((steps + 1) % 3)}) << steps;
        EXPECT_DOUBLE_EQ(c.work, 12.0 * 10 * 9 * 7 * steps);
        EXPECT_DOUBLE_EQ(c.working_set_bytes, 12.0 * 10 * 9 * 7);
    }
    auto c = task->make_case(box(10, 9, 7, 2), 1, Trial::nominal);
    EXPECT_EQ(c.buffers[0].role, BufferRole::state);
    EXPECT_EQ(c.buffers[1].role, BufferRole::state);
    EXPECT_EQ(c.buffers[2].role, BufferRole::output);
}

TEST(Stencil3dCases, Wave3dStartsFromTheGaussianBump) {
    auto task = load("wave3d");
    const int nx = 21, ny = 31, nz = 41;
    auto c = task->make_case(box(nx, ny, nz, 1), 3, Trial::nominal);
    const float* prev = c.buffers[0].as<float>();
    const float* curr = c.buffers[1].as<float>();
    auto at = [&](int x, int y, int z) { return (z * ny + y) * nx + x; };
    EXPECT_FLOAT_EQ(curr[at(10, 15, 20)], 1.0f);  // the centre, peak 1
    const double sigma = 0.1 * 21;
    EXPECT_NEAR(curr[at(12, 15, 19)], std::exp(-(4.0 + 1.0) / (2 * sigma * sigma)), 1e-6);
    EXPECT_EQ(curr[at(0, 15, 20)], 0.0f);
    EXPECT_EQ(curr[at(10, 30, 20)], 0.0f);
    EXPECT_EQ(std::memcmp(prev, curr, c.buffers[0].bytes()), 0) << "nominal: u_prev = u_curr";
}

TEST(Stencil3dCases, MortonScattersTheRowMajorGaussian) {
    auto task = load("morton");
    const unsigned log_n = 4;
    const int n = 16;
    auto c = task->make_case(morton_cube(log_n, 3), 2, Trial::nominal);
    ASSERT_EQ(c.launches.size(), 3u);
    EXPECT_EQ(c.launches[0].domain, (Dim3{4096, 1, 1}));
    EXPECT_EQ(c.launches[0].args[2].u32, 16u);
    EXPECT_EQ(c.launches[0].args[3].u32, 4u);
    EXPECT_FLOAT_EQ(c.launches[0].args[4].f32, 0.10f);
    EXPECT_EQ(c.launches[1].args[0].buffer, 1);
    EXPECT_EQ(c.results, std::vector<int>{1});
    EXPECT_DOUBLE_EQ(c.work, 8.0 * 4096 * 3);
    const float* u = c.buffers[0].as<float>();
    const double sigma = 0.15 * n, centre = 7.5;
    for (uint64_t m = 0; m < 4096; m += 37) {
        uint64_t x, y, z;
        decode(m, log_n, x, y, z);
        const bool face = x == 0 || y == 0 || z == 0 || x == 15 || y == 15 || z == 15;
        const double r2 = (x - centre) * (x - centre) + (y - centre) * (y - centre) + (z - centre) * (z - centre);
        EXPECT_NEAR(u[m], face ? 0.0 : std::exp(-r2 / (2 * sigma * sigma)), 1e-6) << "m=" << m;
    }
}

TEST(Stencil3dCases, Adi3dPingPongsThreeSweepsPerStep) {
    auto task = load("adi3d");
    for (int64_t steps : {1, 2, 3}) {
        auto c = task->make_case(box(11, 7, 5, steps), 1, Trial::nominal);
        ASSERT_EQ(c.launches.size(), static_cast<size_t>(3 * steps));
        for (size_t k = 0; k < c.launches.size(); ++k) {
            const auto& l = c.launches[k];
            EXPECT_EQ(l.kernel, std::string("adi_") + "xyz"[k % 3]);
            EXPECT_EQ(l.args[0].buffer, static_cast<int>(k % 2));
            EXPECT_EQ(l.args[1].buffer, static_cast<int>(1 - k % 2));
            EXPECT_FLOAT_EQ(l.args[5].f32, 0.5f);
        }
        EXPECT_EQ(c.launches[0].domain, (Dim3{7, 5, 1}));
        EXPECT_EQ(c.launches[1].domain, (Dim3{11, 5, 1}));
        EXPECT_EQ(c.launches[2].domain, (Dim3{11, 7, 1}));
        EXPECT_EQ(c.results, std::vector<int>{steps % 2 == 1 ? 1 : 0}) << steps;
        EXPECT_DOUBLE_EQ(c.work, 24.0 * 11 * 7 * 5 * steps);
        EXPECT_DOUBLE_EQ(c.working_set_bytes, 8.0 * 11 * 7 * 5);
    }
    // sigma = 0.15 * (nx ny nz)^(1/3), centred, faces 0.
    auto c = task->make_case(box(9, 27, 3, 1), 1, Trial::nominal);
    const float* u = c.buffers[0].as<float>();
    EXPECT_FLOAT_EQ(u[(1 * 27 + 13) * 9 + 4], 1.0f);
    const double sigma = 0.15 * 9;
    EXPECT_NEAR(u[(1 * 27 + 15) * 9 + 5], std::exp(-5.0 / (2 * sigma * sigma)), 1e-6);
    EXPECT_EQ(u[(1 * 27 + 13) * 9 + 0], 0.0f);
}

TEST(Stencil3dCases, OutlierTrialsVaryConstantsWithinTheStableRange) {
    struct Range {
        const char* key;
        double nominal, lo, hi;
    };
    const std::map<std::string, Range> ranges = {{"wave3d", {"alpha", 0.18, 0.05, 0.30}},
                                                 {"morton", {"alpha", 0.10, 0.03, 0.16}},
                                                 {"adi3d", {"mu", 0.5, 0.1, 2.0}}};
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto& r = ranges.at(name);
        const auto size = task->spec().profiles.at("small").front();
        auto nominal = task->make_case(size, 7, Trial::nominal);
        EXPECT_NEAR(nominal.constants.at(r.key), r.nominal, 1e-6);
        EXPECT_EQ(nominal.buffers[0].data, task->make_case(size, 8, Trial::nominal).buffers[0].data)
            << name << ": the nominal state is the Gaussian of TASKS.md";
        std::set<double> seen;
        for (uint64_t seed = 1; seed <= 12; ++seed) {
            auto c = task->make_case(size, seed, Trial::outlier);
            const double v = c.constants.at(r.key);
            EXPECT_GE(v, r.lo - 1e-7) << name;
            EXPECT_LE(v, r.hi + 1e-7) << name;
            EXPECT_GT(std::fabs(v - r.nominal), 0.1 * r.nominal - 1e-7) << name << " seed " << seed;
            seen.insert(v);
            // The faces hold non-zero values in the outlier trial (they must be copied, not zeroed).
            EXPECT_NE(c.buffers[0].as<float>()[0], 0.0f) << name;
            EXPECT_NE(c.buffers[0].data, nominal.buffers[0].data) << name;
        }
        EXPECT_EQ(seen.size(), 12u) << name;
    }
    // wave3d: u_prev differs from u_curr, on the faces too.
    auto wave = load("wave3d");
    auto c = wave->make_case(box(8, 8, 8, 1), 4, Trial::outlier);
    EXPECT_NE(c.buffers[0].as<float>()[0], c.buffers[1].as<float>()[0]);
}

// ---------------------------------------------------------------------------------------------
// references against independent computations

TEST(Stencil3dReference, Wave3dOneAndTwoStepsByHand) {
    auto task = load("wave3d");
    const int nx = 6, ny = 5, nz = 4;
    auto c1 = task->make_case(box(nx, ny, nz, 1), 9, Trial::outlier);
    const double alpha = c1.constants.at("alpha");
    const std::vector<float> p0 = floats_of(c1.buffers[0].data), u0 = floats_of(c1.buffers[1].data);
    auto idx = [&](int x, int y, int z) { return (z * ny + y) * nx + x; };
    auto step = [&](const std::vector<double>& prev, const std::vector<double>& curr) {
        std::vector<double> next(curr.size());
        for (int z = 0; z < nz; ++z)
            for (int y = 0; y < ny; ++y)
                for (int x = 0; x < nx; ++x) {
                    const int i = idx(x, y, z);
                    if (x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1) {
                        next[i] = curr[i];
                        continue;
                    }
                    const double lap = curr[idx(x - 1, y, z)] + curr[idx(x + 1, y, z)] + curr[idx(x, y - 1, z)] +
                                       curr[idx(x, y + 1, z)] + curr[idx(x, y, z - 1)] + curr[idx(x, y, z + 1)] -
                                       6 * curr[i];
                    next[i] = 2 * curr[i] - prev[i] + alpha * lap;
                }
        return next;
    };
    const std::vector<double> p(p0.begin(), p0.end()), u(u0.begin(), u0.end());
    const auto s1 = step(p, u);
    const auto got1 = reference_of(*task, box(nx, ny, nz, 1), c1);
    for (size_t i = 0; i < s1.size(); ++i) EXPECT_NEAR(got1[i], s1[i], 1e-5) << i;
    // Cell (1, 1, 1) spelled out.
    const int i = idx(1, 1, 1);
    const double lap = u[idx(0, 1, 1)] + u[idx(2, 1, 1)] + u[idx(1, 0, 1)] + u[idx(1, 2, 1)] + u[idx(1, 1, 0)] +
                       u[idx(1, 1, 2)] - 6 * u[i];
    EXPECT_NEAR(got1[i], 2 * u[i] - p[i] + alpha * lap, 1e-5);

    auto c2 = task->make_case(box(nx, ny, nz, 2), 9, Trial::outlier);
    const auto s2 = step(u, s1);
    const auto got2 = reference_of(*task, box(nx, ny, nz, 2), c2);
    for (size_t k = 0; k < s2.size(); ++k) EXPECT_NEAR(got2[k], s2[k], 1e-5) << k;
}

TEST(Stencil3dReference, MortonOneStepByHandInMortonOrder) {
    auto task = load("morton");
    const unsigned log_n = 3;
    const uint64_t n = 8, cells = 512;
    const auto size = morton_cube(log_n, 1);
    auto c = task->make_case(size, 5, Trial::outlier);
    ASSERT_EQ(c.results, std::vector<int>{1});
    // Known values in Morton order, faces included.
    float* u = c.buffers[0].as<float>();
    for (uint64_t m = 0; m < cells; ++m) u[m] = static_cast<float>((m * 37) % 101) / 10.0f;
    const double alpha = c.constants.at("alpha");
    std::vector<uint64_t> index_of(cells);  // row-major -> Morton, from our decoder
    for (uint64_t m = 0; m < cells; ++m) {
        uint64_t x, y, z;
        decode(m, log_n, x, y, z);
        index_of[(z * n + y) * n + x] = m;
    }
    auto val = [&](uint64_t x, uint64_t y, uint64_t z) { return static_cast<double>(u[index_of[(z * n + y) * n + x]]); };
    const auto got = reference_of(*task, size, c);  // Morton order, as the device writes it
    ASSERT_EQ(got.size(), cells);
    for (uint64_t m = 0; m < cells; ++m) {
        uint64_t x, y, z;
        decode(m, log_n, x, y, z);
        const bool face = x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1;
        const double want = face ? val(x, y, z)
                                 : val(x, y, z) + alpha * (val(x - 1, y, z) + val(x + 1, y, z) + val(x, y - 1, z) +
                                                           val(x, y + 1, z) + val(x, y, z - 1) + val(x, y, z + 1) -
                                                           6 * val(x, y, z));
        EXPECT_NEAR(got[m], want, 1e-5) << "m=" << m;
    }
    // (1, 1, 1) is Morton index 0b111 = 7; (2, 1, 1) is 0b1110 = 14 (bit 1 of x goes to bit 3).
    EXPECT_EQ(index_of[(1 * n + 1) * n + 1], 7u);
    EXPECT_EQ(index_of[(1 * n + 1) * n + 2], 14u);
}

// Solves the tridiagonal system of one line densely (Gaussian elimination on the full matrix),
// independently of the Thomas algorithm the reference uses.
std::vector<double> dense_line_solve(const std::vector<double>& line, double mu) {
    const size_t len = line.size(), m = len - 2;
    std::vector<std::vector<double>> a(m, std::vector<double>(m + 1, 0.0));
    for (size_t r = 0; r < m; ++r) {
        a[r][r] = 1 + 2 * mu;
        if (r > 0) a[r][r - 1] = -mu;
        if (r + 1 < m) a[r][r + 1] = -mu;
        a[r][m] = line[r + 1];
    }
    a[0][m] += mu * line[0];
    a[m - 1][m] += mu * line[len - 1];
    for (size_t col = 0; col < m; ++col)
        for (size_t r = col + 1; r < m; ++r) {
            const double f = a[r][col] / a[col][col];
            for (size_t k = col; k <= m; ++k) a[r][k] -= f * a[col][k];
        }
    std::vector<double> out(line);
    for (size_t r = m; r-- > 0;) {
        double s = a[r][m];
        for (size_t k = r + 1; k < m; ++k) s -= a[r][k] * out[k + 1];
        out[r + 1] = s / a[r][r];
    }
    return out;
}

TEST(Stencil3dReference, Adi3dMatchesDenseSolvesOfEveryLine) {
    auto task = load("adi3d");
    const size_t nx = 7, ny = 5, nz = 6;
    const auto size = box(nx, ny, nz, 1);
    auto c = task->make_case(size, 13, Trial::outlier);
    const double mu = c.constants.at("mu");
    const float* u0 = c.buffers[0].as<float>();
    std::vector<double> u(u0, u0 + nx * ny * nz);
    auto idx = [&](size_t x, size_t y, size_t z) { return (z * ny + y) * nx + x; };
    // One sweep along an axis: every line that does not lie on a face is solved densely.
    auto sweep = [&](int axis) {
        std::vector<double> out(u);
        const size_t len[3] = {nx, ny, nz};
        for (size_t z = 0; z < nz; ++z)
            for (size_t y = 0; y < ny; ++y)
                for (size_t x = 0; x < nx; ++x) {
                    const size_t p[3] = {x, y, z};
                    if (p[axis] != 0) continue;  // one visit per line, at its first point
                    bool face = false;
                    for (int a = 0; a < 3; ++a)
                        if (a != axis) face |= p[a] == 0 || p[a] == len[a] - 1;
                    if (face) continue;
                    std::vector<double> line(len[axis]);
                    for (size_t j = 0; j < len[axis]; ++j) {
                        size_t q[3] = {x, y, z};
                        q[axis] = j;
                        line[j] = u[idx(q[0], q[1], q[2])];
                    }
                    const auto solved = dense_line_solve(line, mu);
                    for (size_t j = 0; j < len[axis]; ++j) {
                        size_t q[3] = {x, y, z};
                        q[axis] = j;
                        out[idx(q[0], q[1], q[2])] = solved[j];
                    }
                }
        u = out;
    };
    sweep(0);
    sweep(1);
    sweep(2);
    const auto got = reference_of(*task, size, c);
    double peak = 0;
    for (double v : u) peak = std::max(peak, std::fabs(v));
    for (size_t i = 0; i < u.size(); ++i) EXPECT_NEAR(got[i], u[i], 1e-6 * peak) << i;
}

// A product of sine modes that vanishes on the faces is an eigenvector of every sweep: each
// divides it by 1 + 4 mu sin^2(pi k / (2 (L-1))), so one step scales it by the product of three.
TEST(Stencil3dReference, Adi3dDampsASineModeAnalytically) {
    auto task = load("adi3d");
    const size_t nx = 13, ny = 9, nz = 11;
    const int kx = 1, ky = 2, kz = 3;
    const int64_t steps = 2;
    const auto size = box(nx, ny, nz, steps);
    auto c = task->make_case(size, 1, Trial::nominal);
    const double mu = c.constants.at("mu");
    const double pi = std::acos(-1.0);
    float* u = c.buffers[0].as<float>();
    auto mode = [&](size_t x, size_t y, size_t z) {
        return std::sin(pi * kx * x / (nx - 1.0)) * std::sin(pi * ky * y / (ny - 1.0)) * std::sin(pi * kz * z / (nz - 1.0));
    };
    for (size_t z = 0; z < nz; ++z)
        for (size_t y = 0; y < ny; ++y)
            for (size_t x = 0; x < nx; ++x) {
                const bool face = x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
                u[(z * ny + y) * nx + x] = face ? 0.0f : static_cast<float>(mode(x, y, z));
            }
    auto damp = [&](int k, size_t len) { return 1.0 / (1.0 + 4 * mu * std::pow(std::sin(pi * k / (2.0 * (len - 1))), 2)); };
    const double factor = std::pow(damp(kx, nx) * damp(ky, ny) * damp(kz, nz), steps);
    const auto got = reference_of(*task, size, c);
    for (size_t z = 0; z < nz; ++z)
        for (size_t y = 0; y < ny; ++y)
            for (size_t x = 0; x < nx; ++x) {
                const size_t i = (z * ny + y) * nx + x;
                EXPECT_NEAR(got[i], u[i] * factor, 1e-6) << "(x=" << x << ", y=" << y << ", z=" << z << ")";
            }
}

// ---------------------------------------------------------------------------------------------
// checks

TEST(Stencil3dCheck, PassesItselfFailsPerturbedAndNanNamingTheCell) {
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto size = task->spec().profiles.at("small")[0];
        auto c = task->make_case(size, 21, Trial::outlier);
        auto ref = task->reference(size, c);
        auto same = task->check(size, c, ref, ref.results);
        EXPECT_TRUE(same.pass) << name << ": " << same.message;
        EXPECT_EQ(same.error, 0) << name;

        auto perturbed = floats_of(ref.results[0]);
        const size_t victim = perturbed.size() / 3 + 5;
        perturbed[victim] += 1.0f;
        auto bad = task->check(size, c, ref, {to_bytes(perturbed)});
        EXPECT_FALSE(bad.pass) << name;
        EXPECT_EQ(bad.kind, "max_abs") << name;
        EXPECT_NEAR(bad.error, 1.0, 1e-4) << name;
        EXPECT_NE(bad.message.find("(x="), std::string::npos) << bad.message;
        EXPECT_NE(bad.message.find(", z="), std::string::npos) << bad.message;

        auto poisoned = floats_of(ref.results[0]);
        poisoned[victim] = std::numeric_limits<float>::quiet_NaN();
        auto nan = task->check(size, c, ref, {to_bytes(poisoned)});
        EXPECT_FALSE(nan.pass) << name;
        EXPECT_EQ(nan.kind, "nan") << name;

        EXPECT_FALSE(task->check(size, c, ref, {}).pass) << name;
    }
}

TEST(Stencil3dCheck, MortonReportsRowMajorCoordinates) {
    auto task = load("morton");
    const auto size = morton_cube(4, 2);
    auto c = task->make_case(size, 3, Trial::nominal);
    auto ref = task->reference(size, c);
    auto got = floats_of(ref.results[0]);
    // Morton index of (x=5, y=2, z=9): x bits 101, y 010, z 1001.
    uint64_t m = 0;
    for (unsigned b = 0; b < 4; ++b) m |= ((5u >> b & 1) << 3 * b) | ((2u >> b & 1) << (3 * b + 1)) | ((9u >> b & 1) << (3 * b + 2));
    got[m] += 0.5f;
    auto r = task->check(size, c, ref, {to_bytes(got)});
    EXPECT_FALSE(r.pass);
    EXPECT_EQ(r.worst_index, (9 * 16 + 2) * 16 + 5);
    EXPECT_NE(r.message.find("(x=5, y=2, z=9)"), std::string::npos) << r.message;
}

// A kernel that hard-codes the nominal constant passes the nominal trial and fails the outlier
// one at every small size (emulated with the reference run at the nominal constant).
TEST(Stencil3dCheck, HardCodedConstantsFailTheOutlierTrial) {
    const std::map<std::string, std::pair<const char*, double>> nominal = {
        {"wave3d", {"alpha", 0.18}}, {"morton", {"alpha", 0.10}}, {"adi3d", {"mu", 0.5}}};
    for (const auto& name : kTasks) {
        auto task = load(name);
        const auto& [key, value] = nominal.at(name);
        for (const auto& size : task->spec().profiles.at("small")) {
            auto c = task->make_case(size, 11, Trial::outlier);
            auto hard = c;
            hard.constants[key] = static_cast<double>(static_cast<float>(value));
            auto r = task->check(size, c, task->reference(size, c), task->reference(size, hard).results);
            EXPECT_FALSE(r.pass) << name << " " << size.label;
            EXPECT_GT(r.error, 10 * r.tolerance) << name << " " << size.label;
        }
    }
}

// ---------------------------------------------------------------------------------------------
// the seeds and the broken kernels, for real on PoCL

std::string write_seed(const std::string& task) {
    const std::string path = ::testing::TempDir() + "stencil3d_seed_" + task + ".cl";
    std::ofstream(path) << task_file(task, "seed.cl");
    return path;
}

nlohmann::json eval_json(const std::vector<std::string>& args) {
    const auto r = test::run_kevo(args);
    auto doc = r.json();
    EXPECT_TRUE(doc.is_object()) << "stdout is not one JSON document:\n" << r.out << "\nstderr:\n" << r.err;
    return doc;
}

class Stencil3dSeed : public ::testing::TestWithParam<std::string> {};

TEST_P(Stencil3dSeed, EvaluatesOkOnPoclAtEverySmallSize) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const std::string task = GetParam();
    const auto doc = eval_json({"eval", task, write_seed(task), "--backend", "opencl", "--profile", "small", "--sizes",
                                "all", "--check-only", "--json", "--timeout", "60"});
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc["verdict"], "ok") << doc.dump(2);
    ASSERT_EQ(doc["sizes"].size(), 4u) << doc.dump(2);
    for (const auto& s : doc["sizes"]) EXPECT_TRUE(s["correct"].get<bool>()) << s.dump(2);
}

INSTANTIATE_TEST_SUITE_P(Stencil3dTasks, Stencil3dSeed, ::testing::ValuesIn(kTasks),
                         [](const auto& info) { return info.param; });

class Stencil3dBroken : public ::testing::TestWithParam<std::tuple<std::string, std::string>> {};

TEST_P(Stencil3dBroken, IsIncorrectOnPocl) {
    if (!test::has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    const auto& [task, fault] = GetParam();
    const std::string path = test::candidate(task + "_" + fault + ".cl");
    const auto doc = eval_json({"eval", task, path, "--backend", "opencl", "--profile", "small", "--sizes", "all",
                                "--check-only", "--json", "--timeout", "60", "--seed", "5"});
    ASSERT_TRUE(doc.is_object());
    EXPECT_EQ(doc["verdict"], "incorrect") << doc.dump(2);
}

TEST(Stencil3dBrokenFiles, OpenWithACommentAndUseTheTaskSignatures) {
    for (const auto& task_name : kTasks) {
        auto task = load(task_name);
        for (const char* fault : {"wrong_constant", "off_by_one", "hardcoded_size"})
            for (const char* suffix : {".cu", ".cl"}) {
                const std::string file = test::candidate(task_name + "_" + fault + suffix);
                const std::string text = test::slurp(file);
                ASSERT_FALSE(text.empty()) << file;
                EXPECT_EQ(text.rfind("// FAULT: ", 0), 0u) << file;
                for (const auto& k : task->spec().kernels)
                    EXPECT_NE(text.find(signature_text(k, language_for_suffix(std::string_view(suffix).substr(1)))),
                              std::string::npos)
                        << file << " " << k.name;
            }
    }
}

std::vector<std::tuple<std::string, std::string>> broken_cases() {
    std::vector<std::tuple<std::string, std::string>> out;
    for (const auto& task : kTasks)
        for (const char* fault : {"wrong_constant", "off_by_one", "hardcoded_size"}) out.emplace_back(task, fault);
    return out;
}

INSTANTIATE_TEST_SUITE_P(Stencil3dTasks, Stencil3dBroken, ::testing::ValuesIn(broken_cases()), [](const auto& info) {
    return std::get<0>(info.param) + "_" + std::get<1>(info.param);
});

}  // namespace
}  // namespace kevo
