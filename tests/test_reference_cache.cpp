// Tests of the reference cache with a small fake task whose reference counts its calls: memory
// hits, disk hits across cache objects, misses for another seed, trial or size, the memory
// budget, and corrupted files on disk, which must be misses rather than crashes.
#include <gtest/gtest.h>

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "core/rng.hpp"
#include "eval/reference_cache.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;

constexpr size_t kValues = 16;

// A task with one 16-float input drawn from (seed, trial) and a reference that doubles it.
// The reference sleeps so that the cache thinks it expensive and stores it on disk.
class CountingTask : public Task {
public:
    explicit CountingTask(double sleep_seconds) : sleep_seconds_(sleep_seconds) {
        spec_.name = "unit_counting_task";  // not a registered task: its source hash is empty
        spec_.regime = "test";
        spec_.kernels.push_back(KernelSpec{"k", {}, 1, Dim3{64, 1, 1}});
        spec_.profiles["small"] = {SizeSpec{"16", false, {{"n", 16}}}};
    }

    const TaskSpec& spec() const override { return spec_; }

    Case make_case(const SizeSpec&, uint64_t seed, Trial trial) const override {
        Case c;
        auto input = make_buffer<float>("x", BufferRole::input, ElemType::f32, kValues);
        rng::fill_uniform({input.as<float>(), kValues}, seed, trial == Trial::nominal ? 0 : 1, -1.0f, 1.0f);
        c.buffers.push_back(std::move(input));
        c.buffers.push_back(make_buffer<float>("y", BufferRole::output, ElemType::f32, kValues));
        c.results = {1};
        return c;
    }

    Reference reference(const SizeSpec&, const Case& c) const override {
        ++calls;
        std::this_thread::sleep_for(std::chrono::duration<double>(sleep_seconds_));
        Reference r;
        std::vector<std::byte> bytes(kValues * sizeof(float));
        const float* x = c.buffers[0].as<float>();
        for (size_t i = 0; i < kValues; ++i) {
            const float y = 2.0f * x[i];
            std::memcpy(bytes.data() + i * sizeof(float), &y, sizeof(float));
        }
        r.results.push_back(std::move(bytes));
        return r;
    }

    CheckResult check(const SizeSpec&, const Case&, const Reference&,
                      const std::vector<std::vector<std::byte>>&) const override {
        return {};
    }

    mutable std::atomic<int> calls{0};

private:
    TaskSpec spec_;
    double sleep_seconds_;
};

class TempDir {
public:
    TempDir() {
        static int counter = 0;
        path_ = fs::temp_directory_path() /
                ("kevo-refcache-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
};

std::vector<fs::path> reference_files(const fs::path& dir) {
    std::vector<fs::path> files;
    for (const auto& entry : fs::directory_iterator(dir))
        if (entry.path().extension() == ".ref") files.push_back(entry.path());
    return files;
}

// The reference the fake task must produce, computed without any cache (or delay).
Reference expected_reference(const SizeSpec& size, uint64_t seed, Trial trial) {
    const CountingTask quick(0.0);
    return quick.reference(size, quick.make_case(size, seed, trial));
}

// One slow fake task and an empty cache folder per test.
struct SlowTaskSetup {
    CountingTask task{0.3};
    SizeSpec size = task.spec().profiles.at("small").front();
    TempDir dir;

    Reference get(ReferenceCache& cache, uint64_t seed, Trial trial, bool* computed) {
        return cache.get(task, size, task.make_case(size, seed, trial), seed, trial, computed);
    }
};

TEST(ReferenceCache, SecondGetIsAHit) {
    SlowTaskSetup s;
    ReferenceCache cache(s.dir.path());
    bool computed = false;
    const Reference first = s.get(cache, 11, Trial::nominal, &computed);
    EXPECT_TRUE(computed);
    EXPECT_EQ(s.task.calls, 1);
    EXPECT_EQ(first.results, expected_reference(s.size, 11, Trial::nominal).results);

    const Reference second = s.get(cache, 11, Trial::nominal, &computed);
    EXPECT_FALSE(computed);
    EXPECT_EQ(s.task.calls, 1);
    EXPECT_EQ(second.results, first.results);
    EXPECT_EQ(cache.hits(), 1u);
    EXPECT_EQ(cache.misses(), 1u);
}

TEST(ReferenceCache, ANewCacheLoadsFromDisk) {
    SlowTaskSetup s;
    Reference first;
    {
        ReferenceCache cache(s.dir.path());
        first = s.get(cache, 12, Trial::nominal, nullptr);
    }
    EXPECT_EQ(s.task.calls, 1);
    EXPECT_EQ(reference_files(s.dir.path()).size(), 1u);  // it took 0.3 s, so it went to disk

    ReferenceCache fresh(s.dir.path());
    bool computed = true;
    const Reference loaded = s.get(fresh, 12, Trial::nominal, &computed);
    EXPECT_FALSE(computed);
    EXPECT_EQ(s.task.calls, 1);
    EXPECT_EQ(loaded.results, first.results);
    EXPECT_EQ(fresh.hits(), 1u);
    EXPECT_EQ(fresh.misses(), 0u);
}

TEST(ReferenceCache, ADifferentSeedTrialOrSizeIsAMiss) {
    SlowTaskSetup s;
    ReferenceCache cache(s.dir.path());
    bool computed = false;
    const Reference nominal = s.get(cache, 13, Trial::nominal, &computed);
    EXPECT_TRUE(computed);

    const Reference other_seed = s.get(cache, 14, Trial::nominal, &computed);
    EXPECT_TRUE(computed);
    EXPECT_EQ(s.task.calls, 2);
    EXPECT_NE(other_seed.results, nominal.results);
    EXPECT_EQ(other_seed.results, expected_reference(s.size, 14, Trial::nominal).results);

    const Reference outlier = s.get(cache, 13, Trial::outlier, &computed);
    EXPECT_TRUE(computed);
    EXPECT_EQ(s.task.calls, 3);
    EXPECT_NE(outlier.results, nominal.results);
    EXPECT_EQ(outlier.results, expected_reference(s.size, 13, Trial::outlier).results);

    SizeSpec other_size{"32", false, {{"n", 32}}};
    cache.get(s.task, other_size, s.task.make_case(other_size, 13, Trial::nominal), 13, Trial::nominal, &computed);
    EXPECT_TRUE(computed);
    EXPECT_EQ(s.task.calls, 4);

    // Each was kept under its own key; none of them displaced another.
    s.get(cache, 13, Trial::nominal, &computed);
    EXPECT_FALSE(computed);
    s.get(cache, 14, Trial::nominal, &computed);
    EXPECT_FALSE(computed);
    EXPECT_EQ(s.task.calls, 4);
    EXPECT_EQ(reference_files(s.dir.path()).size(), 4u);
}

TEST(ReferenceCache, CorruptedFilesAreMisses) {
    SlowTaskSetup s;
    {
        ReferenceCache cache(s.dir.path());
        s.get(cache, 15, Trial::nominal, nullptr);
    }
    auto files = reference_files(s.dir.path());
    ASSERT_EQ(files.size(), 1u);
    const auto good_size = fs::file_size(files[0]);
    const Reference want = expected_reference(s.size, 15, Trial::nominal);

    auto check_miss = [&](const std::string& what, const std::string& contents) {
        SCOPED_TRACE(what);
        std::ofstream(files[0], std::ios::binary | std::ios::trunc) << contents;
        ReferenceCache fresh(s.dir.path());
        const int calls = s.task.calls;
        bool computed = false;
        const Reference r = s.get(fresh, 15, Trial::nominal, &computed);
        EXPECT_TRUE(computed);
        EXPECT_EQ(s.task.calls, calls + 1);
        EXPECT_EQ(r.results, want.results);
    };
    std::string valid;
    {
        std::ifstream in(files[0], std::ios::binary);
        valid.assign(std::istreambuf_iterator<char>(in), {});
    }
    ASSERT_EQ(valid.size(), good_size);
    check_miss("empty file", "");
    check_miss("garbage", "this is not a reference file at all, just text");
    check_miss("truncated in the data", valid.substr(0, valid.size() - 5));
    check_miss("truncated in the header", valid.substr(0, 12));
    std::string wrong_magic = valid;
    wrong_magic[0] = static_cast<char>(wrong_magic[0] ^ 0x55);
    check_miss("wrong magic", wrong_magic);
}

TEST(ReferenceCache, AnAbsurdLengthFieldIsAMissNotACrash) {
    // exposes: ReferenceCache::load trusts a per-result length up to 1 TiB and resizes to it before reading (bad_alloc / OOM)
    SlowTaskSetup s;
    {
        ReferenceCache cache(s.dir.path());
        s.get(cache, 16, Trial::nominal, nullptr);
    }
    auto files = reference_files(s.dir.path());
    ASSERT_EQ(files.size(), 1u);
    std::string valid;
    {
        std::ifstream in(files[0], std::ios::binary);
        valid.assign(std::istreambuf_iterator<char>(in), {});
    }
    ASSERT_GE(valid.size(), 24u);
    // Header: magic, count, then the first result's length: claim 512 GiB.
    const uint64_t huge = 1ull << 39;
    std::memcpy(valid.data() + 16, &huge, 8);
    std::ofstream(files[0], std::ios::binary | std::ios::trunc) << valid;

    // In a child process, so that an allocation failure or an OOM kill fails this test only.
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    const Reference want = expected_reference(s.size, 16, Trial::nominal);
    EXPECT_EXIT(
        {
            ReferenceCache fresh(s.dir.path());
            bool computed = false;
            const Reference r = s.get(fresh, 16, Trial::nominal, &computed);
            std::error_code ec;
            fs::remove_all(s.dir.path(), ec);  // std::exit skips the destructors
            std::exit(computed && r.results == want.results ? 0 : 1);
        },
        ::testing::ExitedWithCode(0), "");
}

TEST(ReferenceCache, FastReferencesStayInMemoryOnly) {
    CountingTask task(0.0);
    const SizeSpec size = task.spec().profiles.at("small").front();
    TempDir dir;
    {
        ReferenceCache cache(dir.path());
        cache.get(task, size, task.make_case(size, 1, Trial::nominal), 1, Trial::nominal);
    }
    // Cheaper to recompute than to read back: nothing is written.
    EXPECT_TRUE(reference_files(dir.path()).empty());
    ReferenceCache fresh(dir.path());
    bool computed = false;
    fresh.get(task, size, task.make_case(size, 1, Trial::nominal), 1, Trial::nominal, &computed);
    EXPECT_TRUE(computed);
    EXPECT_EQ(task.calls, 2);
}

TEST(ReferenceCache, MemoryBudgetEvictsTheOldest) {
    CountingTask task(0.0);
    const SizeSpec size = task.spec().profiles.at("small").front();
    // Room for one 64-byte reference, memory only.
    ReferenceCache cache({}, 100);
    bool computed = false;
    cache.get(task, size, task.make_case(size, 1, Trial::nominal), 1, Trial::nominal, &computed);
    cache.get(task, size, task.make_case(size, 1, Trial::nominal), 1, Trial::nominal, &computed);
    EXPECT_FALSE(computed);
    cache.get(task, size, task.make_case(size, 2, Trial::nominal), 2, Trial::nominal, &computed);
    EXPECT_TRUE(computed);
    cache.get(task, size, task.make_case(size, 1, Trial::nominal), 1, Trial::nominal, &computed);
    EXPECT_TRUE(computed);  // seed 1 was evicted to make room for seed 2
    EXPECT_EQ(task.calls, 3);
}

}  // namespace
}  // namespace kevo
