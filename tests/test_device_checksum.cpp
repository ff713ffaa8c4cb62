// The built-in checksum kernel on a real OpenCL device (PoCL here): it agrees with the host twin on
// regions of many sizes and alignments, and any changed byte changes it.
#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "backend/registry.hpp"
#include "core/rng.hpp"
#include "eval/device_checksum.hpp"

namespace kevo {
namespace {

constexpr uint64_t kKey = 0x0123456789ABCDEFull;

// One instance per backend; every test runs on every device of it (PoCL here; on the GPU machine
// CUDA, NVIDIA's OpenCL and PoCL too), since the kernel must agree with the host on all of them.
class DeviceChecksumTest : public ::testing::TestWithParam<std::string> {
protected:
    void SetUp() override {
        backend_ = make_backend(GetParam());
        devices_ = backend_->probe().size();
        if (devices_ == 0) GTEST_SKIP() << "no " << GetParam() << " device: " << backend_->unavailable_reason();
    }

    // Runs `body` on every device of the backend, with a fresh checksum object each.
    template <class Body>
    void on_each_device(Body&& body) {
        for (size_t d = 0; d < devices_; ++d) {
            close_device();
            auto opened = backend_->open(static_cast<int>(d));
            ASSERT_TRUE(opened) << opened.error().message;
            device_ = std::move(*opened);
            checksum_ = std::make_unique<DeviceChecksum>(*device_, kKey);
            SCOPED_TRACE(device_->info().name);
            body();
        }
    }
    void TearDown() override { close_device(); }
    void close_device() {
        checksum_.reset();
        if (device_)
            for (auto b : buffers_) device_->release(b);
        buffers_.clear();
        device_.reset();
    }

    // A device buffer holding `bytes` pseudo-random bytes (also returned in `host`).
    BufferHandle random_buffer(uint64_t bytes, std::vector<unsigned char>& host) {
        host.resize(bytes);
        for (uint64_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>(rng::bits(7, 1, i));
        auto b = device_->allocate(bytes);
        EXPECT_TRUE(b) << b.error().message;
        buffers_.push_back(*b);
        auto up = device_->upload(*b, 0, host.data(), bytes);
        EXPECT_TRUE(up) << up.error().message;
        return *b;
    }

    uint64_t device_sum(const ChecksumRegion& region) {
        auto sums = checksum_->compute(std::span(&region, 1));
        EXPECT_TRUE(sums) << sums.error().message;
        return sums ? sums->front() : 0;
    }

    std::unique_ptr<Backend> backend_;
    size_t devices_ = 0;
    std::unique_ptr<Device> device_;
    std::unique_ptr<DeviceChecksum> checksum_;
    std::vector<BufferHandle> buffers_;
};

// Sizes around the word and the work-group (256 words = 1 KiB), not multiples of either, up to
// regions that need many groups per compute unit; offsets aligned and not.
TEST_P(DeviceChecksumTest, AgreesWithTheHostOnManySizesAndOffsets) {
    on_each_device([&] {
        std::vector<unsigned char> host;
        const uint64_t capacity = (3u << 20) + 1000;
        const BufferHandle b = random_buffer(capacity, host);
        std::vector<ChecksumRegion> regions;
        std::vector<uint64_t> expected;
        for (uint64_t bytes : {1ull, 2ull, 3ull, 4ull, 5ull, 1023ull, 1024ull, 1025ull, 4097ull, 65536ull, 100003ull,
                               (1ull << 20) + 7, 3ull << 20})
            for (uint64_t offset : {0ull, 1ull, 3ull, 64ull, 998ull}) {
                if (offset + bytes > capacity) continue;
                regions.push_back({b, offset, bytes});
                expected.push_back(host_checksum(host.data() + offset, bytes, kKey));
            }
        auto sums = checksum_->compute(regions);
        ASSERT_TRUE(sums) << sums.error().message;
        ASSERT_EQ(sums->size(), expected.size());
        for (size_t i = 0; i < expected.size(); ++i)
            EXPECT_EQ((*sums)[i], expected[i]) << "region of " << regions[i].bytes << " bytes at offset "
                                                << regions[i].offset;
        EXPECT_EQ(checksum_->batches(), 1u) << "all regions go in one batch";
    });
}

TEST_P(DeviceChecksumTest, OneChangedByteChangesIt) {
    on_each_device([&] {
        std::vector<unsigned char> host;
        const uint64_t bytes = (2u << 20) + 13;
        const BufferHandle b = random_buffer(bytes, host);
        const uint64_t before = device_sum({b, 0, bytes});
        ASSERT_EQ(before, host_checksum(host.data(), bytes, kKey));
        const uint64_t positions[] = {0, 1, 4096, bytes / 2, bytes - 1};
        for (uint64_t at : positions) {
            const unsigned char original = host[at];
            const unsigned char flipped = original ^ 0x10;
            ASSERT_TRUE(device_->upload(b, at, &flipped, 1));
            EXPECT_NE(device_sum({b, 0, bytes}), before) << "byte " << at;
            ASSERT_TRUE(device_->upload(b, at, &original, 1));
        }
        EXPECT_EQ(device_sum({b, 0, bytes}), before) << "restored";
    });
}

TEST(HostChecksum, SeesSwappedWordsAndDependsOnTheKey) {
    std::vector<unsigned char> host(4096);
    for (size_t i = 0; i < host.size(); ++i) host[i] = static_cast<unsigned char>(i * 37 + 11);
    std::vector<unsigned char> swapped = host;
    for (int k = 0; k < 4; ++k) std::swap(swapped[100 + k], swapped[2000 + k]);
    EXPECT_NE(host_checksum(host.data(), host.size(), kKey), host_checksum(swapped.data(), swapped.size(), kKey));
    EXPECT_NE(host_checksum(host.data(), host.size(), kKey), host_checksum(host.data(), host.size(), kKey + 1));
    // Zeros are not a blind spot: two all-zero regions of different lengths differ.
    const std::vector<unsigned char> zeros(64, 0);
    EXPECT_NE(host_checksum(zeros.data(), 32, kKey), host_checksum(zeros.data(), 64, kKey));
}

TEST_P(DeviceChecksumTest, EmptyRegionsAndEmptyBatchesNeedNoLaunch) {
    on_each_device([&] {
        std::vector<unsigned char> host;
        const BufferHandle b = random_buffer(16, host);
        EXPECT_EQ(device_sum({b, 0, 0}), 0u);
        auto none = checksum_->compute({});
        ASSERT_TRUE(none);
        EXPECT_TRUE(none->empty());
        EXPECT_EQ(checksum_->batches(), 0u);
    });
}

INSTANTIATE_TEST_SUITE_P(Backends, DeviceChecksumTest, ::testing::Values("opencl", "cuda"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
}  // namespace kevo
