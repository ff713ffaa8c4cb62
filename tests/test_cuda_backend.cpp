// Tests of the CUDA backend: NVRTC compilation offline (needs only libnvrtc) and, where a GPU is
// present, memory, launches, timing, faults and kernel lookup on the real device.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "backend/registry.hpp"

namespace kevo {
namespace {

constexpr const char* kSaxpy = R"(
extern "C" __global__ void saxpy(float* y, const float* x, float a, unsigned int n) {
    unsigned int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) y[i] = a * x[i] + y[i];
}
)";

// Line 4 is the broken one.
constexpr const char* kSyntaxError = R"(extern "C" __global__ void broken(float* p) {
    unsigned int i = threadIdx.x;
    p[i] = 1.0f;
    float q = * ;
}
)";

constexpr const char* kNeedsFoo = R"(#if !defined(FOO) || FOO != 1
#error FOO must be defined as 1
#endif
extern "C" __global__ void foo(float* p) { p[0] = FOO; }
)";

constexpr const char* kWild = R"(
extern "C" __global__ void wild() { ((float*)0x10)[0] = 1.0f; }
)";

std::unique_ptr<Backend> cuda_backend() {
    auto backend = make_backend("cuda");
    EXPECT_NE(backend, nullptr);
    return backend;
}

Expected<CompileOutcome> compile_offline(Backend& backend, const char* source,
                                         const std::vector<std::string>& defines = {}) {
    return backend.compile_offline(source, defines, backend.default_offline_arch());
}

// Skips the calling test when NVRTC itself cannot be loaded.
#define SKIP_WITHOUT_NVRTC(outcome)                                                \
    if (!(outcome)) {                                                              \
        std::printf("NVRTC unavailable: %s\n", (outcome).error().message.c_str()); \
        GTEST_SKIP() << "NVRTC unavailable: " << (outcome).error().message;        \
    }

TEST(CudaBackendOffline, CompilesValidKernel) {
    auto backend = cuda_backend();
    EXPECT_EQ(backend->name(), "cuda");
    EXPECT_EQ(backend->language(), language_named("cuda"));
    EXPECT_EQ(backend->default_offline_arch(), "sm_90");
    auto outcome = compile_offline(*backend, kSaxpy);
    SKIP_WITHOUT_NVRTC(outcome);
    EXPECT_TRUE(outcome->module.has_value()) << outcome->log;
    EXPECT_GT(outcome->seconds, 0.0);
}

TEST(CudaBackendOffline, SyntaxErrorNamesTheLine) {
    auto backend = cuda_backend();
    auto outcome = compile_offline(*backend, kSyntaxError);
    SKIP_WITHOUT_NVRTC(outcome);
    EXPECT_FALSE(outcome->module.has_value());
    EXPECT_NE(outcome->log.find("candidate.cu(4)"), std::string::npos) << outcome->log;
    EXPECT_NE(outcome->log.find("error"), std::string::npos) << outcome->log;
}

TEST(CudaBackendOffline, DefinesReachTheCompiler) {
    auto backend = cuda_backend();
    auto without = compile_offline(*backend, kNeedsFoo);
    SKIP_WITHOUT_NVRTC(without);
    EXPECT_FALSE(without->module.has_value());
    EXPECT_NE(without->log.find("FOO must be defined as 1"), std::string::npos) << without->log;

    auto wrong = backend->compile_offline(kNeedsFoo, {"FOO=2"}, "sm_90");
    ASSERT_TRUE(wrong) << wrong.error().message;
    EXPECT_FALSE(wrong->module.has_value());

    auto with = backend->compile_offline(kNeedsFoo, {"FOO=1"}, "sm_90");
    ASSERT_TRUE(with) << with.error().message;
    EXPECT_TRUE(with->module.has_value()) << with->log;
}

TEST(CudaBackendOffline, BadArchOrDefineIsAnError) {
    auto backend = cuda_backend();
    auto probe_nvrtc = compile_offline(*backend, kSaxpy);
    SKIP_WITHOUT_NVRTC(probe_nvrtc);
    auto virtual_arch = backend->compile_offline(kSaxpy, {}, "compute_90");
    EXPECT_FALSE(virtual_arch);
    auto unknown_arch = backend->compile_offline(kSaxpy, {}, "sm_1");
    EXPECT_FALSE(unknown_arch);
    auto bad_define = backend->compile_offline(kSaxpy, {"1X=2"}, "sm_90");
    EXPECT_FALSE(bad_define);
}

TEST(CudaBackendProbe, ReportsDevicesOrWhyNot) {
    auto backend = cuda_backend();
    auto devices = backend->probe();
    if (devices.empty()) {
        EXPECT_FALSE(backend->unavailable_reason().empty());
        EXPECT_FALSE(backend->open(0));
        std::printf("no CUDA device: %s\n", backend->unavailable_reason().c_str());
        return;
    }
    for (size_t i = 0; i < devices.size(); ++i) {
        const DeviceInfo& d = devices[i];
        EXPECT_EQ(d.backend, "cuda");
        EXPECT_EQ(d.index, static_cast<int>(i));
        EXPECT_FALSE(d.name.empty());
        EXPECT_EQ(d.vendor, "NVIDIA");
        EXPECT_FALSE(d.driver.empty());
        EXPECT_EQ(d.arch.rfind("sm_", 0), 0u) << d.arch;
        EXPECT_FALSE(d.is_cpu);
        EXPECT_GT(d.compute_units, 0);
        EXPECT_GT(d.global_mem_bytes, 0u);
        EXPECT_EQ(d.max_alloc_bytes, d.global_mem_bytes);
        EXPECT_GT(d.l2_bytes, 0u);
        EXPECT_GE(d.shared_mem_per_block, 48u * 1024);
        EXPECT_GE(d.max_threads_per_block, 256u);
        EXPECT_GE(d.max_block[0], 256u);
        EXPECT_GE(d.max_grid[0], 65535u);
        EXPECT_GT(d.clock_mhz, 0);
    }
}

// Opens device 0 for each test, or skips with the reason there is none.
class CudaBackendDevice : public ::testing::Test {
protected:
    void SetUp() override {
        backend_ = cuda_backend();
        if (backend_->probe().empty()) GTEST_SKIP() << "no CUDA device: " << backend_->unavailable_reason();
        auto device = backend_->open(0);
        ASSERT_TRUE(device) << device.error().message;
        device_ = std::move(*device);
    }

    uint32_t compile_kernel(const char* source, const std::string& name) {
        auto outcome = device_->compile(source, {});
        EXPECT_TRUE(outcome) << outcome.error().message;
        if (!outcome) return 0;
        EXPECT_TRUE(outcome->module.has_value()) << outcome->log;
        if (!outcome->module) return 0;
        auto kernel = device_->kernel(*outcome->module, name);
        EXPECT_TRUE(kernel) << kernel.error().message;
        return kernel ? *kernel : 0;
    }

    // Runs a kernel that writes to a wild address, reports on stderr and exits: 0 when the fault came
    // back as an error, poisoned the device and the destructor then survived.
    [[noreturn]] void poison_and_exit() {
        uint32_t wild = compile_kernel(kWild, "wild");
        Launch launch{wild, {1, 1, 1}, {1, 1, 1}, {}};
        auto ran = device_->run(std::span(&launch, 1));
        bool poisoned = device_->is_poisoned();
        auto again = device_->run(std::span(&launch, 1));
        std::fprintf(stderr, "ran=%d poisoned=%d again=%d message=%s\n", ran ? 1 : 0, poisoned ? 1 : 0, again ? 1 : 0,
                     ran ? "" : ran.error().message.c_str());
        device_.reset();  // the destructor must survive a poisoned context
        std::fflush(stderr);
        std::_Exit(wild != 0 && !ran && poisoned && !again ? 0 : 1);
    }

    std::unique_ptr<Backend> backend_;
    std::unique_ptr<Device> device_;
};

TEST_F(CudaBackendDevice, SaxpyRoundTrip) {
    uint32_t saxpy = compile_kernel(kSaxpy, "saxpy");
    ASSERT_NE(saxpy, 0u);
    auto attributes = device_->attributes(saxpy);
    ASSERT_TRUE(attributes) << attributes.error().message;
    EXPECT_GT(attributes->registers, 0);
    EXPECT_EQ(attributes->shared_bytes, 0);
    EXPECT_GE(attributes->local_bytes, 0);
    EXPECT_GT(attributes->max_threads, 0u);

    const uint32_t n = 100000;  // not a multiple of the block: the tail guard matters
    const uint64_t guard = 256;
    std::vector<float> x(n), y(n);
    for (uint32_t i = 0; i < n; ++i) {
        x[i] = static_cast<float>(i % 1000) * 0.5f;
        y[i] = static_cast<float>(i % 7) - 3.0f;
    }
    auto bx = device_->allocate(n * sizeof(float));
    auto by = device_->allocate(guard + n * sizeof(float));
    ASSERT_TRUE(bx && by);
    ASSERT_TRUE(device_->upload(*bx, 0, x.data(), n * sizeof(float)));
    ASSERT_TRUE(device_->upload(*by, guard, y.data(), n * sizeof(float)));

    Launch launch{saxpy,
                  {(n + 255) / 256, 1, 1},
                  {256, 1, 1},
                  {KernelArg::buf(*by, guard), KernelArg::buf(*bx), KernelArg::f(2.0f), KernelArg::u(n)}};
    auto ran = device_->run(std::span(&launch, 1));
    ASSERT_TRUE(ran) << ran.error().message;

    std::vector<float> out(n, -1.0f);
    ASSERT_TRUE(device_->download(*by, guard, out.data(), n * sizeof(float)));
    for (uint32_t i = 0; i < n; ++i) ASSERT_EQ(out[i], 2.0f * x[i] + y[i]) << "at " << i;

    // Device-side copy, then the copy's contents.
    auto bz = device_->allocate(n * sizeof(float));
    ASSERT_TRUE(bz);
    ASSERT_TRUE(device_->copy(*bz, *bx, n * sizeof(float)));
    std::vector<float> copied(n, -1.0f);
    ASSERT_TRUE(device_->download(*bz, 0, copied.data(), n * sizeof(float)));
    EXPECT_EQ(copied, x);

    // Out-of-range transfers are refused before they reach the driver.
    EXPECT_FALSE(device_->download(*bx, 8, out.data(), n * sizeof(float)));

    device_->release(*bx);
    device_->release(*bx);  // idempotent
    device_->release(*by);
    device_->release(*bz);
    EXPECT_FALSE(device_->is_poisoned());
}

// Large transfers go through the backend's pinned staging (two 32 MiB chunks, unless KEVO_PINNED=0):
// a size that ends mid-chunk at an unaligned offset, and downloads of parts of it, one across a
// chunk boundary and one below the staging threshold, come back byte for byte. It prints the rates
// it saw, so that `KEVO_PINNED=0` against the default is a quick A/B of the staging.
TEST_F(CudaBackendDevice, LargeTransfersRoundTrip) {
    const uint64_t bytes = 3 * (32ull << 20) + 12345, offset = 777;
    std::vector<unsigned char> host(bytes);
    for (uint64_t i = 0; i < bytes; ++i) host[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    auto b = device_->allocate(offset + bytes);
    ASSERT_TRUE(b) << b.error().message;
    const auto t0 = std::chrono::steady_clock::now();
    ASSERT_TRUE(device_->upload(*b, offset, host.data(), bytes));
    const auto t1 = std::chrono::steady_clock::now();
    std::vector<unsigned char> back(bytes, 0);
    ASSERT_TRUE(device_->download(*b, offset, back.data(), bytes));
    const auto t2 = std::chrono::steady_clock::now();
    EXPECT_TRUE(back == host) << "the round trip changed the data";
    for (auto [from, length] : {std::pair<uint64_t, uint64_t>{(32ull << 20) - 100, 2ull << 20}, {5, 1000}}) {
        std::vector<unsigned char> part(length, 0);
        ASSERT_TRUE(device_->download(*b, offset + from, part.data(), length));
        EXPECT_TRUE(std::equal(part.begin(), part.end(), host.begin() + static_cast<std::ptrdiff_t>(from)))
            << length << " bytes from byte " << from;
    }
    auto rate = [&](auto from, auto to) {
        return static_cast<double>(bytes) / std::chrono::duration<double>(to - from).count() / 1e9;
    };
    const char* pinned = std::getenv("KEVO_PINNED");
    std::printf("%llu bytes (KEVO_PINNED=%s): upload %.1f GB/s, download %.1f GB/s\n",
                static_cast<unsigned long long>(bytes), pinned ? pinned : "unset", rate(t0, t1), rate(t1, t2));
    device_->release(*b);
    EXPECT_FALSE(device_->is_poisoned());
}

TEST_F(CudaBackendDevice, RunTimedIsPositive) {
    uint32_t saxpy = compile_kernel(kSaxpy, "saxpy");
    ASSERT_NE(saxpy, 0u);
    const uint32_t n = 1u << 22;
    auto bx = device_->allocate(n * sizeof(float));
    auto by = device_->allocate(n * sizeof(float));
    ASSERT_TRUE(bx && by);
    std::vector<float> ones(n, 1.0f);
    ASSERT_TRUE(device_->upload(*bx, 0, ones.data(), n * sizeof(float)));
    ASSERT_TRUE(device_->upload(*by, 0, ones.data(), n * sizeof(float)));
    Launch launch{saxpy,
                  {n / 256, 1, 1},
                  {256, 1, 1},
                  {KernelArg::buf(*by), KernelArg::buf(*bx), KernelArg::f(1.0f), KernelArg::u(n)}};
    std::vector<Launch> launches(3, launch);
    auto seconds = device_->run_timed(launches);
    ASSERT_TRUE(seconds) << seconds.error().message;
    EXPECT_GT(*seconds, 0.0);
    EXPECT_LT(*seconds, 1.0);
    std::vector<float> out(4);
    ASSERT_TRUE(device_->download(*by, 0, out.data(), out.size() * sizeof(float)));
    EXPECT_EQ(out[0], 4.0f);  // 1 + 3 * (1 * 1)
}

TEST_F(CudaBackendDevice, MissingKernelIsAnError) {
    auto outcome = device_->compile(kSaxpy, {});
    ASSERT_TRUE(outcome) << outcome.error().message;
    ASSERT_TRUE(outcome->module.has_value()) << outcome->log;
    auto kernel = device_->kernel(*outcome->module, "no_such_kernel");
    ASSERT_FALSE(kernel);
    EXPECT_NE(kernel.error().message.find("kernel 'no_such_kernel' not found in the module"), std::string::npos)
        << kernel.error().message;
    device_->release_module(*outcome->module);
    device_->release_module(*outcome->module);  // idempotent
    EXPECT_FALSE(device_->is_poisoned());
}

TEST_F(CudaBackendDevice, CompileErrorGivesNoModule) {
    auto outcome = device_->compile(kSyntaxError, {});
    ASSERT_TRUE(outcome) << outcome.error().message;
    EXPECT_FALSE(outcome->module.has_value());
    EXPECT_NE(outcome->log.find("candidate.cu(4)"), std::string::npos) << outcome->log;
}

TEST_F(CudaBackendDevice, BadLaunchesAreRefusedWithoutPoisoning) {
    uint32_t saxpy = compile_kernel(kSaxpy, "saxpy");
    ASSERT_NE(saxpy, 0u);
    auto buffer = device_->allocate(1024);
    ASSERT_TRUE(buffer);
    std::vector<KernelArg> args = {KernelArg::buf(*buffer), KernelArg::buf(*buffer), KernelArg::f(1.0f),
                                   KernelArg::u(0)};

    Launch too_big{saxpy, {1, 1, 1}, {4096, 1, 1}, args};
    auto r1 = device_->run(std::span(&too_big, 1));
    ASSERT_FALSE(r1);
    EXPECT_NE(r1.error().message.find("launch 1 of 1"), std::string::npos) << r1.error().message;
    EXPECT_NE(r1.error().message.find("'saxpy'"), std::string::npos) << r1.error().message;

    Launch grid_too_big{saxpy, {1, 1u << 20, 1}, {32, 1, 1}, args};
    EXPECT_FALSE(device_->run(std::span(&grid_too_big, 1)));

    Launch too_few_args{saxpy, {1, 1, 1}, {32, 1, 1}, {KernelArg::buf(*buffer)}};
    auto r3 = device_->run(std::span(&too_few_args, 1));
    EXPECT_FALSE(r3);

    Launch ok{saxpy, {1, 1, 1}, {32, 1, 1}, args};
    std::vector<Launch> second_fails = {ok, too_big};
    auto r4 = device_->run_timed(second_fails);
    ASSERT_FALSE(r4);
    EXPECT_NE(r4.error().message.find("launch 2 of 2"), std::string::npos) << r4.error().message;

    EXPECT_FALSE(device_->is_poisoned());
    auto r5 = device_->run(std::span(&ok, 1));  // the device still works
    EXPECT_TRUE(r5) << r5.error().message;
}

// The fault poisons the CUDA context for the rest of the process, so it runs in a child process
// of its own (the "threadsafe" style re-executes this binary for just this test).
TEST_F(CudaBackendDevice, WildWritePoisons) {
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    EXPECT_EXIT(poison_and_exit(), ::testing::ExitedWithCode(0),
                "ran=0 poisoned=1 again=0 message=launch 1 of 1 \\(kernel 'wild'");
}

}  // namespace
}  // namespace kevo
