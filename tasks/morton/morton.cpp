// R1 stencil task morton: 3-D forward-Euler heat step (7-point Laplacian) on a cube of side
// N = 2^log_n stored in Morton (Z) order; one launch per step, ping-pong, one thread per Morton
// index. Inputs are built row-major and scattered; outputs are gathered back and checked row-major.
#include <algorithm>
#include <cassert>
#include <cmath>
#include <functional>
#include <memory>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/checks.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr double kNominalAlpha = 0.10;
// Max-abs relative to the field's magnitude (the larger of the start's and the result's).
// Correct FP32 kernels stay within ~2e-7 of it, 100x inside, up to the paper's longest run (120
// steps). Rounding errors of a diffusion step are damped, so they add up like a random walk: beyond
// 120 steps the bound grows with sqrt(steps / 120). Measured on the H200 before this rule: 128^3 x
// 400 steps came within 43x of the flat 2e-5 (seed and best alike); a wrong coefficient's error
// grows linearly with the steps, so a longer run only exposes it more.
constexpr double kRel = 2e-5;
constexpr double kFlatSteps = 120;

double relative_tolerance(double steps) { return kRel * std::sqrt(std::max(1.0, steps / kFlatSteps)); }

enum Stream : uint64_t { constant_stream = 1, noise_stream = 2 };

SizeSpec cube(int64_t log_n, int64_t steps, bool heldout = false) {
    const int64_t n = int64_t{1} << log_n;
    return {fmt::format("{}x{}x{}x{}", n, n, n, steps), heldout, {{"n", n}, {"log_n", log_n}, {"steps", steps}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "morton";
    s.regime = "R1 stencil";
    s.category = "stencil";
    s.order = 12;
    s.bound = Bound::bandwidth;
    s.model = "8 B per cell per step (read u_in, write u_out)";
    s.tolerance = "max |err| <= 2e-5 * sqrt(max(1, steps / 120)) * max(max|u_0|, max|ref|) over the field gathered "
                  "back to row-major order; NaN or Inf anywhere fails";
    s.kernels = {{"morton_stencil",
                  {sig::const_ptr("u_in", ParamType::f32), sig::ptr("u_out", ParamType::f32),
                   sig::value("n", ParamType::u32), sig::value("log_n", ParamType::u32),
                   sig::value("alpha", ParamType::f32)},
                  1, Dim3{256, 1, 1}}};
    // N must be a power of two; the held-out N differs from every in-distribution N of its profile.
    // The naive seed decodes bit by bit, which PoCL runs slowly, so the small cubes stay at 64^3.
    s.profiles["small"] = {cube(4, 40), cube(5, 20), cube(6, 4), cube(3, 60, true)};
    s.profiles["paper"] = {cube(5, 120), cube(6, 60), cube(7, 30), cube(8, 10, true)};
    // 512^3 is the only power of two whose working set (1 GiB) is many times the H200's 60 MB L2
    // within a few GB of memory, hence two step counts of it; 128^3 covers the cache-resident
    // regime. The largest CPU reference is 2.1e9 cell updates in float64, about 2 s on 16 cores,
    // under the threshold for device_reference.
    s.profiles["large"] = {cube(7, 400), cube(9, 8), cube(9, 16), cube(8, 60, true)};
    return s;
}

// Spreads the low 21 bits of v so that bit b lands on bit 3b (the usual magic-mask sequence).
uint64_t spread3(uint64_t v) {
    v &= 0x1FFFFF;
    v = (v | v << 32) & 0x1F00000000FFFFull;
    v = (v | v << 16) & 0x1F0000FF0000FFull;
    v = (v | v << 8) & 0x100F00F00F00F00Full;
    v = (v | v << 4) & 0x10C30C30C30C30C3ull;
    v = (v | v << 2) & 0x1249249249249249ull;
    return v;
}

// Morton index of (x, y, z): bit b of x goes to bit 3b, of y to 3b+1, of z to 3b+2.
uint64_t morton_encode(uint64_t x, uint64_t y, uint64_t z) { return spread3(x) | spread3(y) << 1 | spread3(z) << 2; }

struct Cube {
    size_t n;
    unsigned log_n;
    size_t cells() const { return n * n * n; }
    bool face(size_t x, size_t y, size_t z) const {
        return x == 0 || y == 0 || z == 0 || x == n - 1 || y == n - 1 || z == n - 1;
    }
};

Cube cube_of(const SizeSpec& size) {
    const Cube c{static_cast<size_t>(size.param("n")), static_cast<unsigned>(size.param("log_n"))};
    assert(c.n == size_t{1} << c.log_n);
    return c;
}

// Calls body(z, y, row-major index of (0, y, z)) for every row, planes in parallel.
void for_rows(const Cube& c, const std::function<void(size_t, size_t, size_t)>& body) {
    parallel_for(
        c.n,
        [&](size_t begin, size_t end) {
            for (size_t z = begin; z < end; ++z)
                for (size_t y = 0; y < c.n; ++y) body(z, y, (z * c.n + y) * c.n);
        },
        std::max<size_t>(1, (size_t{1} << 15) / (c.n * c.n)));
}

// Row-major -> Morton order, and back.
template <class From, class To>
void scatter(const Cube& c, const From* row_major, To* morton) {
    for_rows(c, [&](size_t z, size_t y, size_t row) {
        for (size_t x = 0; x < c.n; ++x) morton[morton_encode(x, y, z)] = static_cast<To>(row_major[row + x]);
    });
}

template <class From, class To>
void gather(const Cube& c, const From* morton, To* row_major) {
    for_rows(c, [&](size_t z, size_t y, size_t row) {
        for (size_t x = 0; x < c.n; ++x) row_major[row + x] = static_cast<To>(morton[morton_encode(x, y, z)]);
    });
}

class MortonTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Cube cb = cube_of(size);
        const auto steps = static_cast<size_t>(size.param("steps"));
        const size_t cells = cb.cells();
        Case c;
        c.buffers.push_back(make_buffer<float>("A", BufferRole::state, ElemType::f32, cells));
        c.buffers.push_back(make_buffer<float>("B", BufferRole::output, ElemType::f32, cells));

        // Nominal: the Gaussian of TASKS.md (sigma = 0.15 N, peak 1 at the centre, faces 0),
        // independent of the seed. Outlier: another alpha in the stable range (alpha < 1/6), an
        // amplitude and offset (non-zero faces that must be copied) and noise that breaks the
        // bump's symmetry, so a kernel that mixes up the axes' bits fails.
        float alpha = static_cast<float>(kNominalAlpha);
        const bool outlier = trial == Trial::outlier;
        double amp = 1.0, offset = 0.0;
        if (outlier) {
            alpha = static_cast<float>(draw_outlier(rng::uniform(seed, constant_stream, 0), 0.03, 0.16, kNominalAlpha, 0.02));
            amp = (5.0 + 25.0 * rng::uniform(seed, constant_stream, 1)) * (rng::uniform(seed, constant_stream, 2) < 0.5 ? -1 : 1);
            offset = -20.0 + 40.0 * rng::uniform(seed, constant_stream, 3);
        }
        const double sigma = 0.15 * static_cast<double>(cb.n), centre = 0.5 * static_cast<double>(cb.n - 1);
        std::vector<float> row_major(cells);
        for_rows(cb, [&](size_t z, size_t y, size_t row) {
            for (size_t x = 0; x < cb.n; ++x) {
                const double dx = x - centre, dy = y - centre, dz = z - centre;
                const double g = cb.face(x, y, z) ? 0.0 : std::exp(-(dx * dx + dy * dy + dz * dz) / (2 * sigma * sigma));
                const double w = outlier ? 2.0 * rng::uniform(seed, noise_stream, row + x) - 1.0 : 0.0;
                row_major[row + x] = static_cast<float>(offset + amp * (g + 0.1 * w));
            }
        });
        scatter(cb, row_major.data(), c.buffers[0].as<float>());

        const auto n32 = static_cast<uint32_t>(cb.n), log32 = static_cast<uint32_t>(cb.log_n);
        for (size_t s = 0; s < steps; ++s) {
            const int in = s % 2 == 0 ? 0 : 1;
            c.launches.push_back({"morton_stencil",
                                  {ArgRef::buf(in), ArgRef::buf(1 - in), ArgRef::u(n32), ArgRef::u(log32), ArgRef::f(alpha)},
                                  Dim3{cells, 1, 1}});
        }
        c.results = {steps % 2 == 1 ? 1 : 0};  // the buffer the last step wrote
        c.constants = {{"alpha", static_cast<double>(alpha)}};
        c.work = 8.0 * static_cast<double>(cells) * static_cast<double>(steps);
        c.working_set_bytes = 8.0 * static_cast<double>(cells);
        return c;
    }

    // Computed row-major in float64, returned in Morton order (the device's layout, as a
    // reference from the seed on the device would be); check() gathers both back.
    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Cube cb = cube_of(size);
        const auto steps = static_cast<size_t>(size.param("steps"));
        const size_t cells = cb.cells(), sy = cb.n, sz = cb.n * cb.n;
        const double alpha = c.constants.at("alpha");
        std::vector<double> cur(cells), next(cells);
        gather(cb, c.buffers[0].as<float>(), cur.data());
        for (size_t s = 0; s < steps; ++s) {
            for_rows(cb, [&](size_t z, size_t y, size_t row) {
                for (size_t x = 0; x < cb.n; ++x) {
                    const size_t i = row + x;
                    if (cb.face(x, y, z)) {
                        next[i] = cur[i];  // Dirichlet: faces copy through
                        continue;
                    }
                    next[i] = cur[i] + alpha * (cur[i - 1] + cur[i + 1] + cur[i - sy] + cur[i + sy] + cur[i - sz] +
                                                cur[i + sz] - 6.0 * cur[i]);
                }
            });
            cur.swap(next);
        }
        std::vector<float> out(cells);
        scatter(cb, cur.data(), out.data());
        return Reference{{to_bytes(out)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        const Cube cb = cube_of(size);
        const size_t bytes = cb.cells() * sizeof(float);
        if (outputs.size() != ref.results.size() || outputs[0].size() != bytes || ref.results[0].size() != bytes) {
            CheckResult r;
            r.kind = "size";
            r.message = fmt::format("the run returned no complete output for the final field ({} floats expected)", cb.cells());
            return r;
        }
        // Row-major, so that the worst element is named by its (x, y, z).
        std::vector<float> got(cb.cells()), want(cb.cells());
        gather(cb, as_floats(outputs[0]).data(), got.data());
        gather(cb, as_floats(ref.results[0]).data(), want.data());
        const double start = max_magnitude(as_floats(c.buffers[0].data));
        const double rel = relative_tolerance(static_cast<double>(size.param("steps")));
        return check_max_abs(got, want, Tolerance{0, rel, start}, grid_index(cb.n, cb.n, cb.n));
    }

private:
    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_morton_task() { return std::make_unique<MortonTask>(); }

}  // namespace kevo
