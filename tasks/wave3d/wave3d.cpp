// R1 stencil task wave3d: explicit second-order 3-D wave equation (7-point Laplacian) with
// Dirichlet faces, one launch per time step, three buffers rotating prev/curr/next.
#include <algorithm>
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

constexpr double kNominalAlpha = 0.18;
// Max-abs relative to the field's magnitude (the larger of the two initial fields' and the
// result's: the bump spreads, so the end no longer shows the values the run rounded at).
constexpr double kRel = 1e-4;

enum Stream : uint64_t { constant_stream = 1, curr_noise_stream = 2, prev_noise_stream = 3 };

SizeSpec grid(int64_t nx, int64_t ny, int64_t nz, int64_t steps, bool heldout = false) {
    return {fmt::format("{}x{}x{}x{}", nx, ny, nz, steps), heldout, {{"nx", nx}, {"ny", ny}, {"nz", nz}, {"steps", steps}}};
}

SizeSpec cube(int64_t n, int64_t steps, bool heldout = false) { return grid(n, n, n, steps, heldout); }

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "wave3d";
    s.regime = "R1 stencil";
    s.category = "stencil";
    s.order = 11;
    s.bound = Bound::bandwidth;
    s.model = "12 B per cell per step (read u_prev and u_curr, write u_next)";
    s.tolerance = "max |err| <= 1e-4 * max(max|u_0|, max|ref|) (u_0: both initial fields); NaN or Inf anywhere fails";
    s.kernels = {{"wave_step",
                  {sig::const_ptr("u_prev", ParamType::f32), sig::const_ptr("u_curr", ParamType::f32),
                   sig::ptr("u_next", ParamType::f32), sig::value("nx", ParamType::u32),
                   sig::value("ny", ParamType::u32), sig::value("nz", ParamType::u32),
                   sig::value("alpha", ParamType::f32)},
                  3, Dim3{8, 8, 4}}};
    // Non-cubic, non-power-of-two small grids, so that a kernel assuming a cube or a multiple of
    // the block fails.
    s.profiles["small"] = {grid(32, 32, 32, 20), grid(48, 40, 36, 15), grid(72, 64, 56, 10), grid(50, 44, 38, 12, true)};
    s.profiles["paper"] = {cube(64, 30), cube(160, 20), cube(192, 15), cube(128, 20, true)};
    // 0.5 to 1.2 GB working sets (the H200's L2 is 60 MB); the largest CPU reference is ~1.3e9
    // cell updates in float64, about a second on 16 cores, so no size needs device_reference.
    s.profiles["large"] = {grid(384, 384, 384, 20), grid(512, 512, 256, 20), grid(640, 480, 320, 10),
                           grid(448, 352, 288, 15, true)};
    return s;
}

struct Dims {
    size_t nx, ny, nz;
    size_t cells() const { return nx * ny * nz; }
    bool face(size_t x, size_t y, size_t z) const {
        return x == 0 || y == 0 || z == 0 || x == nx - 1 || y == ny - 1 || z == nz - 1;
    }
};

Dims dims_of(const SizeSpec& size) {
    return {static_cast<size_t>(size.param("nx")), static_cast<size_t>(size.param("ny")),
            static_cast<size_t>(size.param("nz"))};
}

// Gaussian bump of peak 1 at the grid centre, sigma = 0.1 * min(nx, ny, nz) cells, faces 0.
double bump(const Dims& d, size_t x, size_t y, size_t z) {
    if (d.face(x, y, z)) return 0.0;
    const double sigma = 0.1 * static_cast<double>(std::min({d.nx, d.ny, d.nz}));
    const double dx = static_cast<double>(x) - 0.5 * static_cast<double>(d.nx - 1);
    const double dy = static_cast<double>(y) - 0.5 * static_cast<double>(d.ny - 1);
    const double dz = static_cast<double>(z) - 0.5 * static_cast<double>(d.nz - 1);
    return std::exp(-(dx * dx + dy * dy + dz * dz) / (2.0 * sigma * sigma));
}

// Calls body(begin, end) over planes z, in chunks of about 32k cells.
void for_planes(const Dims& d, const std::function<void(size_t, size_t)>& body) {
    parallel_for(d.nz, body, std::max<size_t>(1, (size_t{1} << 15) / (d.nx * d.ny)));
}

class Wave3dTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Dims d = dims_of(size);
        const auto steps = static_cast<size_t>(size.param("steps"));
        const size_t n = d.cells();
        Case c;
        c.buffers.push_back(make_buffer<float>("buf0", BufferRole::state, ElemType::f32, n));
        c.buffers.push_back(make_buffer<float>("buf1", BufferRole::state, ElemType::f32, n));
        c.buffers.push_back(make_buffer<float>("buf2", BufferRole::output, ElemType::f32, n));
        float* prev = c.buffers[0].as<float>();
        float* curr = c.buffers[1].as<float>();

        // Nominal: u_prev = u_curr = the bump (TASKS.md), independent of the seed. Outlier: a
        // wider alpha, an amplitude and offset (so the faces hold a non-zero value that must be
        // copied), noise that breaks the bump's symmetry (a kernel mixing up axes or strides fails
        // even on a cube), and u_prev != u_curr with different face values (a kernel copying the
        // faces from u_prev, or swapping prev and curr, fails).
        float alpha = static_cast<float>(kNominalAlpha);
        const bool outlier = trial == Trial::outlier;
        double amp = 1.0, offset = 0.0;
        if (outlier) {
            alpha = static_cast<float>(draw_outlier(rng::uniform(seed, constant_stream, 0), 0.05, 0.30, kNominalAlpha, 0.03));
            amp = (2.0 + 6.0 * rng::uniform(seed, constant_stream, 1)) * (rng::uniform(seed, constant_stream, 2) < 0.5 ? -1 : 1);
            offset = -5.0 + 10.0 * rng::uniform(seed, constant_stream, 3);
        }
        for_planes(d, [&](size_t begin, size_t end) {
            for (size_t z = begin; z < end; ++z)
                for (size_t y = 0; y < d.ny; ++y)
                    for (size_t x = 0; x < d.nx; ++x) {
                        const size_t i = (z * d.ny + y) * d.nx + x;
                        const double g = bump(d, x, y, z);
                        if (!outlier) {
                            prev[i] = curr[i] = static_cast<float>(g);
                            continue;
                        }
                        const double w_curr = 2.0 * rng::uniform(seed, curr_noise_stream, i) - 1.0;
                        const double w_prev = 2.0 * rng::uniform(seed, prev_noise_stream, i) - 1.0;
                        curr[i] = static_cast<float>(offset + amp * (g + 0.1 * w_curr));
                        prev[i] = static_cast<float>(offset + amp * (0.9 * g + 0.1 * w_prev));
                    }
        });

        for (size_t s = 0; s < steps; ++s) {
            c.launches.push_back({"wave_step",
                                  {ArgRef::buf(static_cast<int>(s % 3)), ArgRef::buf(static_cast<int>((s + 1) % 3)),
                                   ArgRef::buf(static_cast<int>((s + 2) % 3)), ArgRef::u(static_cast<uint32_t>(d.nx)),
                                   ArgRef::u(static_cast<uint32_t>(d.ny)), ArgRef::u(static_cast<uint32_t>(d.nz)),
                                   ArgRef::f(alpha)},
                                  Dim3{d.nx, d.ny, d.nz}});
        }
        // The last step (s = steps-1) writes buf[(steps+1) % 3]; with no steps, u_curr is the answer.
        c.results = {static_cast<int>(steps == 0 ? 1 : (steps + 1) % 3)};
        c.constants = {{"alpha", static_cast<double>(alpha)}};
        const double cells = static_cast<double>(n);
        c.work = 12.0 * cells * static_cast<double>(steps);
        c.working_set_bytes = 12.0 * cells;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Dims d = dims_of(size);
        const auto steps = static_cast<size_t>(size.param("steps"));
        const size_t n = d.cells();
        const double alpha = c.constants.at("alpha");
        const float* p0 = c.buffers[0].as<float>();
        const float* c0 = c.buffers[1].as<float>();
        std::vector<double> prev(p0, p0 + n), curr(c0, c0 + n), next(n);
        const size_t sx = 1, sy = d.nx, sz = d.nx * d.ny;
        for (size_t s = 0; s < steps; ++s) {
            for_planes(d, [&](size_t begin, size_t end) {
                for (size_t z = begin; z < end; ++z)
                    for (size_t y = 0; y < d.ny; ++y)
                        for (size_t x = 0; x < d.nx; ++x) {
                            const size_t i = z * sz + y * sy + x;
                            if (d.face(x, y, z)) {
                                next[i] = curr[i];  // Dirichlet: faces copy u_curr
                                continue;
                            }
                            const double u = curr[i];
                            const double lap = curr[i - sx] + curr[i + sx] + curr[i - sy] + curr[i + sy] +
                                               curr[i - sz] + curr[i + sz] - 6.0 * u;
                            next[i] = 2.0 * u - prev[i] + alpha * lap;
                        }
            });
            // prev <- curr <- next, as the buffers rotate on the device.
            prev.swap(curr);
            curr.swap(next);
        }
        std::vector<float> out(n);
        parallel_for(n, [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) out[i] = static_cast<float>(curr[i]);
        });
        return Reference{{to_bytes(out)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != ref.results.size()) {
            CheckResult r;
            r.kind = "size";
            r.message = "the run returned no output for the final field";
            return r;
        }
        const Dims d = dims_of(size);
        const double start = std::max(max_magnitude(as_floats(c.buffers[0].data)), max_magnitude(as_floats(c.buffers[1].data)));
        return check_max_abs(as_floats(outputs[0]), as_floats(ref.results[0]), Tolerance{0, kRel, start},
                             grid_index(d.nx, d.ny, d.nz));
    }

private:
    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_wave3d_task() { return std::make_unique<Wave3dTask>(); }

}  // namespace kevo
