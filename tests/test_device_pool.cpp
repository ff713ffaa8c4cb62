// The device pool of `kevo sweep --devices` (study/device_pool.hpp): placement on the least busy
// device within its slots, a device leaving the pool, the --devices list and its errors; then end to
// end on scripted evaluations over two PoCL devices (POCL_DEVICES="pthread pthread"): the study's
// runs are spread over both, and with one device lost mid-study (its evaluations fail and it can no
// longer be opened: kevo_scripted's stand-in for a driver fault, which cannot be caused here) that
// device leaves the pool, its cells are run again on the other as new runs that name the runs they
// replace, the replaced runs stay in the store, and every cell finishes.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "store/store.hpp"
#include "study/device_pool.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;

TEST(DevicePool, PlacesOnTheLeastBusyDeviceWithinItsSlotsAndALeftDeviceTakesNoMore) {
    DevicePool pool({0, 1, 3}, 2);
    EXPECT_EQ(pool.acquire(), 0);
    EXPECT_EQ(pool.acquire(), 1);
    EXPECT_EQ(pool.acquire(), 3);
    EXPECT_EQ(pool.acquire(), 0);
    EXPECT_TRUE(pool.acquire(1));
    EXPECT_FALSE(pool.acquire(1)) << "two slots each";
    EXPECT_FALSE(pool.acquire(2)) << "not in the pool";
    EXPECT_EQ(pool.acquire(), 3);
    EXPECT_EQ(pool.acquire(), std::nullopt) << "every slot taken";
    pool.release(1);
    EXPECT_EQ(pool.acquire(), 1);
    pool.remove(3, "lost");
    EXPECT_FALSE(pool.contains(3));
    EXPECT_EQ(pool.in_flight(3), 2) << "its runs in flight still count until they end";
    pool.release(3);
    pool.release(3);
    EXPECT_EQ(pool.in_flight(3), 0);
    EXPECT_FALSE(pool.acquire(3));
    EXPECT_EQ(pool.removed().at(3), "lost");
    EXPECT_EQ(pool.devices(), (std::vector<int>{0, 1}));
    pool.remove(0, "lost");
    pool.remove(1, "lost");
    EXPECT_TRUE(pool.empty());
    EXPECT_EQ(pool.acquire(), std::nullopt);
}

TEST(DevicePool, TheDeviceListIsIndicesOrAllAndABadEntryIsNamed) {
    EXPECT_EQ(*parse_device_list("all", 3), (std::vector<int>{0, 1, 2}));
    EXPECT_EQ(*parse_device_list("2,0", 3), (std::vector<int>{2, 0}));
    for (const char* bad : {"3", "0,,1", "x", "-1", "1 ", ""}) {
        auto r = parse_device_list(bad, 3);
        ASSERT_FALSE(r.has_value()) << bad;
        EXPECT_NE(r.error().message.find("from 0 to 2"), std::string::npos) << r.error().message;
    }
    auto twice = parse_device_list("1,1", 3);
    ASSERT_FALSE(twice.has_value());
    EXPECT_NE(twice.error().message.find("device 1 is named twice"), std::string::npos);
}

std::string temp_path(const std::string& name) { return test::temp_path("kevo_pool", name); }

std::string write_study(const std::string& name) {
    return test::write_saxpy_tuner_study(temp_path(name + ".toml"), name, 4, 2);
}

// Two PoCL devices for the sweep's own probing; the runs' evaluations are scripted.
class TwoDevices : public ::testing::Test {
protected:
    void SetUp() override { ::setenv("POCL_DEVICES", "pthread pthread", 1); }
    void TearDown() override {
        ::unsetenv("POCL_DEVICES");
        ::unsetenv("KEVO_SCRIPTED_FAULTY_DEVICE");
        ::unsetenv("KEVO_SCRIPTED_FAULT_FILE");
    }
    static test::ProcessResult sweep(const std::string& name) {
        const std::string db = temp_path(name + ".db");
        fs::remove(db);
        return test::run_scripted_kevo({"sweep", write_study(name), "--db", db, "--out", temp_path(name + "-out"),
                                        "--devices", "all", "--json"});
    }
};

TEST_F(TwoDevices, TheStudysRunsAreSpreadOverEveryDevice) {
    const auto r = sweep("spread");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out;
    EXPECT_EQ(doc["devices"], nlohmann::json::array({0, 1}));
    std::set<int> used;
    for (const auto& c : doc["cells"]) {
        EXPECT_EQ(c["status"], "finished") << c.dump();
        used.insert(c["device"].get<int>());
    }
    EXPECT_EQ(used, (std::set<int>{0, 1}));
    auto store = Store::open(temp_path("spread.db"));
    ASSERT_TRUE(store.has_value());
    std::set<int> stored;
    const auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs.has_value());
    for (const auto& run : *runs) {
        auto full = (*store)->load_run(run.run_id);
        ASSERT_TRUE(full.has_value());
        stored.insert(full->settings.value("device", -1));
    }
    EXPECT_EQ(stored, (std::set<int>{0, 1})) << "each run is stored with the device it ran on";
}

TEST_F(TwoDevices, ALostDeviceLeavesThePoolAndItsCellsRunAgainElsewhereNamingWhatTheyReplace) {
    const std::string fault = temp_path("lost.fault");
    fs::remove(fault);
    ::setenv("KEVO_SCRIPTED_FAULTY_DEVICE", "1", 1);
    ::setenv("KEVO_SCRIPTED_FAULT_FILE", fault.c_str(), 1);
    const auto r = sweep("lost");
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
    const auto doc = r.json();
    ASSERT_TRUE(doc.is_object()) << r.out;
    ASSERT_TRUE(doc["devices_left"].contains("1")) << doc.dump(2);
    EXPECT_NE(doc["devices_left"]["1"].get<std::string>().find("scripted device 1 is lost"), std::string::npos);
    EXPECT_NE(r.err.find("device 1 left the pool"), std::string::npos) << r.err;
    for (const auto& c : doc["cells"]) {
        EXPECT_EQ(c["status"], "finished") << c.dump();
        EXPECT_EQ(c["device"], 0) << c.dump();
    }
    auto store = Store::open(temp_path("lost.db"));
    ASSERT_TRUE(store.has_value());
    int failed = 0, replacing = 0;
    const auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs.has_value());
    for (const auto& run : *runs) {
        auto full = (*store)->load_run(run.run_id);
        ASSERT_TRUE(full.has_value());
        const auto tag = full->settings.value("settings", nlohmann::json::object()).value("study", nlohmann::json::object());
        if (full->status == RunStatus::failed) {
            ++failed;
            EXPECT_EQ(full->settings.value("device", -1), 1) << run.run_id;
        }
        if (tag.contains("replaces")) {
            ++replacing;
            EXPECT_NE(tag["replaced_because"].get<std::string>().find("device 1 faulted"), std::string::npos) << tag.dump();
            auto replaced = (*store)->load_run(tag["replaces"].get<std::string>());
            ASSERT_TRUE(replaced.has_value()) << "the replaced run stays in the store";
            EXPECT_EQ(replaced->status, RunStatus::failed);
        }
    }
    EXPECT_GE(failed, 1);
    EXPECT_EQ(replacing, failed) << "every run lost with the device was replaced once";
}

TEST(DevicePoolCli, ADeviceTheBackendLacksIsRefused) {
    const auto r = test::run_kevo({"sweep", write_study("refused"), "--db", temp_path("refused.db"), "--devices", "0,7"});
    EXPECT_EQ(r.exit_code, 2) << r.out << r.err;
    EXPECT_NE(r.err.find("--devices: \"7\" is not a device index"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace kevo
