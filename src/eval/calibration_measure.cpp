// The calibration measurement: a copy/triad sweep over working sets from far below to at least 4x
// the last-level cache, the DRAM plateau and the FP32 FMA rate each re-measured in passes until the
// best pass is confirmed by another (a warning note when it never is). See calibration.hpp.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/settle.hpp"
#include "core/stats.hpp"
#include "eval/builtin_kernels.hpp"
#include "eval/calibration.hpp"
#include "eval/ceiling_ratchet.hpp"

namespace kevo {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;
constexpr uint64_t kFloat4 = 16;
// The plateau is measured at working sets of at least this many times the last-level cache.
constexpr double kPlateauCacheMultiple = 4;

// The FMA kernel's shape (compile-time, so the chain unrolls): 2 * kChains * width * kFmaIters
// FLOP per thread.
constexpr int kFmaIters = 4096;
constexpr int kFmaUnroll = 64;
constexpr int kChains = 8;

std::string human_bytes(double bytes) {
    if (bytes >= kGiB) return fmt::format("{:.1f} GiB", bytes / kGiB);
    if (bytes >= kMiB) return fmt::format("{:.1f} MiB", bytes / kMiB);
    return fmt::format("{:.1f} KiB", bytes / kKiB);
}

// Device resources are released on every path, error returns included.
class DeviceResources {
public:
    explicit DeviceResources(Device& device) : device_(device) {}
    DeviceResources(const DeviceResources&) = delete;
    DeviceResources& operator=(const DeviceResources&) = delete;
    ~DeviceResources() {
        for (BufferHandle b : buffers_) device_.release(b);
        for (uint32_t m : modules_) device_.release_module(m);
    }

    Expected<BufferHandle> allocate(uint64_t bytes) {
        auto b = device_.allocate(bytes);
        if (!b) return make_error(fmt::format("allocating {}: {}", human_bytes(double(bytes)), b.error().message));
        buffers_.push_back(*b);
        return *b;
    }
    void adopt_module(uint32_t module) { modules_.push_back(module); }

private:
    Device& device_;
    std::vector<BufferHandle> buffers_;
    std::vector<uint32_t> modules_;
};

// How hard to measure: the sweep's extent, the repetitions of each point and the passes.
struct Plan {
    std::vector<uint64_t> working_sets;
    uint64_t plateau_from = 0;     // working sets from here up form the DRAM plateau
    int warmups = 2;
    int repeats = 7;
    double target_seconds = 2e-3;  // each run_timed lasts at least this long, when launches allow
    int max_launches = 256;        // back-to-back launches of one run_timed
    int spin_up_ms = 0;            // busy time before the first measurement (GPU clocks)
    SettleRules passes;            // for the plateau and the FMA rate
};

uint64_t round_up(uint64_t v, uint64_t to) { return (v + to - 1) / to * to; }

// The sweep runs from 256 KiB up past the last-level cache to at least kPlateauCacheMultiple times it
// (the plateau), memory permitting. A CPU's last-level cache may be large (a shared L3 of hundreds of
// MiB), so the extent follows the cache, not a fixed size.
//
// A device's first use (the quick plan) and `kevo calibrate` (the full plan) must give the same
// ceilings, so both measure the plateau at the same working sets: on the H200 the bandwidth still
// rose by 5% from 4x the cache (240 MiB: 4121 GB/s) to the full plan's points up to 8 GiB (4312
// GB/s). Quick thins only the cache-resident points and, on a CPU, shortens the runs; on a GPU,
// where the full plan takes a few seconds, quick is the full plan.
Plan make_plan(const DeviceInfo& info, bool quick) {
    if (!info.is_cpu) quick = false;
    Plan plan;
    const uint64_t llc = info.l2_bytes;
    const uint64_t plateau_from = std::max<uint64_t>(round_up(uint64_t(kPlateauCacheMultiple * double(llc)), kMiB), 64 * kMiB);
    uint64_t top = std::max<uint64_t>(info.is_cpu ? 2 * plateau_from : 8 * kGiB, plateau_from);
    if (info.global_mem_bytes > 0) top = std::min(top, info.global_mem_bytes / 4);
    // Copy uses two arrays of half the working set each; three such buffers are allocated.
    if (info.max_alloc_bytes > 0) top = std::min(top, 2 * info.max_alloc_bytes);
    top = std::max(top / kMiB * kMiB, 256 * kKiB);
    plan.plateau_from = std::min(plateau_from, top);

    const uint64_t step = quick ? 4 : 2;
    for (uint64_t ws = 256 * kKiB; ws < plan.plateau_from; ws *= step) plan.working_sets.push_back(ws);
    for (uint64_t ws = plan.plateau_from; ws <= top; ws *= 2) plan.working_sets.push_back(ws);
    if (plan.working_sets.back() != top) plan.working_sets.push_back(top);

    // A CPU's timings are noisier (other processes share its cores), so its runs are longer.
    if (info.is_cpu) {
        plan.target_seconds = quick ? 10e-3 : 40e-3;
        plan.max_launches = 64;
    } else {
        plan.target_seconds = quick ? 2e-3 : 5e-3;
        plan.max_launches = 256;
        plan.spin_up_ms = quick ? 150 : 300;
    }
    plan.warmups = quick ? 1 : 2;
    plan.repeats = quick ? 5 : 9;
    plan.passes = {quick ? 4 : 6, kCalibrationAgreement};
    return plan;
}

unsigned pick_block(const DeviceInfo& info, const KernelAttributes& attrs, unsigned wanted) {
    unsigned block = wanted;
    if (info.max_threads_per_block > 0) block = std::min(block, info.max_threads_per_block);
    if (info.max_block[0] > 0) block = static_cast<unsigned>(std::min<uint64_t>(block, info.max_block[0]));
    if (attrs.max_threads > 0) block = std::min(block, attrs.max_threads);
    return std::max(block, 1u);
}

uint64_t cap_grid(const DeviceInfo& info, uint64_t blocks) {
    if (info.max_grid[0] > 0) blocks = std::min(blocks, info.max_grid[0]);
    return std::max<uint64_t>(blocks, 1);
}

// The grid shapes a streaming kernel is timed with; the faster counts. One element per thread is
// what a plain copy does: on an H200 it matches the driver's device-to-device copy, which a grid of
// compute_units * 8 resident blocks striding over the array misses by some 7%; other GPUs may
// prefer the resident grid, so a GPU tries both. A CPU gets one element per work-item only: PoCL
// and its kin run the items of a work-group one after another, so a longer per-item loop would
// stride across the whole array and defeat the caches and prefetchers.
std::vector<Dim3> stream_grids(const DeviceInfo& info, uint64_t elements, unsigned block) {
    const uint64_t needed = (elements + block - 1) / block;
    std::vector<Dim3> grids = {{cap_grid(info, needed), 1, 1}};
    if (info.is_cpu) return grids;
    const uint64_t resident = std::max<uint64_t>(uint64_t(std::max(info.compute_units, 1)) * 8 * 256 / block, 1);
    if (resident < needed) grids.push_back({cap_grid(info, resident), 1, 1});
    return grids;
}

// Median seconds of one launch: warm-ups, then a probe that decides how many launches go into each
// timed run so that short kernels are not measured as launch overhead alone.
Expected<double> time_launch(Device& device, const Launch& launch, const Plan& plan) {
    const Launch one[] = {launch};
    for (int i = 0; i < plan.warmups; ++i)
        if (auto r = device.run(one); !r) return r.error();
    auto probe = device.run_timed(one);
    if (!probe) return probe.error();
    int count = 1;
    if (*probe > 0 && *probe < plan.target_seconds)
        count = static_cast<int>(std::min<double>(plan.max_launches, std::ceil(plan.target_seconds / *probe)));
    const std::vector<Launch> batch(static_cast<size_t>(count), launch);
    if (count > 1)
        if (auto r = device.run(batch); !r) return r.error();
    std::vector<double> samples;
    for (int i = 0; i < plan.repeats; ++i) {
        auto t = device.run_timed(batch);
        if (!t) return t.error();
        if (!(*t > 0) || !std::isfinite(*t)) return make_error(fmt::format("the device timer returned {} s", *t));
        samples.push_back(*t / count);
    }
    return summarize(std::move(samples)).median;
}

void say(const CalibrationOptions& options, const std::string& line) {
    if (options.progress) options.progress(line);
}

struct Kernels {
    uint32_t fill = 0, copy = 0, triad = 0, fma = 0;
    KernelAttributes copy_attrs, triad_attrs, fma_attrs, fill_attrs;
};

Expected<Kernels> build_kernels(Device& device, DeviceResources& resources, int fma_width) {
    if (builtin_kernel(builtin_file(device, "calibrate")).empty())
        return make_error("the calibration kernels are not embedded in this build");
    // FMA_WIDTH: the vector width of calibrate.cl's FMA chains; calibrate.cu does not read it.
    const std::vector<std::string> defines = {fmt::format("FMA_ITERS={}", kFmaIters),
                                              fmt::format("FMA_UNROLL={}", kFmaUnroll),
                                              fmt::format("FMA_WIDTH={}", fma_width)};
    auto outcome = compile_builtin(device, "calibrate", defines);
    if (!outcome) return make_error("compiling the calibration kernels: " + outcome.error().message);
    if (!outcome->module) return make_error("the calibration kernels did not compile:\n" + outcome->log);
    resources.adopt_module(*outcome->module);

    Kernels k;
    const std::pair<const char*, uint32_t*> names[] = {
        {"calib_fill", &k.fill}, {"calib_copy", &k.copy}, {"calib_triad", &k.triad}, {"calib_fma", &k.fma}};
    for (auto [name, slot] : names) {
        auto handle = device.kernel(*outcome->module, name);
        if (!handle) return make_error(fmt::format("calibration kernel {}: {}", name, handle.error().message));
        *slot = *handle;
    }
    const std::pair<uint32_t, KernelAttributes*> attrs[] = {
        {k.fill, &k.fill_attrs}, {k.copy, &k.copy_attrs}, {k.triad, &k.triad_attrs}, {k.fma, &k.fma_attrs}};
    for (auto [kernel, slot] : attrs) {
        auto a = device.attributes(kernel);
        if (!a) return make_error("calibration kernel attributes: " + a.error().message);
        *slot = *a;
    }
    return k;
}

// The DRAM plateau: the mean of the best of copy and triad over the points from `from` up.
double plateau(const std::vector<BandwidthPoint>& curve, double from) {
    double sum = 0;
    int count = 0;
    for (const auto& p : curve)
        if (p.working_set_bytes >= from) sum += std::max(p.copy_gbs, p.triad_gbs), ++count;
    return count ? sum / count : 0;
}

// Three streaming arrays sized for the largest working set, initialised, with the device awake.
struct StreamBuffers {
    BufferHandle arrays[3];
    unsigned copy_block = 0, triad_block = 0;
};

Expected<StreamBuffers> prepare_stream_buffers(Device& device, DeviceResources& resources, const Kernels& k,
                                               const Plan& plan) {
    const DeviceInfo& info = device.info();
    const uint64_t array_bytes = plan.working_sets.back() / 2;
    StreamBuffers s;
    for (auto& b : s.arrays) {
        auto handle = resources.allocate(array_bytes);
        if (!handle) return handle.error();
        b = *handle;
    }
    // Initialised data: garbage could hold denormals, which are slow on a CPU; the fill also takes
    // the first-touch page faults out of the measurement.
    const uint64_t n = array_bytes / kFloat4;
    const unsigned fill_block = pick_block(info, k.fill_attrs, info.is_cpu ? 1024 : 256);
    std::vector<Launch> fills;
    for (auto b : s.arrays)
        fills.push_back({k.fill, stream_grids(info, n, fill_block).back(), {fill_block, 1, 1},
                         {KernelArg::buf(b), KernelArg::f(1.0f), KernelArg::u(static_cast<uint32_t>(n))}});
    if (auto r = device.run(fills); !r) return make_error("filling the calibration buffers: " + r.error().message);

    s.copy_block = pick_block(info, k.copy_attrs, info.is_cpu ? 1024 : 256);
    s.triad_block = pick_block(info, k.triad_attrs, info.is_cpu ? 1024 : 256);
    if (!info.is_cpu) {
        // An idle GPU sits at low clocks and takes a moment to raise them; without this the first,
        // smallest points would be measured on a half-awake device.
        const Launch spin{k.copy, stream_grids(info, n, s.copy_block).front(), {s.copy_block, 1, 1},
                          {KernelArg::buf(s.arrays[0]), KernelArg::buf(s.arrays[1]), KernelArg::u(static_cast<uint32_t>(n))}};
        const std::vector<Launch> batch(8, spin);
        const auto start = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(plan.spin_up_ms))
            if (auto r = device.run(batch); !r) return make_error("warming the device up: " + r.error().message);
    }
    return s;
}

// Copy and triad at one working set, each timed at its fastest grid shape.
Expected<BandwidthPoint> measure_point(Device& device, const Kernels& k, const StreamBuffers& s, const Plan& plan,
                                       uint64_t ws) {
    const DeviceInfo& info = device.info();
    auto best_time = [&](Launch launch, uint64_t n) -> Expected<double> {
        double best = 0;
        for (const Dim3& grid : stream_grids(info, n, launch.block.x)) {
            launch.grid = grid;
            auto t = time_launch(device, launch, plan);
            if (!t) return t.error();
            if (best == 0 || *t < best) best = *t;
        }
        return best;
    };
    // Copy reads one array and writes another; triad reads two and writes one.
    const uint64_t copy_n = std::max<uint64_t>(ws / (2 * kFloat4), 1);
    const uint64_t triad_n = std::max<uint64_t>(ws / (3 * kFloat4), 1);
    const Launch copy{k.copy, {}, {s.copy_block, 1, 1},
                      {KernelArg::buf(s.arrays[0]), KernelArg::buf(s.arrays[1]), KernelArg::u(static_cast<uint32_t>(copy_n))}};
    const Launch triad{k.triad, {}, {s.triad_block, 1, 1},
                       {KernelArg::buf(s.arrays[0]), KernelArg::buf(s.arrays[1]), KernelArg::buf(s.arrays[2]),
                        KernelArg::f(0.5f), KernelArg::u(static_cast<uint32_t>(triad_n))}};
    auto copy_s = best_time(copy, copy_n);
    if (!copy_s) return make_error(fmt::format("copy at {}: {}", human_bytes(double(ws)), copy_s.error().message));
    auto triad_s = best_time(triad, triad_n);
    if (!triad_s) return make_error(fmt::format("triad at {}: {}", human_bytes(double(ws)), triad_s.error().message));
    BandwidthPoint p;
    p.working_set_bytes = double(ws);
    p.copy_gbs = 2.0 * double(copy_n * kFloat4) / *copy_s * 1e-9;
    p.triad_gbs = 3.0 * double(triad_n * kFloat4) / *triad_s * 1e-9;
    return p;
}

Expected<std::vector<BandwidthPoint>> sweep(Device& device, const Kernels& k, const StreamBuffers& s, const Plan& plan,
                                            const CalibrationOptions& options) {
    std::vector<BandwidthPoint> curve;
    for (uint64_t ws : plan.working_sets) {
        auto p = measure_point(device, k, s, plan, ws);
        if (!p) return p.error();
        say(options, fmt::format("copy {}: {:.1f} GB/s", human_bytes(p->working_set_bytes), p->copy_gbs));
        say(options, fmt::format("triad {}: {:.1f} GB/s", human_bytes(p->working_set_bytes), p->triad_gbs));
        curve.push_back(*p);
    }
    return curve;
}

// The plateau in passes: the sweep is the first, later passes re-measure the plateau's points until
// the best pass is confirmed (core/settle.hpp); the curve keeps the best pass's plateau points.
Expected<Settled> settle_plateau(Device& device, const Kernels& k, const StreamBuffers& s, const Plan& plan,
                                 std::vector<BandwidthPoint>& curve, const CalibrationOptions& options) {
    bool first = true;
    std::vector<BandwidthPoint> best_curve;
    double best = 0;
    auto pass = [&]() -> Expected<double> {
        if (!first) {
            for (auto& p : curve) {
                if (p.working_set_bytes < double(plan.plateau_from)) continue;
                auto again = measure_point(device, k, s, plan, static_cast<uint64_t>(p.working_set_bytes));
                if (!again) return again.error();
                p = *again;
            }
        }
        first = false;
        const double value = plateau(curve, double(plan.plateau_from));
        say(options, fmt::format("DRAM plateau pass: {:.1f} GB/s", value));
        if (value > best) best = value, best_curve = curve;
        return value;
    };
    auto settled = settle(pass, plan.passes);
    if (settled) curve = best_curve;
    return settled;
}

// The FMA rate in passes until the best is confirmed.
Expected<Settled> settle_fma(Device& device, DeviceResources& resources, const Kernels& k, const Plan& plan, int width,
                             const CalibrationOptions& options) {
    const DeviceInfo& info = device.info();
    const uint64_t units = uint64_t(std::max(info.compute_units, 1));
    // A GPU needs many resident threads to hide the FMA latency; a CPU needs a few work-groups per
    // core, each lane of its vectors carrying its own chains.
    const unsigned block = pick_block(info, k.fma_attrs, info.is_cpu ? 64 : 256);
    const uint64_t threads = info.is_cpu ? units * 8 * block : units * 2048;
    const uint64_t blocks = cap_grid(info, (threads + block - 1) / block);
    auto out = resources.allocate(blocks * block * sizeof(float));
    if (!out) return out.error();
    const Launch fma{k.fma, {blocks, 1, 1}, {block, 1, 1}, {KernelArg::buf(*out), KernelArg::f(0.999f), KernelArg::f(0.001f)}};
    const double flop = 2.0 * kChains * width * double(kFmaIters) * double(blocks * block);
    auto pass = [&]() -> Expected<double> {
        auto seconds = time_launch(device, fma, plan);
        if (!seconds) return make_error("FMA chain: " + seconds.error().message);
        const double gflops = flop / *seconds * 1e-9;
        say(options, fmt::format("fp32 FMA pass: {:.1f} GFLOP/s", gflops));
        return gflops;
    };
    return settle(pass, plan.passes);
}

// Notes on what the figures may not mean: passes that never agreed, a plateau inside the cache.
std::vector<std::string> trust_notes(const Settled& bandwidth, const Settled& fma, const Plan& plan,
                                     const DeviceInfo& info) {
    std::vector<std::string> notes;
    auto passes_text = [](const Settled& s, const char* unit) {
        std::string t;
        for (double v : s.passes) t += fmt::format("{}{:.1f}", t.empty() ? "" : ", ", v);
        return fmt::format("{} {} (spread {:.0f}%)", t, unit, 100 * s.spread);
    };
    if (!bandwidth.agreed)
        notes.push_back(fmt::format("the DRAM bandwidth did not settle: {} passes gave {}; another process may be "
                                    "using the device or its memory", bandwidth.passes.size(),
                                    passes_text(bandwidth, "GB/s")));
    if (!fma.agreed)
        notes.push_back(fmt::format("the FP32 rate did not settle: {} passes gave {}", fma.passes.size(),
                                    passes_text(fma, "GFLOP/s")));
    if (double(plan.plateau_from) < kPlateauCacheMultiple * double(info.l2_bytes))
        notes.push_back(fmt::format("the largest working set that fits ({}) is below {}x the last-level cache ({}): "
                                    "the plateau may be partly cache", human_bytes(double(plan.working_sets.back())),
                                    kPlateauCacheMultiple, human_bytes(double(info.l2_bytes))));
    return notes;
}

// The vendor GEMM's rates go into the device model's record, and the bounded classes become the
// largest of measurement, datasheet and record (eval/ceiling_ratchet.hpp).
void record_tensor_rates(Calibration& c, const CalibrationOptions& options) {
    for (const auto& t : c.tensor) {
        if (t.source != CeilingSource::measured || !is_bounded_tensor_class(t.kind)) continue;
        auto raised = record_class_rate(c.device_name, {t.kind, t.gflops, t.how, c.measured_at}, c.datasheet);
        if (!raised) say(options, "warning: the fastest-rate record could not be written: " + raised.error().message);
    }
    bound_tensor_ceilings(c, load_rate_record(c.device_name));
}

}  // namespace

CalibrationPlanShape calibration_plan_shape(const DeviceInfo& info, bool quick) {
    const Plan plan = make_plan(info, quick);
    return {plan.working_sets, plan.plateau_from};
}

Expected<Calibration> measure_calibration(Device& device, const CalibrationOptions& options) {
    const DeviceInfo& info = device.info();
    const Plan plan = make_plan(info, options.quick);
    // Explicit vectors on a CPU (see calibrate.cl); 16 lanes fill AVX-512 and split cleanly
    // into narrower registers elsewhere.
    const int fma_width = info.is_cpu ? 16 : 1;

    DeviceResources resources(device);
    say(options, fmt::format("calibrating {} ({}): {} working sets from {} to {}, plateau from {}{}", info.name,
                             info.backend, plan.working_sets.size(), human_bytes(double(plan.working_sets.front())),
                             human_bytes(double(plan.working_sets.back())), human_bytes(double(plan.plateau_from)),
                             options.quick ? ", quick" : ""));
    auto kernels = build_kernels(device, resources, fma_width);
    if (!kernels) return kernels.error();
    auto buffers = prepare_stream_buffers(device, resources, *kernels, plan);
    if (!buffers) return make_error("calibration: " + buffers.error().message);
    auto curve = sweep(device, *kernels, *buffers, plan, options);
    if (!curve) return make_error("calibration: " + curve.error().message);
    auto bandwidth = settle_plateau(device, *kernels, *buffers, plan, *curve, options);
    if (!bandwidth) return make_error("calibration: " + bandwidth.error().message);
    auto fma = settle_fma(device, resources, *kernels, plan, fma_width, options);
    if (!fma) return make_error("calibration: " + fma.error().message);

    Calibration c;
    c.device_key = calibration_key(info);
    c.device_name = info.name;
    c.source = "measured";
    c.curve = std::move(*curve);
    c.bandwidth_gbs = bandwidth->value;
    c.bandwidth_passes = bandwidth->passes;
    c.fp32_gflops = fma->value;
    c.fp32_passes = fma->passes;
    c.plateau_from_bytes = double(plan.plateau_from);
    c.llc_bytes = info.l2_bytes;
    c.notes = trust_notes(*bandwidth, *fma, plan, info);
    c.stable = bandwidth->agreed && fma->agreed;
    c.datasheet = datasheet_for(info.name);
    if (info.is_cpu) c.datasheet.reset();
    c.tensor = measure_tensor_ceilings(device, c.datasheet, options);
    c.measured_at = utc_now_iso8601();
    record_tensor_rates(c, options);
    say(options, fmt::format("fp32 FMA: {:.1f} GFLOP/s", c.fp32_gflops));
    say(options, fmt::format("bandwidth (DRAM plateau): {:.1f} GB/s", c.bandwidth_gbs));
    for (const auto& note : c.notes) say(options, "warning: " + note);
    if (c.datasheet)
        say(options, fmt::format("datasheet {}: {:.0f} GB/s, {:.0f} GFLOP/s", c.datasheet->name,
                                 c.datasheet->bandwidth_gbs, c.datasheet->fp32_gflops));
    return c;
}

}  // namespace kevo
