// Device ceilings: the measurement (copy/triad sweep over working sets, FMA chain), the cache of
// results per device and driver, the JSON form and the datasheet fallback. See calibration.hpp.
#include "eval/calibration.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <vector>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/stats.hpp"
#include "eval/builtin_kernels.hpp"

namespace kevo {
namespace {

constexpr uint64_t kKiB = 1024;
constexpr uint64_t kMiB = 1024 * kKiB;
constexpr uint64_t kGiB = 1024 * kMiB;
constexpr uint64_t kFloat4 = 16;
constexpr int kJsonVersion = 1;

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

// Keeps letters, digits, '.', '-' and '_'; everything else (slashes, spaces, '+') becomes '_'.
// Idempotent, so a key read back from JSON maps to the same file.
std::string sanitise_for_file_name(const std::string& text) {
    std::string out;
    out.reserve(text.size());
    for (char c : text) {
        const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '.' || c == '-' || c == '_';
        out += keep ? c : '_';
    }
    // File names are limited to 255 bytes; a long key keeps its head and a hash of the whole.
    if (out.size() > 180) out = out.substr(0, 160) + "_" + hex64(hash64(text));
    if (out.empty() || out[0] == '.') out.insert(out.begin(), '_');
    return out;
}

std::filesystem::path cache_file(const std::string& key) {
    return cache_dir("calibration") / (sanitise_for_file_name(key) + ".json");
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

// How hard to measure: the sweep's extent and the repetitions of each point.
struct Plan {
    std::vector<uint64_t> working_sets;
    int warmups = 2;
    int repeats = 7;
    double target_seconds = 2e-3;  // each run_timed lasts at least this long, when launches allow
    int max_launches = 256;        // back-to-back launches of one run_timed
    int spin_up_ms = 0;            // busy time before the first measurement (GPU clocks)
};

uint64_t floor_pow2(uint64_t v) {
    uint64_t p = 1;
    while (p <= v / 2) p *= 2;
    return p;
}

Plan make_plan(const DeviceInfo& info, bool quick) {
    Plan plan;
    uint64_t top = info.is_cpu ? 512 * kMiB : 8 * kGiB;
    if (info.global_mem_bytes > 0) top = std::min(top, info.global_mem_bytes / 4);
    // Copy uses two arrays of half the working set each; three such buffers are allocated.
    if (info.max_alloc_bytes > 0) top = std::min(top, 2 * info.max_alloc_bytes);
    if (info.is_cpu && quick) top = std::min(top, 256 * kMiB);
    top = std::max(floor_pow2(top), 256 * kKiB);

    const uint64_t step = quick ? 4 : 2;
    for (uint64_t ws = 256 * kKiB; ws <= top; ws *= step) plan.working_sets.push_back(ws);
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
    const bool cuda = device.language() == Language::cuda;
    const std::string_view source = builtin_kernel(cuda ? "calibrate.cu" : "calibrate.cl");
    if (source.empty()) return make_error("the calibration kernels are not embedded in this build");
    std::vector<std::string> defines = {fmt::format("FMA_ITERS={}", kFmaIters),
                                        fmt::format("FMA_UNROLL={}", kFmaUnroll)};
    if (!cuda) defines.push_back(fmt::format("FMA_WIDTH={}", fma_width));
    auto outcome = device.compile(std::string(source), defines);
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

// The DRAM plateau: points far enough above the last-level cache that it cannot hold them, and at
// least the top two.
double plateau(const std::vector<BandwidthPoint>& curve, uint64_t l2_bytes) {
    if (curve.empty()) return 0;
    size_t above = 0;
    if (l2_bytes > 0)
        above = static_cast<size_t>(std::count_if(curve.begin(), curve.end(), [&](const BandwidthPoint& p) {
            return p.working_set_bytes >= 4.0 * double(l2_bytes);
        }));
    const size_t count = std::min(curve.size(), std::max<size_t>(above, 2));
    double sum = 0;
    for (size_t i = curve.size() - count; i < curve.size(); ++i) sum += std::max(curve[i].copy_gbs, curve[i].triad_gbs);
    return sum / double(count);
}

Expected<std::vector<BandwidthPoint>> measure_bandwidth(Device& device, DeviceResources& resources, const Kernels& k,
                                                        const Plan& plan, const CalibrationOptions& options) {
    const DeviceInfo& info = device.info();
    const uint64_t array_bytes = plan.working_sets.back() / 2;
    BufferHandle buffers[3];
    for (auto& b : buffers) {
        auto handle = resources.allocate(array_bytes);
        if (!handle) return handle.error();
        b = *handle;
    }
    // Initialised data: garbage could hold denormals, which are slow on a CPU; the fill also takes
    // the first-touch page faults out of the measurement.
    {
        const uint64_t n = array_bytes / kFloat4;
        const unsigned block = pick_block(info, k.fill_attrs, info.is_cpu ? 1024 : 256);
        std::vector<Launch> fills;
        for (auto b : buffers)
            fills.push_back({k.fill, stream_grids(info, n, block).back(), {block, 1, 1},
                             {KernelArg::buf(b), KernelArg::f(1.0f), KernelArg::u(static_cast<uint32_t>(n))}});
        if (auto r = device.run(fills); !r) return make_error("filling the calibration buffers: " + r.error().message);
    }

    const unsigned copy_block = pick_block(info, k.copy_attrs, info.is_cpu ? 1024 : 256);
    const unsigned triad_block = pick_block(info, k.triad_attrs, info.is_cpu ? 1024 : 256);
    if (!info.is_cpu) {
        // An idle GPU sits at low clocks and takes a moment to raise them; without this the first,
        // smallest points would be measured on a half-awake device.
        const uint64_t n = array_bytes / kFloat4;
        const Launch spin{k.copy, stream_grids(info, n, copy_block).front(), {copy_block, 1, 1},
                          {KernelArg::buf(buffers[0]), KernelArg::buf(buffers[1]), KernelArg::u(static_cast<uint32_t>(n))}};
        const std::vector<Launch> batch(8, spin);
        const auto start = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - start < std::chrono::milliseconds(plan.spin_up_ms))
            if (auto r = device.run(batch); !r) return make_error("warming the device up: " + r.error().message);
    }
    // The fastest of the grid shapes, as seconds per launch.
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
    std::vector<BandwidthPoint> curve;
    for (uint64_t ws : plan.working_sets) {
        // Copy reads one array and writes another; triad reads two and writes one.
        const uint64_t copy_n = std::max<uint64_t>(ws / (2 * kFloat4), 1);
        const uint64_t triad_n = std::max<uint64_t>(ws / (3 * kFloat4), 1);
        const Launch copy{k.copy, {}, {copy_block, 1, 1},
                          {KernelArg::buf(buffers[0]), KernelArg::buf(buffers[1]),
                           KernelArg::u(static_cast<uint32_t>(copy_n))}};
        const Launch triad{k.triad, {}, {triad_block, 1, 1},
                           {KernelArg::buf(buffers[0]), KernelArg::buf(buffers[1]), KernelArg::buf(buffers[2]),
                            KernelArg::f(0.5f), KernelArg::u(static_cast<uint32_t>(triad_n))}};
        auto copy_s = best_time(copy, copy_n);
        if (!copy_s) return make_error(fmt::format("copy at {}: {}", human_bytes(double(ws)), copy_s.error().message));
        auto triad_s = best_time(triad, triad_n);
        if (!triad_s) return make_error(fmt::format("triad at {}: {}", human_bytes(double(ws)), triad_s.error().message));

        BandwidthPoint p;
        p.working_set_bytes = double(ws);
        p.copy_gbs = 2.0 * double(copy_n * kFloat4) / *copy_s * 1e-9;
        p.triad_gbs = 3.0 * double(triad_n * kFloat4) / *triad_s * 1e-9;
        say(options, fmt::format("copy {}: {:.1f} GB/s", human_bytes(p.working_set_bytes), p.copy_gbs));
        say(options, fmt::format("triad {}: {:.1f} GB/s", human_bytes(p.working_set_bytes), p.triad_gbs));
        curve.push_back(p);
    }
    return curve;
}

Expected<double> measure_fma(Device& device, DeviceResources& resources, const Kernels& k, const Plan& plan,
                             int width) {
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
    auto seconds = time_launch(device, fma, plan);
    if (!seconds) return make_error("FMA chain: " + seconds.error().message);
    const double flop = 2.0 * kChains * width * double(kFmaIters) * double(blocks * block);
    return flop / *seconds * 1e-9;
}

Expected<double> number_field(const nlohmann::json& j, const std::string& where, const char* key) {
    const std::string name = where.empty() ? key : where + "." + key;
    auto it = j.find(key);
    if (it == j.end()) return make_error(fmt::format("calibration: missing field '{}'", name));
    if (!it->is_number()) return make_error(fmt::format("calibration: field '{}' is not a number", name));
    const double v = it->get<double>();
    if (!std::isfinite(v) || v < 0) return make_error(fmt::format("calibration: field '{}' is {}, not a finite figure >= 0", name, v));
    return v;
}

Expected<std::string> string_field(const nlohmann::json& j, const std::string& where, const char* key) {
    const std::string name = where.empty() ? key : where + "." + key;
    auto it = j.find(key);
    if (it == j.end()) return make_error(fmt::format("calibration: missing field '{}'", name));
    if (!it->is_string()) return make_error(fmt::format("calibration: field '{}' is not a string", name));
    return it->get<std::string>();
}

}  // namespace

double Calibration::bandwidth_at(double working_set_bytes) const {
    if (curve.empty()) return bandwidth_gbs;
    auto best = [](const BandwidthPoint& p) { return std::max(p.copy_gbs, p.triad_gbs); };
    if (!(working_set_bytes > curve.front().working_set_bytes)) return best(curve.front());
    if (!(working_set_bytes < curve.back().working_set_bytes)) return best(curve.back());
    auto hi = std::upper_bound(curve.begin(), curve.end(), working_set_bytes,
                               [](double ws, const BandwidthPoint& p) { return ws < p.working_set_bytes; });
    auto lo = hi - 1;
    const double y0 = best(*lo), y1 = best(*hi);
    const double x0 = lo->working_set_bytes, x1 = hi->working_set_bytes;
    if (!(x1 > x0)) return y1;
    if (!(y0 > 0) || !(y1 > 0)) {  // a logarithm needs positive figures; fall back to linear
        const double t = (working_set_bytes - x0) / (x1 - x0);
        return y0 + t * (y1 - y0);
    }
    const double t = std::log(working_set_bytes / x0) / std::log(x1 / x0);
    return std::exp(std::log(y0) + t * std::log(y1 / y0));
}

nlohmann::json to_json(const Calibration& c) {
    nlohmann::json curve = nlohmann::json::array();
    for (const auto& p : c.curve)
        curve.push_back({{"working_set_bytes", p.working_set_bytes}, {"copy_gbs", p.copy_gbs}, {"triad_gbs", p.triad_gbs}});
    nlohmann::json sheet = nullptr;
    if (c.datasheet)
        sheet = {{"name", c.datasheet->name},
                 {"bandwidth_gbs", c.datasheet->bandwidth_gbs},
                 {"fp32_gflops", c.datasheet->fp32_gflops}};
    return {{"version", kJsonVersion},
            {"device_key", c.device_key},
            {"device_name", c.device_name},
            {"source", c.source},
            {"measured_at", c.measured_at},
            {"bandwidth_gbs", c.bandwidth_gbs},
            {"fp32_gflops", c.fp32_gflops},
            {"curve", std::move(curve)},
            {"datasheet", std::move(sheet)}};
}

Expected<Calibration> calibration_from_json(const nlohmann::json& j) {
    if (!j.is_object()) return make_error("calibration: the document is not a JSON object");
    auto version = number_field(j, "", "version");
    if (!version) return version.error();
    if (*version != kJsonVersion)
        return make_error(fmt::format("calibration: field 'version' is {}, this kevo reads {}", *version, kJsonVersion));

    Calibration c;
    const std::pair<const char*, std::string*> strings[] = {{"device_key", &c.device_key},
                                                            {"device_name", &c.device_name},
                                                            {"source", &c.source},
                                                            {"measured_at", &c.measured_at}};
    for (auto [key, slot] : strings) {
        auto v = string_field(j, "", key);
        if (!v) return v.error();
        *slot = std::move(*v);
    }
    if (c.device_key.empty()) return make_error("calibration: field 'device_key' is empty");
    if (c.source != "measured" && c.source != "datasheet")
        return make_error(fmt::format("calibration: field 'source' is '{}', not 'measured' or 'datasheet'", c.source));
    const std::pair<const char*, double*> numbers[] = {{"bandwidth_gbs", &c.bandwidth_gbs},
                                                       {"fp32_gflops", &c.fp32_gflops}};
    for (auto [key, slot] : numbers) {
        auto v = number_field(j, "", key);
        if (!v) return v.error();
        *slot = *v;
    }

    auto curve = j.find("curve");
    if (curve == j.end()) return make_error("calibration: missing field 'curve'");
    if (!curve->is_array()) return make_error("calibration: field 'curve' is not an array");
    for (size_t i = 0; i < curve->size(); ++i) {
        const auto& point = (*curve)[i];
        const std::string where = fmt::format("curve[{}]", i);
        if (!point.is_object()) return make_error(fmt::format("calibration: field '{}' is not an object", where));
        BandwidthPoint p;
        const std::pair<const char*, double*> fields[] = {
            {"working_set_bytes", &p.working_set_bytes}, {"copy_gbs", &p.copy_gbs}, {"triad_gbs", &p.triad_gbs}};
        for (auto [key, slot] : fields) {
            auto v = number_field(point, where, key);
            if (!v) return v.error();
            *slot = *v;
        }
        if (!c.curve.empty() && !(p.working_set_bytes > c.curve.back().working_set_bytes))
            return make_error(fmt::format("calibration: field '{}.working_set_bytes' does not ascend", where));
        c.curve.push_back(p);
    }

    auto sheet = j.find("datasheet");
    if (sheet == j.end()) return make_error("calibration: missing field 'datasheet'");
    if (!sheet->is_null()) {
        if (!sheet->is_object()) return make_error("calibration: field 'datasheet' is neither null nor an object");
        Datasheet d;
        auto name = string_field(*sheet, "datasheet", "name");
        if (!name) return name.error();
        d.name = std::move(*name);
        auto bw = number_field(*sheet, "datasheet", "bandwidth_gbs");
        if (!bw) return bw.error();
        d.bandwidth_gbs = *bw;
        auto flops = number_field(*sheet, "datasheet", "fp32_gflops");
        if (!flops) return flops.error();
        d.fp32_gflops = *flops;
        c.datasheet = std::move(d);
    }
    return c;
}

std::string calibration_key(const DeviceInfo& info) {
    return sanitise_for_file_name(info.backend + "/" + info.name + "/" + info.driver);
}

std::optional<Calibration> load_cached_calibration(const DeviceInfo& info) {
    const std::string key = calibration_key(info);
    auto text = read_text_file(cache_file(key));
    if (!text) return std::nullopt;
    const auto j = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
    if (j.is_discarded()) return std::nullopt;
    auto c = calibration_from_json(j);
    // A file renamed or copied by hand must not pass for another device's figures.
    if (!c || c->device_key != key) return std::nullopt;
    return std::move(*c);
}

Expected<void> store_calibration(const Calibration& c) {
    if (c.device_key.empty()) return make_error("calibration: cannot store a calibration without a device key");
    return write_file_atomic(cache_file(c.device_key), to_json(c).dump(2) + "\n");
}

std::optional<Calibration> datasheet_calibration(const DeviceInfo& info) {
    // The table holds GPUs only; a CPU named after its Apple chip must not get the GPU's figures.
    if (info.is_cpu) return std::nullopt;
    auto sheet = datasheet_for(info.name);
    if (!sheet) return std::nullopt;
    Calibration c;
    c.device_key = calibration_key(info);
    c.device_name = info.name;
    c.source = "datasheet";
    c.bandwidth_gbs = sheet->bandwidth_gbs;
    c.fp32_gflops = sheet->fp32_gflops;
    c.datasheet = std::move(sheet);
    return c;
}

Expected<Calibration> measure_calibration(Device& device, const CalibrationOptions& options) {
    const DeviceInfo& info = device.info();
    const Plan plan = make_plan(info, options.quick);
    // Explicit vectors on a CPU (see calibrate.cl); 16 lanes fill AVX-512 and split cleanly
    // into narrower registers elsewhere.
    const int fma_width = (device.language() == Language::opencl && info.is_cpu) ? 16 : 1;

    DeviceResources resources(device);
    say(options, fmt::format("calibrating {} ({}): {} working sets from {} to {}{}", info.name, info.backend,
                             plan.working_sets.size(), human_bytes(double(plan.working_sets.front())),
                             human_bytes(double(plan.working_sets.back())), options.quick ? ", quick" : ""));
    auto kernels = build_kernels(device, resources, fma_width);
    if (!kernels) return kernels.error();

    auto curve = measure_bandwidth(device, resources, *kernels, plan, options);
    if (!curve) return make_error("calibration: " + curve.error().message);
    auto gflops = measure_fma(device, resources, *kernels, plan, fma_width);
    if (!gflops) return make_error("calibration: " + gflops.error().message);

    Calibration c;
    c.device_key = calibration_key(info);
    c.device_name = info.name;
    c.source = "measured";
    c.curve = std::move(*curve);
    c.bandwidth_gbs = plateau(c.curve, info.l2_bytes);
    c.fp32_gflops = *gflops;
    c.datasheet = datasheet_for(info.name);
    if (info.is_cpu) c.datasheet.reset();
    c.measured_at = utc_now_iso8601();
    say(options, fmt::format("fp32 FMA: {:.1f} GFLOP/s", c.fp32_gflops));
    say(options, fmt::format("bandwidth (DRAM plateau): {:.1f} GB/s", c.bandwidth_gbs));
    if (c.datasheet)
        say(options, fmt::format("datasheet {}: {:.0f} GB/s, {:.0f} GFLOP/s", c.datasheet->name,
                                 c.datasheet->bandwidth_gbs, c.datasheet->fp32_gflops));
    return c;
}

}  // namespace kevo
