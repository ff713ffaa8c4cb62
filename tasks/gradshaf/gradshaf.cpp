// R5 multi-kernel reduction task gradshaf: Picard steps towards a fixed-boundary Grad-Shafranov
// equilibrium. Each step is two launches: a max-reduction of psi over the interior into a
// scratch buffer (one maximum, or per-block partial maxima), then a weighted-Jacobi update whose
// source term is normalised by that maximum.
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>
#include <numbers>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/checks.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr double kNominalRmin = 1.0, kNominalExtent = 1.0, kNominalPaxis = 200.0, kNominalMu0 = 1.0,
                 kNominalOmega = 1.0;

enum Stream : uint64_t { constant_stream = 1, amplitude_stream = 2, noise_stream = 3, boundary_stream = 4 };
enum Buf : int { psi_a = 0, psi_b = 1, axis_buf = 2 };
// psi_axis holds this many floats: room for one partial maximum per block of a multi-block
// reduction, which gradshaf_step combines (OpenCL C 1.2 has no program-scope scratch of its own).
constexpr size_t kAxisScratch = 4096;

SizeSpec grid(int64_t nr, int64_t nz, int64_t steps, bool heldout = false) {
    return {fmt::format("{}x{}x{}", nr, nz, steps), heldout, {{"nr", nr}, {"nz", nz}, {"steps", steps}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "gradshaf";
    s.regime = "R5 multi-kernel reduction";
    s.category = "multi-kernel reduction";
    s.order = 70;
    s.bound = Bound::bandwidth;
    s.model = "12 B per cell per step (reduction reads psi, the update reads psi and writes psi)";
    s.tolerance = "max |err| <= 2e-4 * max(max|psi_0|, max|ref|); NaN or Inf anywhere fails";
    s.kernels = {
        {"gradshaf_axis_reduce",
         {sig::const_ptr("psi", ParamType::f32), sig::ptr("psi_axis", ParamType::f32),
          sig::value("nr", ParamType::u32), sig::value("nz", ParamType::u32)},
         1,
         Dim3{256, 1, 1}},
        {"gradshaf_step",
         {sig::const_ptr("psi_in", ParamType::f32), sig::ptr("psi_out", ParamType::f32),
          sig::const_ptr("psi_axis", ParamType::f32), sig::value("nr", ParamType::u32),
          sig::value("nz", ParamType::u32), sig::value("rmin", ParamType::f32),
          sig::value("dr", ParamType::f32), sig::value("dz", ParamType::f32),
          sig::value("p_axis", ParamType::f32), sig::value("mu0", ParamType::f32),
          sig::value("omega", ParamType::f32)},
         2, Dim3{16, 16, 1}},
    };
    // small: non-square, neither powers of two nor 2^k + 1.
    s.profiles["small"] = {grid(48, 40, 20), grid(65, 49, 25), grid(96, 80, 20), grid(72, 56, 25, true)};
    s.profiles["paper"] = {grid(65, 65, 30), grid(257, 257, 40), grid(513, 513, 30), grid(129, 129, 35, true)};
    // large: 8 B per cell of state puts the working sets at 126 MB to 302 MB (two to five times an
    // H200's L2).
    s.profiles["large"] = {grid(4097, 4097, 20), grid(8193, 4097, 10), grid(6145, 6145, 10),
                           grid(5121, 3073, 15, true)};
    return s;
}

bool on_boundary(size_t i, size_t j, size_t nr, size_t nz) { return i == 0 || j == 0 || i == nr - 1 || j == nz - 1; }

struct Constants {
    double rmin, dr, dz, p_axis, mu0, omega;
};

Constants constants_of(const Case& c) {
    const auto& k = c.constants;
    return {k.at("rmin"), k.at("dr"), k.at("dz"), k.at("p_axis"), k.at("mu0"), k.at("omega")};
}

class GradshafTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const auto nr = static_cast<size_t>(size.param("nr"));
        const auto nz = static_cast<size_t>(size.param("nz"));
        const auto steps = static_cast<size_t>(size.param("steps"));
        const bool outlier = trial == Trial::outlier;
        Case c;
        c.buffers.push_back(make_buffer<float>("psi_a", BufferRole::state, ElemType::f32, nr * nz));
        c.buffers.push_back(make_buffer<float>("psi_b", BufferRole::output, ElemType::f32, nr * nz));
        c.buffers.push_back(make_buffer<float>("psi_axis", BufferRole::output, ElemType::f32, kAxisScratch));

        // Outlier: every constant moves (another major radius and box, pressure, mu0, a damped
        // omega) so that a kernel recomputing dr from nr or hard-coding any of them fails. The field
        // gets another amplitude, interior noise (so psin < 0 occurs) and a random boundary that
        // often exceeds the interior maximum, so a reduction that strays onto the boundary fails.
        double rmin = kNominalRmin, r_extent = kNominalExtent, z_extent = kNominalExtent, p_axis = kNominalPaxis,
               mu0 = kNominalMu0, omega = kNominalOmega, amplitude = 1.0;
        if (outlier) {
            auto u = [&](uint64_t i) { return rng::uniform(seed, constant_stream, i); };
            rmin = draw_outlier(u(0), 0.6, 1.6, kNominalRmin, 0.1);
            r_extent = draw_outlier(u(1), 0.6, 1.4, kNominalExtent, 0.1);
            z_extent = draw_outlier(u(2), 0.6, 1.4, kNominalExtent, 0.1);
            p_axis = draw_outlier(u(3), 100.0, 300.0, kNominalPaxis, 20.0);
            mu0 = draw_outlier(u(4), 0.5, 2.0, kNominalMu0, 0.1);
            omega = draw_outlier(u(5), 0.5, 1.0, kNominalOmega, 0.08);
            amplitude = 0.5 + 2.5 * rng::uniform(seed, amplitude_stream, 0);
        }
        // The kernels receive float32 constants; the reference uses exactly those values.
        auto f32 = [](double v) { return static_cast<double>(static_cast<float>(v)); };
        const Constants k{f32(rmin), f32(r_extent / static_cast<double>(nr - 1)),
                          f32(z_extent / static_cast<double>(nz - 1)), f32(p_axis), f32(mu0), f32(omega)};

        float* psi = c.buffers[psi_a].as<float>();
        parallel_for(nz, [&](size_t begin, size_t end) {
            for (size_t j = begin; j < end; ++j)
                for (size_t i = 0; i < nr; ++i) {
                    const size_t cell = j * nr + i;
                    double v = 0.0;
                    if (on_boundary(i, j, nr, nz)) {
                        if (outlier) v = amplitude * 1.5 * rng::uniform(seed, boundary_stream, cell);
                    } else {
                        v = std::sin(std::numbers::pi * static_cast<double>(j) / static_cast<double>(nz - 1)) *
                            std::sin(std::numbers::pi * static_cast<double>(i) / static_cast<double>(nr - 1));
                        if (outlier)
                            v = amplitude * (v + 0.05 * (2.0 * rng::uniform(seed, noise_stream, cell) - 1.0));
                    }
                    psi[cell] = static_cast<float>(v);
                }
        });

        const auto nr32 = static_cast<uint32_t>(nr), nz32 = static_cast<uint32_t>(nz);
        for (size_t s = 0; s < steps; ++s) {
            const int in = s % 2 == 0 ? psi_a : psi_b;
            // The reduction's domain is a single cell: the host launches one block of the declared
            // shape unless the kernel fixes the block count with grid=.
            c.launches.push_back({"gradshaf_axis_reduce",
                                  {ArgRef::buf(in), ArgRef::buf(axis_buf), ArgRef::u(nr32), ArgRef::u(nz32)},
                                  Dim3{1, 1, 1}});
            c.launches.push_back({"gradshaf_step",
                                  {ArgRef::buf(in), ArgRef::buf(psi_a + psi_b - in), ArgRef::buf(axis_buf),
                                   ArgRef::u(nr32), ArgRef::u(nz32), ArgRef::f(static_cast<float>(k.rmin)),
                                   ArgRef::f(static_cast<float>(k.dr)), ArgRef::f(static_cast<float>(k.dz)),
                                   ArgRef::f(static_cast<float>(k.p_axis)), ArgRef::f(static_cast<float>(k.mu0)),
                                   ArgRef::f(static_cast<float>(k.omega))},
                                  Dim3{nr, nz, 1}});
        }
        c.results = {steps % 2 == 1 ? psi_b : psi_a};
        c.constants = {{"rmin", k.rmin}, {"dr", k.dr}, {"dz", k.dz}, {"p_axis", k.p_axis}, {"mu0", k.mu0}, {"omega", k.omega}};
        const double cells = static_cast<double>(nr) * static_cast<double>(nz);
        c.work = 12.0 * cells * static_cast<double>(steps);
        c.working_set_bytes = 8.0 * cells + 4.0;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const auto nr = static_cast<size_t>(size.param("nr"));
        const auto nz = static_cast<size_t>(size.param("nz"));
        const auto steps = static_cast<size_t>(size.param("steps"));
        const Constants k = constants_of(c);
        const float* init = c.buffers[psi_a].as<float>();
        std::vector<double> cur(init, init + nr * nz), next(nr * nz);
        const size_t rows_per_chunk = std::max<size_t>(1, (size_t{1} << 15) / nr);
        const double a_ns = 1.0 / (k.dz * k.dz), a_c = -2.0 / (k.dr * k.dr) - 2.0 / (k.dz * k.dz);
        for (size_t s = 0; s < steps; ++s) {
            double axis = -INFINITY;
            std::mutex lock;
            parallel_for(
                nz - 2,
                [&](size_t begin, size_t end) {
                    double m = -INFINITY;
                    for (size_t j = begin + 1; j < end + 1; ++j)
                        for (size_t i = 1; i + 1 < nr; ++i) m = std::max(m, cur[j * nr + i]);
                    std::lock_guard guard(lock);
                    axis = std::max(axis, m);
                },
                rows_per_chunk);
            parallel_for(
                nz,
                [&](size_t begin, size_t end) {
                    for (size_t j = begin; j < end; ++j)
                        for (size_t i = 0; i < nr; ++i) {
                            const size_t idx = j * nr + i;
                            if (on_boundary(i, j, nr, nz)) {
                                next[idx] = cur[idx];
                                continue;
                            }
                            const double r = k.rmin + static_cast<double>(i) * k.dr;
                            const double psin = cur[idx] / axis;
                            const double current = psin > 0.0 && psin < 1.0 ? r * k.p_axis * 4.0 * psin * (1.0 - psin) : 0.0;
                            const double rhs = -k.mu0 * r * current;
                            // The Grad-Shafranov operator: d2/dR2 - (1/R) d/dR + d2/dZ2.
                            const double a_w = 1.0 / (k.dr * k.dr) + 1.0 / (2.0 * r * k.dr);
                            const double a_e = 1.0 / (k.dr * k.dr) - 1.0 / (2.0 * r * k.dr);
                            const double op = a_w * cur[idx - 1] + a_e * cur[idx + 1] +
                                              a_ns * (cur[idx - nr] + cur[idx + nr]) + a_c * cur[idx];
                            next[idx] = cur[idx] + k.omega * (rhs - op) / a_c;
                        }
                },
                rows_per_chunk);
            cur.swap(next);
        }
        std::vector<float> out(nr * nz);
        parallel_for(out.size(), [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) out[i] = static_cast<float>(cur[i]);
        });
        return Reference{{to_bytes(out)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != ref.results.size()) {
            CheckResult r;
            r.kind = "size";
            r.message = "the run returned no output for the final psi";
            return r;
        }
        const auto nr = static_cast<uint64_t>(size.param("nr"));
        // grid_index names the axes x and y; here they are R (i) and Z (j).
        const IndexFormatter where = [nr](int64_t index) {
            return fmt::format("(i={}, j={})", static_cast<uint64_t>(index) % nr, static_cast<uint64_t>(index) / nr);
        };
        // Relative to psi's magnitude (the larger of the start's and the result's): each step's
        // operator cancels terms of 1/dR^2 times psi, and its rounding is relative to psi.
        constexpr double kRel = 2e-4;
        const double start = max_magnitude(as_floats(c.buffers[0].data));
        return check_max_abs(as_floats(outputs[0]), as_floats(ref.results[0]), Tolerance{0, kRel, start}, where);
    }

private:
    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_gradshaf_task() { return std::make_unique<GradshafTask>(); }

}  // namespace kevo
