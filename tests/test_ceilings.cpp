// The ceilings a score is divided by, through the real binary and worker on PoCL: measured on
// first use (never the datasheet when measuring works), named with their source and date in every
// result, re-measured when a score comes out beyond the device, and an unwritable cache is a
// warning. Also the noise rule: noisy sizes get extra timed rounds and are flagged.
#include <gtest/gtest.h>

#include <fstream>

#include "eval/calibration.hpp"
#include "eval/roofline.hpp"
#include "kevo_process.hpp"
#include "task/registry.hpp"
#include "temp_dir.hpp"

using kevo::test::has_device;
using kevo::test::run_kevo;
using kevo::test::ScopedEnv;
using kevo::test::TempDir;

namespace kevo {
namespace {

std::string seed_file(const TempDir& dir, const std::string& task) {
    const std::string path = dir.file(task + "_seed.cl");
    std::ofstream(path) << task_file(task, "seed.cl");
    return path;
}

bool any_contains(const nlohmann::json& strings, const std::string& needle) {
    for (const auto& s : strings)
        if (s.get<std::string>().find(needle) != std::string::npos) return true;
    return false;
}

TEST(Ceilings, FirstUseMeasuresTheDeviceAndEveryResultSaysSo) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("ceilings");
    ScopedEnv cache("KEVO_CACHE_DIR", dir.file("cache"));
    const auto r = run_kevo({"eval", "saxpy", seed_file(dir, "saxpy"), "--backend", "opencl", "--profile", "small",
                             "--repeat", "3", "--json"});
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    ASSERT_EQ(doc["verdict"], "ok") << doc.dump(2);
    const auto& c = doc["ceilings"];
    EXPECT_EQ(c["source"], "measured");
    EXPECT_EQ(doc["ceiling_source"], "measured");
    EXPECT_FALSE(c["measured_at"].get<std::string>().empty());
    EXPECT_GT(c["bandwidth_gbs"].get<double>(), 0);
    EXPECT_GT(c["fp32_gflops"].get<double>(), 0);
    for (const auto& s : doc["sizes"]) EXPECT_DOUBLE_EQ(s["ceiling_static"].get<double>(), c["bandwidth_gbs"].get<double>());
    // The measurement was cached, and the text form names the ceilings and their date too.
    EXPECT_FALSE(std::filesystem::is_empty(dir.path() / "cache" / "calibration"));
    const auto text = run_kevo({"eval", "saxpy", seed_file(dir, "saxpy"), "--backend", "opencl", "--profile", "small",
                                "--repeat", "3"});
    EXPECT_NE(text.out.find("ceilings: "), std::string::npos) << text.out;
    EXPECT_NE(text.out.find("measured on this device "), std::string::npos) << text.out;
    // On a busy machine a size can run beyond the cached ceilings, which re-measures them (and
    // says so); only then may the date differ from the cached one.
    if (text.out.find("the ceilings were re-measured") == std::string::npos)
        EXPECT_NE(text.out.find("measured on this device " + c["measured_at"].get<std::string>()), std::string::npos)
            << text.out;
}

TEST(Ceilings, AnUnwritableCacheIsAWarningNotASilentRemeasurement) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("ceilings");
    std::ofstream(dir.file("not-a-folder")) << "x";
    ScopedEnv cache("KEVO_CACHE_DIR", dir.file("not-a-folder") + "/cache");
    const auto r = run_kevo({"eval", "saxpy", seed_file(dir, "saxpy"), "--backend", "opencl", "--profile", "small",
                             "--repeat", "3", "--json"});
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    EXPECT_EQ(r.exit_code, 0) << doc.dump(2);
    EXPECT_EQ(doc["ceilings"]["source"], "measured");
    EXPECT_TRUE(any_contains(doc["warnings"], "could not be written")) << doc["warnings"].dump(2);
}

// A cached calibration far below what the device does (as an unstable measurement can leave):
// every size scores beyond the device, so kevo re-times, then re-measures the ceilings and scores
// against the new ones, and says so.
TEST(Ceilings, AScoreBeyondTheDeviceReMeasuresTheCeilings) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("ceilings");
    ScopedEnv cache("KEVO_CACHE_DIR", dir.file("cache"));
    const auto devices = run_kevo({"devices", "--json"}).json();
    ASSERT_TRUE(devices.is_object());
    DeviceInfo info;
    for (const auto& b : devices["backends"])
        if (b["name"] == "opencl") {
            const auto& d = b["devices"][0];
            info.backend = "opencl";
            info.name = d["name"];
            info.driver = d["driver"];
        }
    Calibration wrong;
    wrong.device_key = calibration_key(info);
    wrong.device_name = info.name;
    wrong.source = "measured";
    wrong.measured_at = "2020-01-01T00:00:00Z";
    wrong.bandwidth_gbs = 0.01;
    wrong.fp32_gflops = 0.01;
    wrong.curve = {{256.0 * 1024, 0.01, 0.01}, {1e9, 0.01, 0.01}};
    wrong.bandwidth_passes = {0.01, 0.01};
    wrong.fp32_passes = {0.01, 0.01};
    ASSERT_TRUE(store_calibration(wrong));
    const auto r = run_kevo({"eval", "saxpy", seed_file(dir, "saxpy"), "--backend", "opencl", "--profile", "small",
                             "--repeat", "3", "--json"});
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out << r.err;
    ASSERT_EQ(doc["verdict"], "ok") << doc.dump(2);
    EXPECT_TRUE(any_contains(doc["warnings"], "the ceilings were re-measured")) << doc["warnings"].dump(2);
    EXPECT_NE(doc["ceilings"]["measured_at"], "2020-01-01T00:00:00Z");
    EXPECT_GT(doc["ceilings"]["bandwidth_gbs"].get<double>(), 1.0);
    for (const auto& s : doc["sizes"]) {
        const bool above = s["fraction"].get<double>() > kImplausibleFraction;
        EXPECT_EQ(s["implausible"].get<bool>(), above) << s.dump(2);
    }
}

TEST(Ceilings, AFractionAboveOnePointOhFiveIsFlaggedWithItsReason) {
    SizeResult beyond;
    beyond.label = "65536";
    beyond.unit = "GB/s";
    beyond.achieved = 30;
    beyond.ceiling_static = beyond.ceiling = 10;
    beyond.ceiling_workload = 20;
    beyond.fraction = 3;
    EXPECT_TRUE(beyond_physical(beyond));
    EXPECT_NE(implausible_warning(beyond, 1e6, 4 << 20).find("1.50x what the device reached"), std::string::npos)
        << implausible_warning(beyond, 1e6, 4 << 20);

    SizeResult cached = beyond;  // above DRAM, within what the cache delivers
    cached.achieved = 12;
    cached.fraction = 1.2;
    EXPECT_FALSE(beyond_physical(cached));
    const std::string why = implausible_warning(cached, 1 << 20, 4 << 20);
    EXPECT_NE(why.find("fits in the last-level cache (4.0 MiB)"), std::string::npos) << why;
    EXPECT_NE(why.find("--roofline workload"), std::string::npos) << why;

    SizeResult plain = cached;
    plain.achieved = 10.4;
    EXPECT_FALSE(beyond_physical(plain));
}

// Noise: with a threshold of 0 every size is "noisy", so extra rounds are added up to --max-repeat
// and the size is flagged; with a threshold nothing reaches, one round is all.
TEST(Noise, ANoisySizeGetsExtraRoundsAndIsFlagged) {
    if (!has_device("opencl")) GTEST_SKIP() << "no OpenCL device";
    TempDir dir("noise");
    const std::string seed = seed_file(dir, "saxpy");
    const auto noisy = run_kevo({"eval", "saxpy", seed, "--backend", "opencl", "--profile", "small", "--repeat", "3",
                                 "--max-repeat", "9", "--noise-cv", "0", "--json"});
    const auto doc = noisy.json();
    ASSERT_TRUE(doc.is_object()) << noisy.out << noisy.err;
    ASSERT_EQ(doc["verdict"], "ok") << doc.dump(2);
    for (const auto& s : doc["sizes"]) {
        EXPECT_TRUE(s["noisy"].get<bool>()) << s.dump(2);
        EXPECT_GT(s["samples"].get<int>(), 3) << "no extra rounds: " << s.dump(2);
        EXPECT_LE(s["samples"].get<int>(), 9) << s.dump(2);
    }
    EXPECT_TRUE(any_contains(doc["warnings"], "noisy: cv")) << doc["warnings"].dump(2);

    const auto quiet = run_kevo({"eval", "saxpy", seed, "--backend", "opencl", "--profile", "small", "--repeat", "3",
                                 "--max-repeat", "9", "--noise-cv", "10", "--json"});
    const auto q = quiet.json();
    ASSERT_TRUE(q.is_object()) << quiet.out << quiet.err;
    for (const auto& s : q["sizes"]) {
        EXPECT_FALSE(s["noisy"].get<bool>()) << s.dump(2);
        EXPECT_EQ(s["samples"].get<int>(), 3) << s.dump(2);
    }
    EXPECT_FALSE(any_contains(q["warnings"], "noisy: cv")) << q["warnings"].dump(2);
}

}  // namespace
}  // namespace kevo
