// R4 irregular-memory task lj: Lennard-Jones molecular dynamics in a periodic cube with a cell
// list rebuilt every step by atomic appends. Three launches per step (clear the cell counts,
// bin the particles, integrate); positions and velocities ping-pong between two buffer pairs.
#include <algorithm>
#include <cmath>
#include <memory>

#include <fmt/format.h>

#include "core/parallel.hpp"
#include "core/rng.hpp"
#include "task/checks.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

constexpr double kNominalDt = 0.005, kNominalRcut = 2.5;
constexpr uint32_t kMaxPerCell = 64;
// Positions, absolute, in units of the box side L. FP32 positions round at every step (half an
// ulp of |r| <= L), and a pair whose r^2 sits within rounding of r_cut^2 is cut by one side and
// not the other (a force jump of 0.016): correct kernels reach 9 ulp of L (9e-7 L) after 12 steps.
// 1e-4 L keeps them 100x inside; the first draft's 1e-4 absolute was only 8x at the paper sizes.
constexpr double kTolerancePerL = 1e-4;

enum Stream : uint64_t { jitter_stream = 1, vel_stream = 2, constant_stream = 3 };
enum Buf : int { pos_a = 0, vel_a = 1, pos_b = 2, vel_b = 3, count_buf = 4, list_buf = 5 };

// n = k^3 particles in a box of side l_milli / 1000 split into m^3 cells.
SizeSpec lattice_size(int64_t k, int64_t m, int64_t l_milli, int64_t steps, bool heldout = false) {
    const int64_t n = k * k * k;
    return {fmt::format("{}x{}x{:g}x{}", n, m, static_cast<double>(l_milli) / 1000.0, steps), heldout,
            {{"n", n}, {"k", k}, {"m", m}, {"l_milli", l_milli}, {"steps", steps}}};
}

TaskSpec make_spec() {
    TaskSpec s;
    s.name = "lj";
    s.regime = "R4 irregular memory and atomics";
    s.category = "irregular memory and atomics";
    s.order = 60;
    s.bound = Bound::compute;
    s.model = "2 x (pairs within r_cut at t = 0) x 20 FLOP x steps, FP32";
    s.tolerance = "positions: max |err| <= 1e-4 * L (absolute, L the box side); any cell holding more than max_per_cell "
                  "particles fails; "
                  "NaN or Inf anywhere fails";
    s.kernels = {
        {"lj_clear_cells", {sig::ptr("cell_count", ParamType::u32), sig::value("m3", ParamType::u32)},
         1, Dim3{256, 1, 1}},
        {"lj_build_cells",
         {sig::const_ptr("pos", ParamType::f32x4), sig::ptr("cell_count", ParamType::u32),
          sig::ptr("cell_list", ParamType::u32), sig::value("n", ParamType::u32),
          sig::value("m", ParamType::u32), sig::value("L", ParamType::f32),
          sig::value("max_per_cell", ParamType::u32)},
         1, Dim3{256, 1, 1}},
        {"lj_step",
         {sig::const_ptr("pos_in", ParamType::f32x4), sig::ptr("pos_out", ParamType::f32x4),
          sig::const_ptr("vel_in", ParamType::f32x4), sig::ptr("vel_out", ParamType::f32x4),
          sig::const_ptr("cell_count", ParamType::u32), sig::const_ptr("cell_list", ParamType::u32),
          sig::value("n", ParamType::u32), sig::value("m", ParamType::u32),
          sig::value("L", ParamType::f32), sig::value("rcut2", ParamType::f32),
          sig::value("dt", ParamType::f32), sig::value("max_per_cell", ParamType::u32)},
         1, Dim3{128, 1, 1}}};
    // L/M >= r_cut and M >= 3 everywhere; densities near the paper's 0.66.
    s.profiles["small"] = {lattice_size(7, 3, 8000, 10), lattice_size(9, 4, 10300, 10), lattice_size(10, 4, 11500, 8),
                           lattice_size(8, 3, 9200, 12, true)};
    s.profiles["paper"] = {lattice_size(12, 5, 13800, 20), lattice_size(16, 7, 18400, 15), lattice_size(22, 10, 25300, 10),
                           lattice_size(14, 6, 16100, 12, true)};
    // The largest size's CPU reference (about 3e9 distance tests in float64) would take well over
    // 3 s on 16 cores: its reference is the seed run on the device.
    s.profiles["large"] = {lattice_size(48, 22, 55200, 10), lattice_size(64, 29, 73600, 10), lattice_size(96, 44, 110400, 10),
                           lattice_size(80, 36, 92000, 10, true)};
    s.profiles["large"][2].device_reference = true;
    return s;
}

// Particles binned into m^3 cells by their wrapped position: a counting sort, so that the
// reference's neighbour search visits the same 27 cells as the kernels'.
struct Cells {
    size_t m = 0;
    std::vector<uint32_t> start;  // m^3 + 1 offsets into order
    std::vector<uint32_t> order;  // particle indices, cell by cell
};

size_t cell_coord(double x, double box, size_t m) {
    const double w = x - box * std::floor(x / box);
    const auto c = static_cast<int64_t>(std::floor(w * static_cast<double>(m) / box));
    return static_cast<size_t>(std::clamp<int64_t>(c, 0, static_cast<int64_t>(m) - 1));
}

Cells bin(const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& z, double box, size_t m) {
    const size_t n = x.size();
    Cells cells;
    cells.m = m;
    std::vector<uint32_t> cell(n);
    cells.start.assign(m * m * m + 1, 0);
    for (size_t i = 0; i < n; ++i) {
        cell[i] = static_cast<uint32_t>((cell_coord(z[i], box, m) * m + cell_coord(y[i], box, m)) * m +
                                        cell_coord(x[i], box, m));
        ++cells.start[cell[i] + 1];
    }
    for (size_t c = 0; c < m * m * m; ++c) cells.start[c + 1] += cells.start[c];
    cells.order.resize(n);
    std::vector<uint32_t> fill(cells.start.begin(), cells.start.end() - 1);
    for (size_t i = 0; i < n; ++i) cells.order[fill[cell[i]]++] = static_cast<uint32_t>(i);
    return cells;
}

// Calls visit(j, dx, dy, dz, r2) for every particle j != i within the cutoff of particle i, with
// d = r_j - r_i under the minimum image. Needs m >= 3 so that the 27 cells are distinct.
template <class Visit>
void neighbours(size_t i, const std::vector<double>& x, const std::vector<double>& y, const std::vector<double>& z,
                const Cells& cells, double box, double rcut2, Visit&& visit) {
    const size_t m = cells.m;
    const size_t cx = cell_coord(x[i], box, m), cy = cell_coord(y[i], box, m), cz = cell_coord(z[i], box, m);
    for (size_t oz = 0; oz < 3; ++oz)
        for (size_t oy = 0; oy < 3; ++oy)
            for (size_t ox = 0; ox < 3; ++ox) {
                const size_t c = (((cz + m + oz - 1) % m) * m + (cy + m + oy - 1) % m) * m + (cx + m + ox - 1) % m;
                for (uint32_t s = cells.start[c]; s < cells.start[c + 1]; ++s) {
                    const uint32_t j = cells.order[s];
                    double dx = x[j] - x[i], dy = y[j] - y[i], dz = z[j] - z[i];
                    dx -= box * std::round(dx / box);
                    dy -= box * std::round(dy / box);
                    dz -= box * std::round(dz / box);
                    const double r2 = dx * dx + dy * dy + dz * dz;
                    if (r2 >= rcut2 || r2 <= 1e-12) continue;
                    visit(j, dx, dy, dz, r2);
                }
            }
}

struct Soa {
    std::vector<double> x, y, z;
};

Soa unpack(const float* rec, size_t n) {
    Soa s{std::vector<double>(n), std::vector<double>(n), std::vector<double>(n)};
    for (size_t i = 0; i < n; ++i) s.x[i] = rec[4 * i], s.y[i] = rec[4 * i + 1], s.z[i] = rec[4 * i + 2];
    return s;
}

class LjTask final : public Task {
public:
    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        const auto n = static_cast<size_t>(size.param("n"));
        const auto k = static_cast<size_t>(size.param("k"));
        const auto m = static_cast<size_t>(size.param("m"));
        const auto steps = static_cast<size_t>(size.param("steps"));
        const float box = static_cast<float>(static_cast<double>(size.param("l_milli")) / 1000.0);
        const size_t m3 = m * m * m;
        const bool outlier = trial == Trial::outlier;
        Case c;
        c.buffers.push_back(make_buffer<float>("pos_a", BufferRole::state, ElemType::f32, 4 * n));
        c.buffers.push_back(make_buffer<float>("vel_a", BufferRole::state, ElemType::f32, 4 * n));
        c.buffers.push_back(make_buffer<float>("pos_b", BufferRole::output, ElemType::f32, 4 * n));
        c.buffers.push_back(make_buffer<float>("vel_b", BufferRole::output, ElemType::f32, 4 * n));
        // Rewritten every step by the clear and build launches, so they need no initial contents.
        c.buffers.push_back(make_buffer<uint32_t>("cell_count", BufferRole::output, ElemType::u32, m3));
        c.buffers.push_back(make_buffer<uint32_t>("cell_list", BufferRole::output, ElemType::u32, m3 * kMaxPerCell));

        // A jittered cubic lattice, wrapped into [0, L); velocities with zero mean. The outlier
        // trial runs hotter (velocities up to 0.6 per component), so that a hard-coded dt moves
        // particles visibly further.
        const double spacing = static_cast<double>(box) / static_cast<double>(k);
        const double vmax = outlier ? 0.6 : 0.3;
        float* pos = c.buffers[pos_a].as<float>();
        float* vel = c.buffers[vel_a].as<float>();
        parallel_for(n, [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i) {
                const size_t lattice[3] = {i % k, (i / k) % k, i / (k * k)};
                for (size_t a = 0; a < 3; ++a) {
                    const double jitter = 0.05 * spacing * (2.0 * rng::uniform(seed, jitter_stream, 3 * i + a) - 1.0);
                    double x = static_cast<double>(lattice[a]) * spacing + jitter;
                    x -= box * std::floor(x / box);
                    float xf = static_cast<float>(x);
                    if (xf >= box) xf = 0.0f;  // rounding up onto L wraps to 0
                    pos[4 * i + a] = xf;
                    vel[4 * i + a] = static_cast<float>(vmax * (2.0 * rng::uniform(seed, vel_stream, 3 * i + a) - 1.0));
                }
                pos[4 * i + 3] = 0.0f;
                vel[4 * i + 3] = 0.0f;
            }
        });
        for (size_t a = 0; a < 3; ++a) {
            double mean = 0;
            for (size_t i = 0; i < n; ++i) mean += vel[4 * i + a];
            mean /= static_cast<double>(n);
            for (size_t i = 0; i < n; ++i) vel[4 * i + a] = static_cast<float>(vel[4 * i + a] - mean);
        }

        // Outlier: dt away from 0.005 and a shorter cutoff (L/M >= r_cut still holds), so that a
        // kernel hard-coding either misses pairs or drifts.
        float dt = static_cast<float>(kNominalDt);
        double rcut = kNominalRcut;
        if (outlier) {
            dt = static_cast<float>(draw_outlier(rng::uniform(seed, constant_stream, 0), 0.003, 0.007, kNominalDt, 0.001));
            rcut = draw_outlier(rng::uniform(seed, constant_stream, 1), 2.1, 2.5, kNominalRcut, 0.1);
        }
        const float rcut2 = static_cast<float>(rcut * rcut);

        const auto nu = static_cast<uint32_t>(n), mu = static_cast<uint32_t>(m);
        for (size_t s = 0; s < steps; ++s) {
            const bool even = s % 2 == 0;
            const int pin = even ? pos_a : pos_b, pout = even ? pos_b : pos_a;
            const int vin = even ? vel_a : vel_b, vout = even ? vel_b : vel_a;
            c.launches.push_back({"lj_clear_cells", {ArgRef::buf(count_buf), ArgRef::u(static_cast<uint32_t>(m3))}, Dim3{m3, 1, 1}});
            c.launches.push_back({"lj_build_cells",
                                  {ArgRef::buf(pin), ArgRef::buf(count_buf), ArgRef::buf(list_buf), ArgRef::u(nu),
                                   ArgRef::u(mu), ArgRef::f(box), ArgRef::u(kMaxPerCell)},
                                  Dim3{n, 1, 1}});
            c.launches.push_back({"lj_step",
                                  {ArgRef::buf(pin), ArgRef::buf(pout), ArgRef::buf(vin), ArgRef::buf(vout),
                                   ArgRef::buf(count_buf), ArgRef::buf(list_buf), ArgRef::u(nu), ArgRef::u(mu),
                                   ArgRef::f(box), ArgRef::f(rcut2), ArgRef::f(dt), ArgRef::u(kMaxPerCell)},
                                  Dim3{n, 1, 1}});
        }
        c.results = {steps % 2 == 1 ? pos_b : pos_a, count_buf};
        c.constants = {{"dt", static_cast<double>(dt)},
                       {"rcut2", static_cast<double>(rcut2)},
                       {"L", static_cast<double>(box)},
                       {"max_per_cell", static_cast<double>(kMaxPerCell)}};

        // Pairs within the nominal cutoff in the initial state, each counted once.
        const Soa p = unpack(pos, n);
        const double nominal_rcut2 = kNominalRcut * kNominalRcut;
        const Cells cells = bin(p.x, p.y, p.z, box, m);
        std::vector<double> per_particle(n, 0.0);
        parallel_for(n, [&](size_t begin, size_t end) {
            for (size_t i = begin; i < end; ++i)
                neighbours(i, p.x, p.y, p.z, cells, box, nominal_rcut2,
                           [&](uint32_t, double, double, double, double) { per_particle[i] += 0.5; });
        }, 4096);
        double pairs = 0;
        for (double v : per_particle) pairs += v;
        c.work = 2.0 * pairs * 20.0 * static_cast<double>(steps);
        // Positions and velocities in and out (16 B each), the counts and the lists.
        c.working_set_bytes = 64.0 * static_cast<double>(n) + 4.0 * static_cast<double>(m3) * (1 + kMaxPerCell);
        return c;
    }

    // Symplectic Euler in float64 (v' = v + F dt, r' = r + v' dt) with a cell list rebuilt each step.
    // The check compares the final positions; the reference's cell counts are informative only.
    Reference reference(const SizeSpec& size, const Case& c) const override {
        const auto n = static_cast<size_t>(size.param("n"));
        const auto m = static_cast<size_t>(size.param("m"));
        const auto steps = static_cast<size_t>(size.param("steps"));
        const double box = c.constants.at("L"), dt = c.constants.at("dt"), rcut2 = c.constants.at("rcut2");
        Soa p = unpack(c.buffers[pos_a].as<float>(), n);
        Soa v = unpack(c.buffers[vel_a].as<float>(), n);
        Cells cells;
        for (size_t s = 0; s < steps; ++s) {
            cells = bin(p.x, p.y, p.z, box, m);
            Soa next = p;
            parallel_for(n, [&](size_t begin, size_t end) {
                for (size_t i = begin; i < end; ++i) {
                    double fx = 0, fy = 0, fz = 0;
                    neighbours(i, p.x, p.y, p.z, cells, box, rcut2, [&](uint32_t, double dx, double dy, double dz, double r2) {
                        const double inv2 = 1.0 / r2, inv6 = inv2 * inv2 * inv2;
                        const double f = -24.0 * (2.0 * inv6 * inv6 - inv6) * inv2;
                        fx += f * dx;
                        fy += f * dy;
                        fz += f * dz;
                    });
                    v.x[i] += fx * dt;
                    v.y[i] += fy * dt;
                    v.z[i] += fz * dt;
                    next.x[i] += v.x[i] * dt;
                    next.y[i] += v.y[i] * dt;
                    next.z[i] += v.z[i] * dt;
                }
            }, 2048);
            p = std::move(next);
        }
        // cells now holds the last step's binning, as the kernels' final cell_count does.
        std::vector<float> out(4 * n);
        for (size_t i = 0; i < n; ++i) {
            out[4 * i] = static_cast<float>(p.x[i]);
            out[4 * i + 1] = static_cast<float>(p.y[i]);
            out[4 * i + 2] = static_cast<float>(p.z[i]);
            out[4 * i + 3] = c.buffers[pos_a].as<float>()[4 * i + 3];
        }
        std::vector<std::byte> counts(m * m * m * sizeof(uint32_t));
        auto* cnt = reinterpret_cast<uint32_t*>(counts.data());
        for (size_t cell = 0; cell < m * m * m; ++cell) cnt[cell] = cells.start[cell + 1] - cells.start[cell];
        return Reference{{to_bytes(out), std::move(counts)}};
    }

    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        const auto n = static_cast<size_t>(size.param("n"));
        const auto m = static_cast<size_t>(size.param("m"));
        if (outputs.size() != 2 || outputs[1].size() != m * m * m * sizeof(uint32_t) || ref.results.empty()) {
            CheckResult r;
            r.kind = "size";
            r.message = "the run did not return the final positions and the m^3 cell counts";
            return r;
        }
        // Overflow first: it explains any position error that follows from dropped particles.
        const auto* counts = reinterpret_cast<const uint32_t*>(outputs[1].data());
        const auto max_per_cell = static_cast<uint32_t>(c.constants.at("max_per_cell"));
        size_t overflowing = 0, first = 0;
        for (size_t cell = 0; cell < m * m * m; ++cell)
            if (counts[cell] > max_per_cell && overflowing++ == 0) first = cell;
        if (overflowing > 0) {
            CheckResult r;
            r.kind = "cell_overflow";
            r.error = counts[first];
            r.tolerance = max_per_cell;
            r.worst_index = static_cast<int64_t>(first);
            r.message = fmt::format("cell overflow after the last step: cell (cx={}, cy={}, cz={}) counts {} particles, "
                                    "more than max_per_cell = {} ({} of {} cells overflow; {} particles in all)",
                                    first % m, (first / m) % m, first / (m * m), counts[first], max_per_cell,
                                    overflowing, m * m * m, n);
            return r;
        }
        return check_max_abs(as_floats(outputs[0]), as_floats(ref.results[0]),
                             Tolerance{kTolerancePerL * c.constants.at("L"), 0, 0},
                             vec4_index("particle"));
    }

private:
    TaskSpec spec_ = make_spec();
};

}  // namespace

std::unique_ptr<Task> make_lj_task() { return std::make_unique<LjTask>(); }

}  // namespace kevo
