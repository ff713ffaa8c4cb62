// R2 compute-bound task nbody: all-pairs softened gravity with a semi-implicit Euler step,
// one launch per step, positions and velocities ping-ponged between two buffer pairs.
#include <algorithm>
#include <cmath>
#include <memory>
#include <mutex>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/checks.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr double kNominalDt = 1e-3, kNominalEps = 0.05, kNominalG = 1.0;
// Beyond the paper's largest cluster (2048 bodies, G = 1) G shrinks as 2048 / n, so that every
// size feels the same total pull. With G = 1 a cluster of 32768 unit masses falls through its
// centre within the 10 steps (a displacement of about G M (10 dt)^2 / 2 = 1.6 in a box of 2): a
// chaotic collapse that amplified the rounding of correct kernels to within 3x of the tolerance
// (measured on the H200, n = 32768, seed and best-known kernel alike).
constexpr double kPullCapBodies = 2048;
constexpr int64_t kSteps = 10;
// Positions, max-abs relative to the cluster's extent (max|ref|). Not tighter: the best-known
// kernel forms r^2 as |x_j|^2 - 2 x_i.x_j + |x_i|^2 and a_i as sum m r^-3 x_j - x_i sum m r^-3
// (cancellation, for speed) and ends up to 1.4e-6 of the extent off, where the seed is 2.4e-7.
constexpr double kRel = 1e-4;

enum Stream : uint64_t { pos_stream = 1, vel_stream = 2, mass_stream = 3, constant_stream = 4 };
// Buffer indices in Case::buffers.
enum Buf : int { pos_a = 0, vel_a = 1, pos_b = 2, vel_b = 3, mass_buf = 4 };

SizeSpec bodies(int64_t n, bool heldout = false) { return {std::to_string(n), heldout, {{"n", n}, {"steps", kSteps}}}; }

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "nbody";
    s.regime = "R2 compute-bound";
    s.category = "compute-bound";
    s.order = 40;
    s.bound = Bound::compute;
    s.model = "20 FLOP per pair, N^2 pairs per step, FP32";
    s.tolerance = "positions: max |err| <= 1e-4 * max|ref|; NaN or Inf anywhere fails";
    s.kernels = {{"nbody_step",
                  {sig::const_ptr("pos_in", ParamType::f32x4), sig::ptr("pos_out", ParamType::f32x4),
                   sig::const_ptr("vel_in", ParamType::f32x4),
                   sig::ptr("vel_out", ParamType::f32x4), sig::const_ptr("mass", ParamType::f32),
                   sig::value("n", ParamType::u32), sig::value("dt", ParamType::f32),
                   sig::value("eps", ParamType::f32), sig::value("G", ParamType::f32)},
                  1, Dim3{128, 1, 1}}};
    s.profiles["small"] = {bodies(128), bodies(256), bodies(512), bodies(384, true)};
    s.profiles["paper"] = {bodies(256), bodies(1024), bodies(2048), bodies(512, true)};
    s.profiles["large"] = {bodies(8192), bodies(16384), bodies(32768), bodies(12288, true)};
    return s;
}

// Fills float4 records with uniform xyz in [-half, half) and w = 0.
void fill_vec4(float* out, size_t n, uint64_t seed, uint64_t stream, double half) {
    parallel_for(n, [&](size_t begin, size_t end) {
        for (size_t i = begin; i < end; ++i) {
            for (size_t k = 0; k < 3; ++k)
                out[4 * i + k] = static_cast<float>(half * (2.0 * rng::uniform(seed, stream, 3 * i + k) - 1.0));
            out[4 * i + 3] = 0.0f;
        }
    });
}

// a_i = sum_j m_j d_ij / (|d_ij|^2 + eps2)^(3/2), without G. Each pair is evaluated once and
// applied to both bodies (Newton's third law), which halves the square roots and divisions that
// bound this loop. Row k is folded with row n-1-k so that every work item holds n-1 pairs and
// contiguous chunks balance; each chunk accumulates privately and merges under a lock.
void accelerations(const std::vector<double>& px, const std::vector<double>& py, const std::vector<double>& pz,
                   const std::vector<double>& m, double eps2, std::vector<double>& ax, std::vector<double>& ay,
                   std::vector<double>& az) {
    const size_t n = px.size();
    std::fill(ax.begin(), ax.end(), 0.0);
    std::fill(ay.begin(), ay.end(), 0.0);
    std::fill(az.begin(), az.end(), 0.0);
    std::mutex lock;
    const size_t folded = (n + 1) / 2;
    const size_t min_chunk = std::max<size_t>(1, (size_t{1} << 16) / std::max<size_t>(1, n));
    parallel_for(
        folded,
        [&](size_t begin, size_t end) {
            std::vector<double> lx(n, 0.0), ly(n, 0.0), lz(n, 0.0);
            auto row = [&](size_t i) {
                const double xi = px[i], yi = py[i], zi = pz[i], mi = m[i];
                double sx = 0, sy = 0, sz = 0;
                for (size_t j = i + 1; j < n; ++j) {
                    const double dx = px[j] - xi, dy = py[j] - yi, dz = pz[j] - zi;
                    const double r2 = dx * dx + dy * dy + dz * dz + eps2;
                    const double inv3 = 1.0 / (r2 * std::sqrt(r2));
                    const double wj = m[j] * inv3, wi = mi * inv3;
                    sx += wj * dx;
                    sy += wj * dy;
                    sz += wj * dz;
                    lx[j] -= wi * dx;
                    ly[j] -= wi * dy;
                    lz[j] -= wi * dz;
                }
                lx[i] += sx;
                ly[i] += sy;
                lz[i] += sz;
            };
            for (size_t k = begin; k < end; ++k) {
                row(k);
                if (n - 1 - k != k) row(n - 1 - k);
            }
            std::lock_guard guard(lock);
            for (size_t i = 0; i < n; ++i) {
                ax[i] += lx[i];
                ay[i] += ly[i];
                az[i] += lz[i];
            }
        },
        min_chunk);
}

class NbodyTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const auto n = static_cast<size_t>(size.param("n"));
        const auto steps = static_cast<size_t>(size.param("steps"));
        const bool outlier = trial == Trial::outlier;
        Case c;
        c.buffers.push_back(make_buffer<float>("pos_a", BufferRole::state, ElemType::f32, 4 * n));
        c.buffers.push_back(make_buffer<float>("vel_a", BufferRole::state, ElemType::f32, 4 * n));
        c.buffers.push_back(make_buffer<float>("pos_b", BufferRole::output, ElemType::f32, 4 * n));
        c.buffers.push_back(make_buffer<float>("vel_b", BufferRole::output, ElemType::f32, 4 * n));
        c.buffers.push_back(make_buffer<float>("mass", BufferRole::input, ElemType::f32, n));
        // Outlier: a cluster twice as wide with half the mass per body, and bodies 200 times
        // faster. Ten steps of the wider, lighter cluster move bodies too little under gravity
        // alone for a wrong dt to exceed the tolerance; with |v| up to 2 the drift v*dt alone
        // exposes it (10 steps * 2 * 3e-4 = 6e-3, twice the tolerance).
        fill_vec4(c.buffers[pos_a].as<float>(), n, seed, pos_stream, outlier ? 2.0 : 1.0);
        fill_vec4(c.buffers[vel_a].as<float>(), n, seed, vel_stream, outlier ? 2.0 : 0.01);
        rng::fill_uniform({c.buffers[mass_buf].as<float>(), n}, seed, mass_stream, outlier ? 0.25f : 0.5f,
                          outlier ? 0.75f : 1.5f);

        const double pull = std::min(1.0, kPullCapBodies / static_cast<double>(n));
        float dt = static_cast<float>(kNominalDt), eps = static_cast<float>(kNominalEps),
              g = static_cast<float>(kNominalG * pull);
        if (outlier) {
            dt = static_cast<float>(draw_outlier(rng::uniform(seed, constant_stream, 0), 5e-4, 1.5e-3, kNominalDt, 3e-4));
            eps = static_cast<float>(draw_outlier(rng::uniform(seed, constant_stream, 1), 0.03, 0.08, kNominalEps, 0.005));
            g = static_cast<float>(pull * draw_outlier(rng::uniform(seed, constant_stream, 2), 0.5, 2.0, kNominalG, 0.1));
        }

        for (size_t s = 0; s < steps; ++s) {
            const bool even = s % 2 == 0;
            const int pin = even ? pos_a : pos_b, pout = even ? pos_b : pos_a;
            const int vin = even ? vel_a : vel_b, vout = even ? vel_b : vel_a;
            c.launches.push_back({"nbody_step",
                                  {ArgRef::buf(pin), ArgRef::buf(pout), ArgRef::buf(vin), ArgRef::buf(vout),
                                   ArgRef::buf(mass_buf), ArgRef::u(static_cast<uint32_t>(n)), ArgRef::f(dt),
                                   ArgRef::f(eps), ArgRef::f(g)},
                                  Dim3{n, 1, 1}});
        }
        c.results = {steps % 2 == 1 ? pos_b : pos_a};
        c.constants = {{"dt", static_cast<double>(dt)}, {"eps", static_cast<double>(eps)}, {"G", static_cast<double>(g)}};
        const double nd = static_cast<double>(n);
        c.work = 20.0 * nd * nd * static_cast<double>(steps);
        // pos and vel in (16 B each), pos and vel out (16 B each), mass (4 B).
        c.working_set_bytes = 68.0 * nd;
        return c;
    }

    Reference reference(const SizeSpec& size, const Case& c) const override {
        const auto n = static_cast<size_t>(size.param("n"));
        const auto steps = static_cast<size_t>(size.param("steps"));
        const double dt = c.constants.at("dt"), eps2 = c.constants.at("eps") * c.constants.at("eps"),
                     g = c.constants.at("G");
        const float* pos0 = c.buffers[pos_a].as<float>();
        const float* vel0 = c.buffers[vel_a].as<float>();
        const float* mass0 = c.buffers[mass_buf].as<float>();
        // Structure of arrays in double, positions and velocities kept in double across steps.
        std::vector<double> px(n), py(n), pz(n), vx(n), vy(n), vz(n), m(mass0, mass0 + n);
        for (size_t i = 0; i < n; ++i) {
            px[i] = pos0[4 * i], py[i] = pos0[4 * i + 1], pz[i] = pos0[4 * i + 2];
            vx[i] = vel0[4 * i], vy[i] = vel0[4 * i + 1], vz[i] = vel0[4 * i + 2];
        }
        std::vector<double> ax(n), ay(n), az(n);
        for (size_t s = 0; s < steps; ++s) {
            accelerations(px, py, pz, m, eps2, ax, ay, az);
            for (size_t i = 0; i < n; ++i) {
                vx[i] += g * ax[i] * dt;
                vy[i] += g * ay[i] * dt;
                vz[i] += g * az[i] * dt;
                px[i] += vx[i] * dt;
                py[i] += vy[i] * dt;
                pz[i] += vz[i] * dt;
            }
        }
        std::vector<float> out(4 * n);
        for (size_t i = 0; i < n; ++i) {
            out[4 * i] = static_cast<float>(px[i]);
            out[4 * i + 1] = static_cast<float>(py[i]);
            out[4 * i + 2] = static_cast<float>(pz[i]);
            out[4 * i + 3] = pos0[4 * i + 3];  // w is carried through unchanged
        }
        return Reference{{to_bytes(out)}};
    }

    CheckResult check(const SizeSpec&, const Case&, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        if (outputs.size() != ref.results.size()) {
            CheckResult r;
            r.kind = "size";
            r.message = "the run returned no output for the positions";
            return r;
        }
        return check_max_abs(as_floats(outputs[0]), as_floats(ref.results[0]), Tolerance{0, kRel, 0},
                             vec4_index("body"));
    }

private:
    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_nbody_task() { return std::make_unique<NbodyTask>(); }

}  // namespace kevo
