// DeviceCase and DeviceCaseCache on a real OpenCL device (PoCL here) with saxpy's real cases: the
// device-side checks name a modified input, an overwritten guard zone and a corrupted pristine copy;
// the cache hands a case out again without an upload and rebuilds one whose pristine copy changed.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "backend/registry.hpp"
#include "eval/device_case.hpp"
#include "eval/device_case_cache.hpp"
#include "task/registry.hpp"

namespace kevo {
namespace {

constexpr uint64_t kKey = 0x5EED5EED5EED5EEDull;

class DeviceCaseTest : public ::testing::Test {
protected:
    void SetUp() override {
        backend_ = make_backend("opencl");
        if (backend_->probe().empty()) GTEST_SKIP() << "no OpenCL device: " << backend_->unavailable_reason();
        auto opened = backend_->open(0);
        ASSERT_TRUE(opened) << opened.error().message;
        device_ = std::move(*opened);
        auto task = make_task("saxpy");
        ASSERT_TRUE(task) << task.error().message;
        task_ = std::move(*task);
        size_ = task_->spec().profiles.at("small")[3];  // 300007 elements: not a multiple of anything
        c_ = task_->make_case(size_, 1, Trial::nominal);
        other_ = task_->make_case(size_, 2, Trial::nominal);
    }

    // The live buffer a launch receives for buffer `index` of the case.
    static BufferHandle live(const DeviceCase& dc, const Case& c, size_t index) {
        Geometry g;
        g.block = {256, 1, 1};
        const auto launches = dc.launches(c, {{"saxpy", 0}}, {{"saxpy", g}});
        return launches.at(0).args.at(index).buffer;
    }

    void poke(BufferHandle b, uint64_t offset) {
        const unsigned char byte = 0x42;
        auto r = device_->upload(b, offset, &byte, 1);
        ASSERT_TRUE(r) << r.error().message;
    }

    std::unique_ptr<Backend> backend_;
    std::unique_ptr<Device> device_;
    std::unique_ptr<Task> task_;
    SizeSpec size_;
    Case c_, other_;
};

TEST_F(DeviceCaseTest, NamesAModifiedInputAndForgetsItAfterReset) {
    DeviceChecksum checksum(*device_, kKey);
    auto dc = DeviceCase::create(*device_, checksum, c_);
    ASSERT_TRUE(dc) << dc.error().message;
    ASSERT_TRUE(dc->reset());
    auto clean = dc->modified_inputs(c_);
    ASSERT_TRUE(clean) << clean.error().message;
    EXPECT_TRUE(clean->empty());
    // y is state: writing it is allowed. x is an input: one byte in the middle is caught.
    poke(live(*dc, c_, 1), kGuardBytes + 12345);
    clean = dc->modified_inputs(c_);
    ASSERT_TRUE(clean);
    EXPECT_TRUE(clean->empty());
    poke(live(*dc, c_, 0), kGuardBytes + c_.buffers[0].bytes() / 2 + 1);
    auto modified = dc->modified_inputs(c_);
    ASSERT_TRUE(modified) << modified.error().message;
    EXPECT_EQ(*modified, std::vector<std::string>{"x"});
    ASSERT_TRUE(dc->reset());
    modified = dc->modified_inputs(c_);
    ASSERT_TRUE(modified);
    EXPECT_TRUE(modified->empty());
}

TEST_F(DeviceCaseTest, DescribesGuardWritesOnEitherSide) {
    DeviceChecksum checksum(*device_, kKey);
    auto dc = DeviceCase::create(*device_, checksum, c_);
    ASSERT_TRUE(dc) << dc.error().message;
    ASSERT_TRUE(dc->reset());
    auto guards = dc->check_guards();
    ASSERT_TRUE(guards) << guards.error().message;
    EXPECT_EQ(*guards, "");
    const uint64_t y_bytes = c_.buffers[1].bytes();
    poke(live(*dc, c_, 1), kGuardBytes + y_bytes + 10);
    guards = dc->check_guards();
    ASSERT_TRUE(guards);
    EXPECT_EQ(*guards, "out-of-bounds write: 1 bytes past the end of buffer 'y' were overwritten (the first at byte 10 "
                       "past the end)");
    ASSERT_TRUE(dc->reset());
    poke(live(*dc, c_, 0), kGuardBytes - 3);
    guards = dc->check_guards();
    ASSERT_TRUE(guards);
    EXPECT_EQ(*guards, "out-of-bounds write: 1 bytes before the start of buffer 'x' were overwritten (the farthest 3 "
                       "bytes before it)");
}

TEST_F(DeviceCaseTest, CatchesAWriteIntoAPristineCopy) {
    DeviceChecksum checksum(*device_, kKey);
    auto dc = DeviceCase::create(*device_, checksum, c_);
    ASSERT_TRUE(dc) << dc.error().message;
    EXPECT_EQ(dc->verify_pristine().value(), "");
    poke(dc->pristine(1), kGuardBytes + 7);
    ASSERT_TRUE(dc->reset());
    EXPECT_EQ(dc->check_guards().value(), "") << "the live guards are intact";
    auto damage = dc->verify_pristine();
    ASSERT_TRUE(damage) << damage.error().message;
    EXPECT_NE(damage->find("pristine copy of buffer 'y'"), std::string::npos) << *damage;
}

TEST_F(DeviceCaseTest, RemembersCheckedResultsPerHandle) {
    DeviceChecksum checksum(*device_, kKey);
    auto dc = DeviceCase::create(*device_, checksum, c_);
    ASSERT_TRUE(dc) << dc.error().message;
    ASSERT_TRUE(dc->reset());
    auto same = dc->results_as_remembered(c_);
    ASSERT_TRUE(same);
    EXPECT_FALSE(*same) << "nothing remembered yet";
    ASSERT_TRUE(dc->remember_results(c_));
    same = dc->results_as_remembered(c_);
    ASSERT_TRUE(same);
    EXPECT_TRUE(*same);
    DeviceCase copy = *dc;
    EXPECT_TRUE(copy.results_as_remembered(c_).value()) << "a copy keeps what was remembered";
    poke(live(*dc, c_, 1), kGuardBytes + 3);
    same = dc->results_as_remembered(c_);
    ASSERT_TRUE(same);
    EXPECT_FALSE(*same) << "one changed byte of y";
    EXPECT_FALSE(copy.results_as_remembered(c_).value()) << "the copy shares the buffers";
}

TEST_F(DeviceCaseTest, CacheReusesAResidentCaseWithoutUploading) {
    DeviceCaseCache cache(*device_, 1ull << 30, kKey);
    auto first = cache.get(*task_, size_, 1, Trial::nominal, c_);
    ASSERT_TRUE(first) << first.error().message;
    const BufferHandle x = live(*first, c_, 0);
    auto again = cache.get(*task_, size_, 1, Trial::nominal, c_);
    ASSERT_TRUE(again) << again.error().message;
    EXPECT_EQ(live(*again, c_, 0).id, x.id) << "the same device buffers";
    EXPECT_EQ(cache.counters().built, 1u);
    EXPECT_EQ(cache.counters().reused, 1u);
    // Another seed or trial is another case.
    auto other = cache.get(*task_, size_, 2, Trial::nominal, other_);
    ASSERT_TRUE(other);
    EXPECT_NE(live(*other, other_, 0).id, x.id);
    EXPECT_EQ(cache.counters().built, 2u);
    EXPECT_EQ(cache.resident_bytes(), first->device_bytes() + other->device_bytes());
}

TEST_F(DeviceCaseTest, CacheRebuildsACaseWhosePristineCopyWasCorrupted) {
    DeviceCaseCache cache(*device_, 1ull << 30, kKey);
    auto first = cache.get(*task_, size_, 1, Trial::nominal, c_);
    ASSERT_TRUE(first) << first.error().message;
    // A hostile candidate's stray write lands in the resident pristine copy of x.
    poke(first->pristine(0), kGuardBytes + 100);
    const BufferHandle corrupted = first->pristine(0);
    first = cache.get(*task_, size_, 1, Trial::nominal, c_);
    ASSERT_TRUE(first) << first.error().message;
    EXPECT_EQ(cache.counters().corrupted, 1u);
    EXPECT_EQ(cache.counters().built, 2u);
    EXPECT_EQ(cache.counters().reused, 0u);
    EXPECT_NE(first->pristine(0).id, corrupted.id);
    // The rebuilt copy holds x as the host has it.
    std::vector<std::byte> x(c_.buffers[0].bytes());
    ASSERT_TRUE(device_->download(first->pristine(0), kGuardBytes, x.data(), x.size()));
    EXPECT_EQ(x, c_.buffers[0].data);
    EXPECT_EQ(first->verify_pristine().value(), "");
    EXPECT_EQ(cache.resident_bytes(), first->device_bytes()) << "the corrupted case is no longer counted";
}

TEST_F(DeviceCaseTest, CacheStaysWithinItsBudget) {
    const uint64_t one = [&] {
        DeviceChecksum checksum(*device_, kKey);
        return DeviceCase::create(*device_, checksum, c_).value().device_bytes();
    }();
    DeviceCaseCache cache(*device_, one + one / 2, kKey);  // room for one case
    cache.begin_evaluation();
    ASSERT_TRUE(cache.get(*task_, size_, 1, Trial::nominal, c_));
    cache.begin_evaluation();
    ASSERT_TRUE(cache.get(*task_, size_, 2, Trial::nominal, other_));  // evicts the first
    EXPECT_EQ(cache.resident_bytes(), one);
    cache.begin_evaluation();
    ASSERT_TRUE(cache.get(*task_, size_, 1, Trial::nominal, c_));  // built again
    EXPECT_EQ(cache.counters().built, 3u);
    EXPECT_EQ(cache.counters().reused, 0u);
    DeviceCaseCache tiny(*device_, one / 2, kKey);  // a case larger than the budget is used, not kept
    ASSERT_TRUE(tiny.get(*task_, size_, 1, Trial::nominal, c_));
    ASSERT_TRUE(tiny.get(*task_, size_, 1, Trial::nominal, c_));
    EXPECT_EQ(tiny.counters().built, 2u);
    EXPECT_EQ(tiny.resident_bytes(), 0u);
}

// Three cases per evaluation with room for two: plain LRU would evict each case just before its
// next use; instead the first two stay resident and only the third is built every time.
TEST_F(DeviceCaseTest, CacheDoesNotThrashWhenAnEvaluationNeedsMoreThanItHolds) {
    const Case third = task_->make_case(size_, 3, Trial::nominal);
    const uint64_t one = [&] {
        DeviceChecksum checksum(*device_, kKey);
        return DeviceCase::create(*device_, checksum, c_).value().device_bytes();
    }();
    DeviceCaseCache cache(*device_, 2 * one + one / 2, kKey);
    for (int evaluation = 0; evaluation < 3; ++evaluation) {
        cache.begin_evaluation();
        ASSERT_TRUE(cache.get(*task_, size_, 1, Trial::nominal, c_));
        ASSERT_TRUE(cache.get(*task_, size_, 2, Trial::nominal, other_));
        ASSERT_TRUE(cache.get(*task_, size_, 3, Trial::nominal, third));
    }
    EXPECT_EQ(cache.counters().built, 5u);
    EXPECT_EQ(cache.counters().reused, 4u);
    EXPECT_EQ(cache.resident_bytes(), 2 * one);
}

}  // namespace
}  // namespace kevo
