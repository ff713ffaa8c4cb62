// R7 wavefront / tridiagonal task adi3d: LOD-ADI heat step on a 3-D box, three implicit
// tridiagonal sweeps per step (adi_x, adi_y, adi_z, one launch each), every launch reading one
// buffer and writing the other.
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

constexpr double kNominalMu = 0.5;

enum Stream : uint64_t { constant_stream = 1, noise_stream = 2 };

SizeSpec grid(int64_t nx, int64_t ny, int64_t nz, int64_t steps, bool heldout = false) {
    return {fmt::format("{}x{}x{}x{}", nx, ny, nz, steps), heldout, {{"nx", nx}, {"ny", ny}, {"nz", nz}, {"steps", steps}}};
}

SizeSpec cube(int64_t n, int64_t steps, bool heldout = false) { return grid(n, n, n, steps, heldout); }

KernelSpec kernel(const std::string& name) {
    return {name,
            {sig::const_ptr("u_in", ParamType::f32), sig::ptr("u_out", ParamType::f32), sig::value("nx", ParamType::u32),
             sig::value("ny", ParamType::u32), sig::value("nz", ParamType::u32), sig::value("mu", ParamType::f32)},
            2, Dim3{32, 4, 1}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "adi3d";
    s.regime = "R7 wavefront / tridiagonal";
    s.category = "wavefront / tridiagonal";
    s.order = 90;
    s.bound = Bound::bandwidth;
    s.model = "24 B per cell per step (three sweeps, each reading u_in and writing u_out once)";
    s.tolerance = "max |err| <= 5e-4 * max(max|u_0|, max|ref|); NaN or Inf anywhere fails";
    s.kernels = {kernel("adi_x"), kernel("adi_y"), kernel("adi_z")};
    // The held-out sizes are prisms (TASKS.md: 256x192x128), so every profile has a non-cubic
    // in-distribution size too, and small ones that are not multiples of the block.
    s.profiles["small"] = {cube(32, 5), grid(48, 40, 24, 4), grid(60, 52, 44, 3), grid(40, 28, 36, 5, true)};
    s.profiles["paper"] = {cube(64, 20), cube(96, 15), cube(128, 10), grid(256, 192, 128, 10, true)};
    // 0.4 to 0.7 GB working sets (the H200's L2 is 60 MB); the largest CPU reference is ~1.1e9
    // line-point solves in float64, about a second on 16 cores, so no size needs device_reference.
    s.profiles["large"] = {cube(384, 5), grid(512, 320, 256, 5), cube(448, 4), grid(576, 416, 224, 5, true)};
    return s;
}

struct Dims {
    size_t nx, ny, nz;
    size_t cells() const { return nx * ny * nz; }
};

Dims dims_of(const SizeSpec& size) {
    return {static_cast<size_t>(size.param("nx")), static_cast<size_t>(size.param("ny")),
            static_cast<size_t>(size.param("nz"))};
}

// The Thomas algorithm's line-independent factors for the interior system of a line of `len`
// points: diagonal 1 + 2 mu, off-diagonals -mu, unknowns j = 1 .. len-2.
struct Factors {
    std::vector<double> cp, inv_den;  // c'_j and 1 / (b - a c'_{j-1}), indexed by j
    Factors(size_t len, double mu) : cp(len, 0.0), inv_den(len, 0.0) {
        const double b = 1.0 + 2.0 * mu;
        for (size_t j = 1; j + 1 < len; ++j) {
            const double den = b + (j > 1 ? mu * cp[j - 1] : 0.0);
            inv_den[j] = 1.0 / den;
            cp[j] = -mu / den;
        }
    }
};

// Solves `count` lines side by side: line l holds the points base + l + j*stride, j = 0 .. len-1
// (the lines are adjacent in memory, so the inner loop runs along contiguous x). Lines with
// face[l] set touch a face and are copied; the others copy their endpoints and solve
// -mu u[j-1] + (1+2mu) u[j] - mu u[j+1] = in[j] inside, the endpoints entering as mu*boundary.
void solve_lines(const std::vector<double>& in, std::vector<double>& out, size_t base, size_t stride, size_t len,
                 size_t count, const std::vector<char>& face, const Factors& f, double mu) {
    auto at = [&](size_t j, size_t l) { return base + l + j * stride; };
    for (size_t l = 0; l < count; ++l) {
        out[at(0, l)] = in[at(0, l)];
        out[at(len - 1, l)] = in[at(len - 1, l)];
    }
    for (size_t j = 1; j + 1 < len; ++j)
        for (size_t l = 0; l < count; ++l) {
            const size_t p = at(j, l);
            if (face[l]) {
                out[p] = in[p];
                continue;
            }
            double rhs = in[p];
            if (j == 1) rhs += mu * in[p - stride];
            if (j + 2 == len) rhs += mu * in[p + stride];
            if (j > 1) rhs += mu * out[p - stride];
            out[p] = rhs * f.inv_den[j];
        }
    for (size_t j = len - 2; j-- > 1;)
        for (size_t l = 0; l < count; ++l)
            if (!face[l]) out[at(j, l)] -= f.cp[j] * out[at(j + 1, l)];
}

class Adi3dTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const Dims d = dims_of(size);
        const auto steps = static_cast<size_t>(size.param("steps"));
        const size_t n = d.cells();
        Case c;
        c.buffers.push_back(make_buffer<float>("A", BufferRole::state, ElemType::f32, n));
        c.buffers.push_back(make_buffer<float>("B", BufferRole::output, ElemType::f32, n));
        float* u = c.buffers[0].as<float>();

        // Nominal: the Gaussian of TASKS.md, independent of the seed. Outlier: another mu (the
        // scheme is implicit, so any mu > 0 is stable), an amplitude and offset (non-zero faces
        // that must enter the right-hand sides and be copied) and noise that breaks the bump's
        // symmetry, so a kernel that mixes up axes or strides fails.
        float mu = static_cast<float>(kNominalMu);
        const bool outlier = trial == Trial::outlier;
        double amp = 1.0, offset = 0.0;
        if (outlier) {
            mu = static_cast<float>(draw_outlier(rng::uniform(seed, constant_stream, 0), 0.1, 2.0, kNominalMu, 0.1));
            amp = (5.0 + 25.0 * rng::uniform(seed, constant_stream, 1)) * (rng::uniform(seed, constant_stream, 2) < 0.5 ? -1 : 1);
            offset = -20.0 + 40.0 * rng::uniform(seed, constant_stream, 3);
        }
        const double sigma = 0.15 * std::cbrt(static_cast<double>(n));
        parallel_for(d.nz, [&](size_t begin, size_t end) {
            for (size_t z = begin; z < end; ++z)
                for (size_t y = 0; y < d.ny; ++y)
                    for (size_t x = 0; x < d.nx; ++x) {
                        const size_t i = (z * d.ny + y) * d.nx + x;
                        const bool face = x == 0 || y == 0 || z == 0 || x == d.nx - 1 || y == d.ny - 1 || z == d.nz - 1;
                        const double dx = x - 0.5 * (d.nx - 1.0), dy = y - 0.5 * (d.ny - 1.0), dz = z - 0.5 * (d.nz - 1.0);
                        const double g = face ? 0.0 : std::exp(-(dx * dx + dy * dy + dz * dz) / (2 * sigma * sigma));
                        const double w = outlier ? 2.0 * rng::uniform(seed, noise_stream, i) - 1.0 : 0.0;
                        u[i] = static_cast<float>(offset + amp * (g + 0.1 * w));
                    }
        }, std::max<size_t>(1, (size_t{1} << 15) / (d.nx * d.ny)));

        const auto nx = static_cast<uint32_t>(d.nx), ny = static_cast<uint32_t>(d.ny), nz = static_cast<uint32_t>(d.nz);
        const std::pair<const char*, Dim3> sweeps[3] = {
            {"adi_x", Dim3{d.ny, d.nz, 1}}, {"adi_y", Dim3{d.nx, d.nz, 1}}, {"adi_z", Dim3{d.nx, d.ny, 1}}};
        for (size_t s = 0; s < steps; ++s)
            for (const auto& [name, domain] : sweeps) {
                const int in = c.launches.size() % 2 == 0 ? 0 : 1;  // A->B, B->A, A->B, ...
                c.launches.push_back({name,
                                      {ArgRef::buf(in), ArgRef::buf(1 - in), ArgRef::u(nx), ArgRef::u(ny), ArgRef::u(nz),
                                       ArgRef::f(mu)},
                                      domain});
            }
        c.results = {c.launches.size() % 2 == 1 ? 1 : 0};  // the buffer the last launch wrote
        c.constants = {{"mu", static_cast<double>(mu)}};
        c.work = 24.0 * static_cast<double>(n) * static_cast<double>(steps);
        c.working_set_bytes = 8.0 * static_cast<double>(n);
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const Dims d = dims_of(size);
        const auto steps = static_cast<size_t>(size.param("steps"));
        const size_t n = d.cells(), sz = d.nx * d.ny;
        const double mu = c.constants.at("mu");
        const float* u0 = c.buffers[0].as<float>();
        std::vector<double> cur(u0, u0 + n), next(n);
        const Factors fx(d.nx, mu), fy(d.ny, mu), fz(d.nz, mu);
        // Face masks of the batched lines: along y and z the batch runs over x.
        const std::vector<char> one_line_inside{0}, one_line_face{1};
        std::vector<char> x_face(d.nx, 0);
        x_face.front() = x_face.back() = 1;
        const std::vector<char> all_face(d.nx, 1);
        // parallel_for chunks of about 32k points.
        auto chunk = [](size_t points_per_item) { return std::max<size_t>(1, (size_t{1} << 15) / points_per_item); };
        for (size_t s = 0; s < steps; ++s) {
            // x: one contiguous line per (y, z); lines on the y or z faces are copied.
            parallel_for(d.ny * d.nz, [&](size_t begin, size_t end) {
                for (size_t r = begin; r < end; ++r) {
                    const size_t y = r % d.ny, z = r / d.ny;
                    const bool face = y == 0 || z == 0 || y == d.ny - 1 || z == d.nz - 1;
                    solve_lines(cur, next, r * d.nx, 1, d.nx, 1, face ? one_line_face : one_line_inside, fx, mu);
                }
            }, chunk(d.nx));
            cur.swap(next);
            // y: per plane z, the nx lines side by side; lines on the x or z faces are copied.
            parallel_for(d.nz, [&](size_t begin, size_t end) {
                for (size_t z = begin; z < end; ++z)
                    solve_lines(cur, next, z * sz, d.nx, d.ny, d.nx, z == 0 || z == d.nz - 1 ? all_face : x_face, fy, mu);
            }, chunk(sz));
            cur.swap(next);
            // z: per row y, the nx lines side by side; lines on the x or y faces are copied.
            parallel_for(d.ny, [&](size_t begin, size_t end) {
                for (size_t y = begin; y < end; ++y)
                    solve_lines(cur, next, y * d.nx, sz, d.nz, d.nx, y == 0 || y == d.ny - 1 ? all_face : x_face, fz, mu);
            }, chunk(d.nx * d.nz));
            cur.swap(next);
        }
        std::vector<float> out(n);
        parallel_for(n, [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) out[i] = static_cast<float>(cur[i]);
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
        // Relative to the field's magnitude (the larger of the start's and the result's; the
        // field only decays). Not tighter: each of the 3 x steps tridiagonal solves rounds at that
        // magnitude, amplified up to (1 + 4 mu) = 9 at the outlier's mu = 2; correct kernels reach
        // 1e-5 of it at the paper sizes.
        constexpr double kRel = 5e-4;
        const double start = max_magnitude(as_floats(c.buffers[0].data));
        return check_max_abs(as_floats(outputs[0]), as_floats(ref.results[0]), Tolerance{0, kRel, start},
                             grid_index(d.nx, d.ny, d.nz));
    }

private:
    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_adi3d_task() { return std::make_unique<Adi3dTask>(); }

}  // namespace kevo
