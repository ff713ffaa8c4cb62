// Vendor routines as an optional extension of Device (backend/vendor_routines.hpp): an OpenCL
// device (PoCL here) has none and the free functions say so, naming the routine; a device that
// implements VendorRoutines is reached through them; CudaDevice is one.
#include <gtest/gtest.h>

#include <string>
#include <type_traits>

#include "backend/registry.hpp"
#include "backend/vendor_routines.hpp"
#include "backends/cuda/cuda_device.hpp"

namespace kevo {
namespace {

constexpr VendorRoutine kRoutines[] = {VendorRoutine::fft3d_c2c, VendorRoutine::saxpy,
                                       VendorRoutine::gemm_bf16, VendorRoutine::gemm_fp8,
                                       VendorRoutine::gemm_int8, VendorRoutine::gemm_fp8_block};

#if KEVO_HAVE_CUDA_HEADERS
static_assert(std::is_base_of_v<VendorRoutines, cuda::CudaDevice>, "the CUDA device implements the vendor routines");
#endif

TEST(VendorRoutines, AnOpenclDeviceHasNoneAndSaysSoNamingTheRoutine) {
    auto backend = make_backend("opencl");
    ASSERT_TRUE(backend);
    const auto devices = backend->probe();
    if (devices.empty()) GTEST_SKIP() << "no OpenCL device: " << backend->unavailable_reason();
    auto device = backend->open(devices.front().index);
    ASSERT_TRUE(device) << device.error().message;

    EXPECT_EQ(dynamic_cast<VendorRoutines*>(device->get()), nullptr);
    EXPECT_EQ(vendor_routines_of(**device), nullptr);

    auto library = vendor_library(**device, VendorRoutine::gemm_bf16);
    ASSERT_FALSE(library) << *library;
    EXPECT_EQ(library.error().message, "no vendor library for bf16 GEMM on this backend");
    for (VendorRoutine routine : kRoutines) {
        const std::string expected = std::string("no vendor library for ") + vendor_routine_name(routine) + " on this backend";
        auto named = vendor_library(**device, routine);
        ASSERT_FALSE(named) << *named;
        EXPECT_EQ(named.error().message, expected);
        auto timed = run_vendor_timed(**device, VendorCall{routine, 16});
        ASSERT_FALSE(timed) << *timed;
        EXPECT_EQ(timed.error().message, expected);
    }
}

// A device with vendor routines and nothing else: the free functions must reach its answers.
class VendorOnlyDevice final : public Device, public VendorRoutines {
public:
    const DeviceInfo& info() const override { return info_; }
    Language language() const override { return default_language_of("opencl"); }
    Expected<CompileOutcome> compile(const std::string&, const std::vector<std::string>&) override { return none(); }
    Expected<uint32_t> kernel(uint32_t, const std::string&) override { return none(); }
    Expected<KernelAttributes> attributes(uint32_t) override { return none(); }
    void release_module(uint32_t) override {}
    Expected<BufferHandle> allocate(uint64_t) override { return none(); }
    void release(BufferHandle) override {}
    Expected<void> upload(BufferHandle, uint64_t, const void*, uint64_t) override { return none(); }
    Expected<void> download(BufferHandle, uint64_t, void*, uint64_t) override { return none(); }
    Expected<void> copy(BufferHandle, BufferHandle, uint64_t) override { return none(); }
    Expected<void> run(std::span<const Launch>) override { return none(); }
    Expected<double> run_timed(std::span<const Launch>) override { return none(); }
    bool is_poisoned() const override { return false; }

    Expected<std::string> vendor_library(VendorRoutine routine) override {
        return std::string("test library for ") + vendor_routine_name(routine);
    }
    Expected<double> run_vendor_timed(const VendorCall& call) override { return double(call.n); }

private:
    static Error none() { return make_error("not a real device"); }
    DeviceInfo info_;
};

TEST(VendorRoutines, TheFreeFunctionsReachADeviceThatImplementsThem) {
    VendorOnlyDevice vendor_device;
    Device& device = vendor_device;
    EXPECT_EQ(vendor_routines_of(device), static_cast<VendorRoutines*>(&vendor_device));
    auto library = vendor_library(device, VendorRoutine::fft3d_c2c);
    ASSERT_TRUE(library) << library.error().message;
    EXPECT_EQ(*library, "test library for 3-D complex FFT");
    auto seconds = run_vendor_timed(device, VendorCall{VendorRoutine::saxpy, 42});
    ASSERT_TRUE(seconds) << seconds.error().message;
    EXPECT_EQ(*seconds, 42.0);
}

}  // namespace
}  // namespace kevo
