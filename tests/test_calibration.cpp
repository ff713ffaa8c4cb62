// Device calibration: the bandwidth curve's interpolation, the JSON form and its validation, the
// cache, the datasheet table, and real measurements on PoCL (and on CUDA where a GPU is present).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <regex>
#include <span>
#include <string>
#include <vector>

#include "backend/registry.hpp"
#include "core/files.hpp"
#include "eval/calibration.hpp"

namespace kevo {
namespace {

constexpr double kMiB = 1024.0 * 1024.0;

Calibration sample_calibration() {
    Calibration c;
    c.device_key = "opencl_Sample_Device_1.0";
    c.device_name = "Sample Device";
    c.source = "measured";
    c.curve = {{1 * kMiB, 100, 50}, {4 * kMiB, 200, 400}, {64 * kMiB, 300, 250}};
    c.bandwidth_gbs = 300;
    c.fp32_gflops = 1234.5;
    c.datasheet = Datasheet{"NVIDIA H200 SXM", 4800, 66900};
    c.measured_at = "2025-01-02T03:04:05Z";
    c.stable = false;
    c.bandwidth_passes = {290, 300};
    c.fp32_passes = {1000, 1234.5};
    c.plateau_from_bytes = 64 * kMiB;
    c.llc_bytes = 16 * 1024 * 1024;
    c.notes = {"the FP32 rate did not settle"};
    return c;
}

TEST(CalibrationCurve, InterpolatesLogLogBetweenPoints) {
    const Calibration c = sample_calibration();
    // 2 MiB is halfway between 1 and 4 MiB in log space: the geometric mean of 100 and 400 (the
    // best of copy and triad at each end).
    EXPECT_NEAR(c.bandwidth_at(2 * kMiB), 200.0, 1e-9);
    EXPECT_NEAR(c.bandwidth_at(4 * kMiB), 400.0, 1e-9);
    EXPECT_NEAR(c.bandwidth_at(16 * kMiB), std::sqrt(400.0 * 300.0), 1e-9);
    // Monotone between two points.
    EXPECT_GT(c.bandwidth_at(3 * kMiB), c.bandwidth_at(2.5 * kMiB));
}

TEST(CalibrationCurve, ClampsAtTheEnds) {
    const Calibration c = sample_calibration();
    EXPECT_DOUBLE_EQ(c.bandwidth_at(1 * kMiB), 100.0);
    EXPECT_DOUBLE_EQ(c.bandwidth_at(1024.0), 100.0);
    EXPECT_DOUBLE_EQ(c.bandwidth_at(0.0), 100.0);
    EXPECT_DOUBLE_EQ(c.bandwidth_at(64 * kMiB), 300.0);
    EXPECT_DOUBLE_EQ(c.bandwidth_at(1e15), 300.0);
}

TEST(CalibrationCurve, FallsBackToThePlateauWithoutACurve) {
    Calibration c = sample_calibration();
    c.curve.clear();
    EXPECT_DOUBLE_EQ(c.bandwidth_at(1 * kMiB), 300.0);
    EXPECT_DOUBLE_EQ(c.bandwidth_at(1e12), 300.0);
}

void expect_same(const Calibration& a, const Calibration& b) {
    EXPECT_EQ(a.device_key, b.device_key);
    EXPECT_EQ(a.device_name, b.device_name);
    EXPECT_EQ(a.source, b.source);
    EXPECT_EQ(a.measured_at, b.measured_at);
    EXPECT_DOUBLE_EQ(a.bandwidth_gbs, b.bandwidth_gbs);
    EXPECT_DOUBLE_EQ(a.fp32_gflops, b.fp32_gflops);
    ASSERT_EQ(a.curve.size(), b.curve.size());
    for (size_t i = 0; i < a.curve.size(); ++i) {
        EXPECT_DOUBLE_EQ(a.curve[i].working_set_bytes, b.curve[i].working_set_bytes);
        EXPECT_DOUBLE_EQ(a.curve[i].copy_gbs, b.curve[i].copy_gbs);
        EXPECT_DOUBLE_EQ(a.curve[i].triad_gbs, b.curve[i].triad_gbs);
    }
    EXPECT_EQ(a.stable, b.stable);
    EXPECT_EQ(a.bandwidth_passes, b.bandwidth_passes);
    EXPECT_EQ(a.fp32_passes, b.fp32_passes);
    EXPECT_DOUBLE_EQ(a.plateau_from_bytes, b.plateau_from_bytes);
    EXPECT_EQ(a.llc_bytes, b.llc_bytes);
    EXPECT_EQ(a.notes, b.notes);
    ASSERT_EQ(a.datasheet.has_value(), b.datasheet.has_value());
    if (a.datasheet) {
        EXPECT_EQ(a.datasheet->name, b.datasheet->name);
        EXPECT_DOUBLE_EQ(a.datasheet->bandwidth_gbs, b.datasheet->bandwidth_gbs);
        EXPECT_DOUBLE_EQ(a.datasheet->fp32_gflops, b.datasheet->fp32_gflops);
    }
}

TEST(CalibrationJson, RoundTripsThroughText) {
    for (bool with_sheet : {true, false}) {
        Calibration c = sample_calibration();
        if (!with_sheet) c.datasheet.reset();
        const auto text = to_json(c).dump();
        auto back = calibration_from_json(nlohmann::json::parse(text));
        ASSERT_TRUE(back) << back.error().message;
        expect_same(c, *back);
    }
}

TEST(CalibrationJson, RejectsAMissingFieldNamingIt) {
    const nlohmann::json good = to_json(sample_calibration());
    for (const char* key : {"version", "device_key", "device_name", "source", "measured_at", "bandwidth_gbs",
                            "fp32_gflops", "curve", "datasheet", "stable", "bandwidth_passes", "fp32_passes",
                            "plateau_from_bytes", "llc_bytes", "notes"}) {
        nlohmann::json bad = good;
        bad.erase(key);
        auto c = calibration_from_json(bad);
        ASSERT_FALSE(c) << "accepted a document without " << key;
        EXPECT_NE(c.error().message.find(std::string("'") + key + "'"), std::string::npos) << c.error().message;
    }
    nlohmann::json bad_point = good;
    bad_point["curve"][1].erase("triad_gbs");
    auto c = calibration_from_json(bad_point);
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message.find("curve[1].triad_gbs"), std::string::npos) << c.error().message;

    nlohmann::json bad_sheet = good;
    bad_sheet["datasheet"].erase("fp32_gflops");
    c = calibration_from_json(bad_sheet);
    ASSERT_FALSE(c);
    EXPECT_NE(c.error().message.find("datasheet.fp32_gflops"), std::string::npos) << c.error().message;
}

TEST(CalibrationJson, RejectsWrongTypesAndValues) {
    const nlohmann::json good = to_json(sample_calibration());
    auto expect_rejected = [](const nlohmann::json& j, const std::string& field) {
        auto c = calibration_from_json(j);
        ASSERT_FALSE(c) << "accepted a bad " << field;
        EXPECT_NE(c.error().message.find(field), std::string::npos) << c.error().message;
    };
    nlohmann::json j = good;
    j["fp32_gflops"] = "fast";
    expect_rejected(j, "fp32_gflops");
    j = good;
    j["bandwidth_gbs"] = -1.0;
    expect_rejected(j, "bandwidth_gbs");
    j = good;
    j["source"] = "guessed";
    expect_rejected(j, "source");
    j = good;
    j["curve"][2]["working_set_bytes"] = 1.0;  // out of order
    expect_rejected(j, "curve[2].working_set_bytes");
    j = good;
    j["version"] = 99;
    expect_rejected(j, "version");
    EXPECT_FALSE(calibration_from_json(nlohmann::json::array()));
}

// Points KEVO_CACHE_DIR at a fresh folder for one test and restores it afterwards.
class CalibrationCache : public ::testing::Test {
protected:
    void SetUp() override {
        if (const char* old = std::getenv("KEVO_CACHE_DIR")) saved_ = old;
        dir_ = std::filesystem::temp_directory_path() /
               ("kevo-calibration-test-" + std::to_string(::getpid()) + "-" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        std::filesystem::remove_all(dir_);
        ::setenv("KEVO_CACHE_DIR", dir_.c_str(), 1);
    }
    void TearDown() override {
        if (saved_) ::setenv("KEVO_CACHE_DIR", saved_->c_str(), 1);
        else ::unsetenv("KEVO_CACHE_DIR");
        std::filesystem::remove_all(dir_);
    }

    static DeviceInfo info(const std::string& driver = "3.1+debian") {
        DeviceInfo i;
        i.backend = "opencl";
        i.name = "Sample/Device 9000 (test)";
        i.driver = driver;
        return i;
    }

    std::filesystem::path dir_;
    std::optional<std::string> saved_;
};

TEST_F(CalibrationCache, KeyIsAFileNameNamingBackendDeviceAndDriver) {
    const std::string key = calibration_key(info());
    EXPECT_EQ(key.find('/'), std::string::npos) << key;
    EXPECT_EQ(key.find(' '), std::string::npos) << key;
    EXPECT_NE(key.find("opencl"), std::string::npos) << key;
    EXPECT_NE(key.find("Device_9000"), std::string::npos) << key;
    EXPECT_NE(key.find("3.1"), std::string::npos) << key;
    EXPECT_NE(key, calibration_key(info("3.2")));
    DeviceInfo cuda = info();
    cuda.backend = "cuda";
    EXPECT_NE(key, calibration_key(cuda));
}

TEST_F(CalibrationCache, StoresAndLoadsBack) {
    EXPECT_FALSE(load_cached_calibration(info()).has_value());
    Calibration c = sample_calibration();
    c.device_key = calibration_key(info());
    auto stored = store_calibration(c);
    ASSERT_TRUE(stored) << stored.error().message;
    EXPECT_TRUE(std::filesystem::exists(dir_ / "calibration" / (c.device_key + ".json")));

    auto loaded = load_cached_calibration(info());
    ASSERT_TRUE(loaded.has_value());
    expect_same(c, *loaded);
    // Another driver is another device as far as the cache knows.
    EXPECT_FALSE(load_cached_calibration(info("3.2")).has_value());
}

TEST_F(CalibrationCache, UnreadableFilesAreMisses) {
    const std::string key = calibration_key(info());
    const auto path = cache_dir("calibration") / (key + ".json");
    ASSERT_TRUE(write_file_atomic(path, "{ not json"));
    EXPECT_FALSE(load_cached_calibration(info()).has_value());
    nlohmann::json incomplete = to_json(sample_calibration());
    incomplete["device_key"] = key;
    incomplete.erase("curve");
    ASSERT_TRUE(write_file_atomic(path, incomplete.dump()));
    EXPECT_FALSE(load_cached_calibration(info()).has_value());
    // A valid file whose key names another device is not taken for this one.
    nlohmann::json other = to_json(sample_calibration());
    ASSERT_TRUE(write_file_atomic(path, other.dump()));
    EXPECT_FALSE(load_cached_calibration(info()).has_value());
}

TEST(CalibrationDatasheet, MatchesTheMostSpecificEntry) {
    auto h200 = datasheet_for("NVIDIA H200");
    ASSERT_TRUE(h200);
    EXPECT_NE(h200->name.find("H200"), std::string::npos);
    EXPECT_DOUBLE_EQ(h200->bandwidth_gbs, 4800);
    EXPECT_DOUBLE_EQ(h200->fp32_gflops, 66900);

    auto pcie = datasheet_for("NVIDIA H100 PCIe");
    ASSERT_TRUE(pcie);
    EXPECT_NE(pcie->name.find("H100 PCIe"), std::string::npos);
    EXPECT_DOUBLE_EQ(pcie->bandwidth_gbs, 2000);
    auto sxm = datasheet_for("NVIDIA H100 80GB HBM3");
    ASSERT_TRUE(sxm);
    EXPECT_DOUBLE_EQ(sxm->bandwidth_gbs, 3350);

    auto m2max = datasheet_for("Apple M2 Max");
    ASSERT_TRUE(m2max);
    EXPECT_EQ(m2max->name, "Apple M2 Max");
    EXPECT_DOUBLE_EQ(m2max->bandwidth_gbs, 400);
    EXPECT_DOUBLE_EQ(m2max->fp32_gflops, 13600);
    auto m2 = datasheet_for("Apple M2");
    ASSERT_TRUE(m2);
    EXPECT_DOUBLE_EQ(m2->bandwidth_gbs, 100);
    EXPECT_FALSE(datasheet_for("Apple M2 Ultra"));

    auto a100 = datasheet_for("NVIDIA A100-SXM4-80GB");
    ASSERT_TRUE(a100);
    EXPECT_DOUBLE_EQ(a100->bandwidth_gbs, 2039);
    auto a100_40 = datasheet_for("NVIDIA A100-PCIE-40GB");
    ASSERT_TRUE(a100_40);
    EXPECT_DOUBLE_EQ(a100_40->bandwidth_gbs, 1555);

    // Whole words only: the L4 is not the L40S, and case does not matter.
    auto l40s = datasheet_for("NVIDIA L40S");
    ASSERT_TRUE(l40s);
    EXPECT_DOUBLE_EQ(l40s->bandwidth_gbs, 864);
    auto l4 = datasheet_for("nvidia l4");
    ASSERT_TRUE(l4);
    EXPECT_DOUBLE_EQ(l4->bandwidth_gbs, 300);
    EXPECT_FALSE(datasheet_for("NVIDIA L40"));

    auto rtx = datasheet_for("NVIDIA GeForce RTX 4090");
    ASSERT_TRUE(rtx);
    EXPECT_DOUBLE_EQ(rtx->fp32_gflops, 82600);
    auto ti = datasheet_for("NVIDIA GeForce RTX 2080 Ti");
    ASSERT_TRUE(ti);
    EXPECT_DOUBLE_EQ(ti->bandwidth_gbs, 616);
    EXPECT_FALSE(datasheet_for("NVIDIA GeForce RTX 3080 Ti"));

    EXPECT_FALSE(datasheet_for("pthread-skylake-avx512-AMD EPYC"));
    EXPECT_FALSE(datasheet_for("Imaginary GPU 1"));
    EXPECT_FALSE(datasheet_for(""));
}

TEST(CalibrationDatasheet, FallbackCalibrationHasNoCurve) {
    DeviceInfo info;
    info.backend = "cuda";
    info.name = "NVIDIA H200";
    info.driver = "580.159.04";
    auto c = datasheet_calibration(info);
    ASSERT_TRUE(c.has_value());
    EXPECT_EQ(c->source, "datasheet");
    EXPECT_EQ(c->device_key, calibration_key(info));
    EXPECT_TRUE(c->curve.empty());
    EXPECT_DOUBLE_EQ(c->bandwidth_gbs, 4800);
    EXPECT_DOUBLE_EQ(c->fp32_gflops, 66900);
    EXPECT_DOUBLE_EQ(c->bandwidth_at(1e6), 4800);
    ASSERT_TRUE(c->datasheet.has_value());
    // The JSON form holds a datasheet calibration too.
    auto back = calibration_from_json(to_json(*c));
    ASSERT_TRUE(back) << back.error().message;
    expect_same(*c, *back);

    info.name = "Imaginary GPU 1";
    EXPECT_FALSE(datasheet_calibration(info).has_value());
    info.name = "pthread-apple-m1";  // a CPU device, not the Apple GPU in the table
    info.is_cpu = true;
    EXPECT_FALSE(datasheet_calibration(info).has_value());
}

// Forwards to a real device, counting what is held, and can fail a timed run on request: the
// calibration must release everything on success and on error alike.
class CountingDevice : public Device {
public:
    // `llc_bytes` > 0 makes the device report that last-level cache (a small one keeps the plan,
    // which reaches 4x the cache, quick to measure in tests of the logic).
    explicit CountingDevice(Device& inner, uint64_t llc_bytes = 0) : inner_(inner), info_(inner.info()) {
        if (llc_bytes) info_.l2_bytes = llc_bytes;
    }
    int live_buffers = 0, live_modules = 0, timed_runs = 0;
    int fail_timed_run_at = -1;  // the index of the run_timed call that fails; -1: none

    const DeviceInfo& info() const override { return info_; }
    Language language() const override { return inner_.language(); }
    Expected<CompileOutcome> compile(const std::string& source, const std::vector<std::string>& defines) override {
        auto r = inner_.compile(source, defines);
        if (r && r->module) ++live_modules;
        return r;
    }
    Expected<uint32_t> kernel(uint32_t module, const std::string& name) override { return inner_.kernel(module, name); }
    Expected<KernelAttributes> attributes(uint32_t kernel) override { return inner_.attributes(kernel); }
    void release_module(uint32_t module) override {
        --live_modules;
        inner_.release_module(module);
    }
    Expected<BufferHandle> allocate(uint64_t bytes) override {
        auto r = inner_.allocate(bytes);
        if (r) ++live_buffers;
        return r;
    }
    void release(BufferHandle buffer) override {
        --live_buffers;
        inner_.release(buffer);
    }
    Expected<void> upload(BufferHandle dst, uint64_t offset, const void* src, uint64_t bytes) override {
        return inner_.upload(dst, offset, src, bytes);
    }
    Expected<void> download(BufferHandle src, uint64_t offset, void* dst, uint64_t bytes) override {
        return inner_.download(src, offset, dst, bytes);
    }
    Expected<void> copy(BufferHandle dst, BufferHandle src, uint64_t bytes) override { return inner_.copy(dst, src, bytes); }
    Expected<void> run(std::span<const Launch> launches) override { return inner_.run(launches); }
    Expected<double> run_timed(std::span<const Launch> launches) override {
        if (timed_runs++ == fail_timed_run_at) return make_error("injected device fault");
        return inner_.run_timed(launches);
    }
    bool is_poisoned() const override { return inner_.is_poisoned(); }

private:
    Device& inner_;
    DeviceInfo info_;
};

std::unique_ptr<Device> open_first(const std::string& backend_name, std::string& why) {
    auto backend = make_backend(backend_name);
    if (!backend) {
        why = backend_name + " backend not compiled in";
        return nullptr;
    }
    if (backend->probe().empty()) {
        why = "no " + backend_name + " device: " + backend->unavailable_reason();
        return nullptr;
    }
    auto device = backend->open(0);
    if (!device) {
        why = "opening the " + backend_name + " device failed: " + device.error().message;
        return nullptr;
    }
    return std::move(*device);
}

void expect_sane_measurement(const Calibration& c, const Device& device) {
    EXPECT_EQ(c.source, "measured");
    EXPECT_EQ(c.device_key, calibration_key(device.info()));
    EXPECT_EQ(c.device_name, device.info().name);
    EXPECT_TRUE(std::regex_match(c.measured_at, std::regex(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)"))) << c.measured_at;
    ASSERT_GE(c.curve.size(), 4u);
    for (size_t i = 0; i < c.curve.size(); ++i) {
        const auto& p = c.curve[i];
        EXPECT_TRUE(std::isfinite(p.copy_gbs) && p.copy_gbs > 0) << i;
        EXPECT_TRUE(std::isfinite(p.triad_gbs) && p.triad_gbs > 0) << i;
        if (i > 0) {
            EXPECT_GT(p.working_set_bytes, c.curve[i - 1].working_set_bytes);
        }
    }
    EXPECT_EQ(c.curve.front().working_set_bytes, 256.0 * 1024);
    EXPECT_TRUE(std::isfinite(c.bandwidth_gbs) && c.bandwidth_gbs > 0);
    EXPECT_TRUE(std::isfinite(c.fp32_gflops) && c.fp32_gflops > 0);
    // The plateau is an average of measured points, so it lies within the curve's range.
    double lo = 1e300, hi = 0;
    for (const auto& p : c.curve) {
        lo = std::min(lo, std::max(p.copy_gbs, p.triad_gbs));
        hi = std::max(hi, std::max(p.copy_gbs, p.triad_gbs));
    }
    EXPECT_GE(c.bandwidth_gbs, lo * 0.999);
    EXPECT_LE(c.bandwidth_gbs, hi * 1.001);
}

// The first use of a device (quick) and `kevo calibrate` (full) measure the plateau at the same
// working sets, so that a score does not depend on which of them filled the cache: on the H200 the
// quick plan's one plateau point (240 MiB) gave 4121 GB/s against the full plan's 4312.
TEST(CalibrationPlan, QuickAndFullPlansMeasureThePlateauAtTheSameWorkingSets) {
    DeviceInfo gpu;
    gpu.l2_bytes = 60ull << 20;
    gpu.global_mem_bytes = 140ull << 30;
    gpu.max_alloc_bytes = 35ull << 30;
    DeviceInfo cpu = gpu;
    cpu.is_cpu = true;
    cpu.l2_bytes = 300ull << 20;
    cpu.global_mem_bytes = 21ull << 30;
    cpu.max_alloc_bytes = 10ull << 30;
    for (const DeviceInfo& info : {gpu, cpu}) {
        const auto quick = calibration_plan_shape(info, true), full = calibration_plan_shape(info, false);
        EXPECT_EQ(quick.plateau_from, full.plateau_from);
        EXPECT_GE(quick.plateau_from, 4 * info.l2_bytes);
        auto plateau_points = [](const CalibrationPlanShape& p) {
            std::vector<uint64_t> out;
            for (uint64_t ws : p.working_sets)
                if (ws >= p.plateau_from) out.push_back(ws);
            return out;
        };
        EXPECT_EQ(plateau_points(quick), plateau_points(full)) << (info.is_cpu ? "cpu" : "gpu");
        EXPECT_GE(plateau_points(quick).size(), 2u);
        // Quick saves time only on the cache-resident points, and only on a CPU.
        if (info.is_cpu) EXPECT_LT(quick.working_sets.size(), full.working_sets.size());
        else EXPECT_EQ(quick.working_sets, full.working_sets);
    }
}

TEST(CalibrationMeasure, QuickCalibrationOnOpenCl) {
    std::string why;
    auto real = open_first("opencl", why);
    if (!real) GTEST_SKIP() << why;
    CountingDevice device(*real);
    std::vector<std::string> lines;
    CalibrationOptions options;
    options.quick = true;
    options.progress = [&](const std::string& line) { lines.push_back(line); };

    const auto start = std::chrono::steady_clock::now();
    auto c = measure_calibration(device, options);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ASSERT_TRUE(c) << c.error().message;
    expect_sane_measurement(*c, device);
    EXPECT_EQ(device.live_buffers, 0);
    EXPECT_EQ(device.live_modules, 0);
    EXPECT_GE(lines.size(), 2 * c->curve.size() + 1);
    bool saw_copy = false;
    for (const auto& line : lines) saw_copy = saw_copy || std::regex_search(line, std::regex(R"(^copy .*: [0-9.]+ GB/s$)"));
    EXPECT_TRUE(saw_copy);
    // Generous: the plateau lies at 4x the last-level cache, which on a CPU with a large shared L3
    // means working sets of a gigabyte or more, and a test machine may be busy.
    EXPECT_LT(seconds, 90.0);
    // The plateau is measured where the last-level cache cannot hold it (the quick plan included),
    // in passes, and the figures say how they were obtained.
    const double llc = double(device.info().l2_bytes);
    EXPECT_EQ(c->llc_bytes, device.info().l2_bytes);
    EXPECT_GE(c->curve.back().working_set_bytes, c->plateau_from_bytes);
    bool says_why = false;
    for (const auto& note : c->notes) says_why = says_why || note.find("below 4x the last-level cache") != std::string::npos;
    EXPECT_TRUE(c->plateau_from_bytes >= 4 * llc || says_why)
        << "plateau from " << c->plateau_from_bytes << " B with a " << llc << " B cache and no note";
    EXPECT_GE(c->bandwidth_passes.size(), 2u);
    EXPECT_GE(c->fp32_passes.size(), 2u);
    // The figure is the best pass (interference only slows a device down).
    EXPECT_DOUBLE_EQ(c->bandwidth_gbs, *std::max_element(c->bandwidth_passes.begin(), c->bandwidth_passes.end()));
    EXPECT_DOUBLE_EQ(c->fp32_gflops, *std::max_element(c->fp32_passes.begin(), c->fp32_passes.end()));
    EXPECT_EQ(c->stable, c->notes.empty() || (says_why && c->notes.size() == 1));
    std::printf("quick calibration of %s: %.1f GB/s, %.1f GFLOP/s, %zu points, plateau from %.0f MiB (cache %.0f MiB), "
                "%zu + %zu passes, %s, %.2f s\n", c->device_name.c_str(), c->bandwidth_gbs, c->fp32_gflops,
                c->curve.size(), c->plateau_from_bytes / kMiB, llc / kMiB, c->bandwidth_passes.size(),
                c->fp32_passes.size(), c->stable ? "stable" : "UNSTABLE", seconds);
}

TEST(CalibrationMeasure, DeviceFaultIsAnErrorAndLeaksNothing) {
    std::string why;
    auto real = open_first("opencl", why);
    if (!real) GTEST_SKIP() << why;
    for (int fail_at : {0, 3}) {
        CountingDevice device(*real, 1 << 20);
        device.fail_timed_run_at = fail_at;
        CalibrationOptions options;
        options.quick = true;
        auto c = measure_calibration(device, options);
        ASSERT_FALSE(c);
        EXPECT_NE(c.error().message.find("injected device fault"), std::string::npos) << c.error().message;
        EXPECT_EQ(device.live_buffers, 0);
        EXPECT_EQ(device.live_modules, 0);
    }
}

// A device whose timings drift slower with every timed run: no two passes can agree, and the
// calibration must say so (a note, stable = false) instead of returning a silent number. The
// launches run for real, but the time reported is a fixed one times the drift, so that the real
// device's noise (PoCL on a loaded CPU) can never make two passes agree by chance.
class DriftingDevice : public CountingDevice {
public:
    using CountingDevice::CountingDevice;
    Expected<double> run_timed(std::span<const Launch> launches) override {
        auto t = CountingDevice::run_timed(launches);
        if (!t) return t;
        return 1e-3 * std::pow(1.08, double(timed_runs));
    }
};

TEST(CalibrationMeasure, PassesThatNeverAgreeGiveAWarningNotASilentNumber) {
    std::string why;
    auto real = open_first("opencl", why);
    if (!real) GTEST_SKIP() << why;
    DriftingDevice device(*real, 1 << 20);
    CalibrationOptions options;
    options.quick = true;
    std::vector<std::string> lines;
    options.progress = [&](const std::string& line) { lines.push_back(line); };
    auto c = measure_calibration(device, options);
    ASSERT_TRUE(c) << c.error().message;
    EXPECT_FALSE(c->stable);
    ASSERT_GE(c->notes.size(), 2u);
    EXPECT_NE(c->notes[0].find("the DRAM bandwidth did not settle"), std::string::npos) << c->notes[0];
    EXPECT_NE(c->notes[1].find("the FP32 rate did not settle"), std::string::npos) << c->notes[1];
    bool warned = false;
    for (const auto& line : lines) warned = warned || line.rfind("warning: the DRAM bandwidth did not settle", 0) == 0;
    EXPECT_TRUE(warned);
    const CeilingsUsed used = ceilings_used(*c);
    EXPECT_FALSE(used.stable);
    EXPECT_GT(used.spread, 0.05);
    EXPECT_EQ(device.live_buffers, 0);
}

// On a GPU the figures must be near the vendor's: the DRAM plateau and the FMA chain should land
// between half the datasheet and a little above it.
TEST(CalibrationMeasure, QuickCalibrationOnCudaIsNearTheDatasheet) {
    std::string why;
    auto device = open_first("cuda", why);
    if (!device) GTEST_SKIP() << why;
    CalibrationOptions options;
    options.quick = true;
    options.progress = [](const std::string& line) { std::printf("  %s\n", line.c_str()); };
    auto c = measure_calibration(*device, options);
    ASSERT_TRUE(c) << c.error().message;
    expect_sane_measurement(*c, *device);
    if (!c->datasheet) GTEST_SKIP() << device->info().name << " is not in the datasheet table";
    EXPECT_GT(c->bandwidth_gbs, 0.5 * c->datasheet->bandwidth_gbs);
    EXPECT_LT(c->bandwidth_gbs, 1.05 * c->datasheet->bandwidth_gbs);
    EXPECT_GT(c->fp32_gflops, 0.5 * c->datasheet->fp32_gflops);
    EXPECT_LT(c->fp32_gflops, 1.05 * c->datasheet->fp32_gflops);
}

}  // namespace
}  // namespace kevo
