// The narrow interface every compute backend implements (CUDA, OpenCL). Everything above it
// (evaluator, calibration, CLI) speaks only this; vendor headers stay under src/backends/<name>/.
// Vendor library routines are an optional extension a backend may add (backend/vendor_routines.hpp).
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "backend/kernel_language.hpp"
#include "core/expected.hpp"

namespace kevo {

struct Dim3 {
    uint64_t x = 1, y = 1, z = 1;
    uint64_t volume() const { return x * y * z; }
    bool operator==(const Dim3&) const = default;
};

struct DeviceInfo {
    std::string backend;   // "cuda" | "opencl"
    int index = 0;         // position within its backend
    std::string name;      // "NVIDIA H200", "pthread-skylake-avx512-..."
    std::string vendor;
    std::string driver;    // driver version string; part of the calibration cache key
    std::string arch;      // "sm_90" for CUDA; the OpenCL C version for OpenCL
    bool is_cpu = false;
    int compute_units = 0;
    uint64_t global_mem_bytes = 0;
    uint64_t max_alloc_bytes = 0;
    uint64_t l2_bytes = 0;  // last-level cache the L2 flush must exceed
    uint64_t shared_mem_per_block = 0;
    unsigned max_threads_per_block = 0;
    std::array<uint64_t, 3> max_block{0, 0, 0};
    std::array<uint64_t, 3> max_grid{0, 0, 0};
    int clock_mhz = 0;
};

// One kernel compiled ahead of time on the host (a Triton cubin): the task's kernel it implements,
// the entry point's name in the image, the image, and how its compiler requires it launched.
struct KernelImage {
    std::string kernel;
    std::string entry;
    std::string binary;
    unsigned threads_per_block = 0;     // fixed by the compiler (Triton: num_warps x 32); 0: the launch directive's block
    uint64_t dynamic_shared_bytes = 0;  // the compiler's shared memory, passed at launch
    unsigned trailing_null_params = 0;  // parameters after the task's that the launch passes as null (Triton's scratch)
};

// Outcome of a compilation: a module (or images) on success, the compiler's log either way. A
// candidate that does not compile is not an environment error.
struct CompileOutcome {
    std::optional<uint32_t> module;
    std::string log;
    double seconds = 0;
    // A language compiled on the host ahead of time (Triton) yields one image per kernel for the
    // device to load, and what its compiler said of them as JSON (warps, shared memory, hidden
    // parameters); both empty otherwise.
    std::vector<KernelImage> images;
    std::string image_metadata;
    // The language's own static check refused the candidate before anything of it ran: a verdict
    // `rejected` with this reason, not a compile error.
    std::optional<std::string> refused;
    bool compiled() const { return module.has_value() || !images.empty(); }
};

// What the compiler allotted to one kernel; -1 where the backend cannot say.
struct KernelAttributes {
    int registers = -1;
    int64_t shared_bytes = -1;    // static shared (CUDA) / local (OpenCL) memory
    int64_t local_bytes = -1;     // per-thread local / private memory: spills and stack
    unsigned max_threads = 0;     // the most threads per block this kernel can launch with
};

// One parameter of a compiled kernel, as the backend can tell it. OpenCL (with kernel-arg info)
// gives the address space, type and name; CUDA gives only the size in bytes (cuFuncGetParamInfo).
struct KernelParam {
    std::string address_space;  // "global", "local", "constant" or "private"; empty when unknown
    std::string type_name;      // "float*", "uint", "float4*"; empty when unknown
    bool is_const = false;      // const-qualified (OpenCL's CL_KERNEL_ARG_TYPE_CONST)
    std::string name;           // empty when unknown
    uint64_t bytes = 0;         // 0 when unknown
};

struct KernelParams {
    bool known = false;     // false: the backend cannot list them, and nothing is compared
    bool detailed = false;  // address space and type are known (else only the count and sizes)
    std::vector<KernelParam> params;
};

struct BufferHandle {
    uint32_t id = 0;
};

struct KernelArg {
    enum class Kind { buffer, f32, u32, null_pointer };
    Kind kind = Kind::u32;
    BufferHandle buffer{};
    uint64_t offset = 0;  // bytes into the buffer (guard zones sit before it)
    float f32 = 0;
    uint32_t u32 = 0;

    static KernelArg buf(BufferHandle b, uint64_t offset = 0) { return {Kind::buffer, b, offset, 0, 0}; }
    static KernelArg f(float v) { return {Kind::f32, {}, 0, v, 0}; }
    static KernelArg u(uint32_t v) { return {Kind::u32, {}, 0, 0, v}; }
    static KernelArg null() { return {Kind::null_pointer, {}, 0, 0, 0}; }
};

struct Launch {
    uint32_t kernel = 0;  // from Device::kernel
    Dim3 grid;            // blocks (work-groups) per axis
    Dim3 block;           // threads (work-items) per block
    std::vector<KernelArg> args;
    uint64_t shared_bytes = 0;  // dynamic shared memory per block (CUDA; smem= in the launch directive)
};

class Device {
public:
    virtual ~Device() = default;

    virtual const DeviceInfo& info() const = 0;
    // The language this device compiles (its backend's default language).
    virtual Language language() const = 0;

    // `defines` are NAME=VALUE pairs passed as -D. Errors are environment faults only.
    virtual Expected<CompileOutcome> compile(const std::string& source, const std::vector<std::string>& defines) = 0;
    // Compiles for `arch`, an architecture-specific variant of the device's own that the candidate
    // opted into (CUDA sm_90a on an sm_90 device: wgmma, setmaxnreg); resolve_target has checked it.
    virtual Expected<CompileOutcome> compile_for_arch(const std::string& /*source*/,
                                                      const std::vector<std::string>& /*defines*/,
                                                      const std::string& arch) {
        return make_error("this backend has no architecture-specific targets (asked for " + arch + ")");
    }
    // Loads an image compiled ahead of time on the host (CompileOutcome::images) as a module.
    virtual Expected<uint32_t> load_image(const KernelImage& image) {
        return make_error("this backend loads no precompiled kernel images (asked for " + image.kernel + ")");
    }
    // A missing entry point is returned as an error; the caller turns it into a verdict.
    virtual Expected<uint32_t> kernel(uint32_t module, const std::string& name) = 0;
    virtual Expected<KernelAttributes> attributes(uint32_t kernel) = 0;
    // The compiled kernel's parameter list, so that a wrong signature is named before any launch.
    virtual Expected<KernelParams> parameters(uint32_t /*kernel*/) { return KernelParams{}; }
    virtual void release_module(uint32_t module) = 0;

    virtual Expected<BufferHandle> allocate(uint64_t bytes) = 0;
    virtual void release(BufferHandle buffer) = 0;
    virtual Expected<void> upload(BufferHandle dst, uint64_t offset, const void* src, uint64_t bytes) = 0;
    virtual Expected<void> download(BufferHandle src, uint64_t offset, void* dst, uint64_t bytes) = 0;
    // Device-side copy of `bytes` from the start of src to the start of dst; completes before return.
    virtual Expected<void> copy(BufferHandle dst, BufferHandle src, uint64_t bytes) = 0;

    // Submit the launches in order as one unit and wait. A fault inside a kernel is returned as an
    // error whose message names it (illegal address, ...).
    virtual Expected<void> run(std::span<const Launch> launches) = 0;
    // Same, timed on the device: seconds from the start of the first launch to the end of the last.
    virtual Expected<double> run_timed(std::span<const Launch> launches) = 0;
    // The same as one replay of a recorded submission (a CUDA graph): what production launch-bound
    // work runs as, without the host's per-launch cost. A backend with no such record submits the
    // launches back to back and waits once, which is what run_timed does.
    virtual Expected<double> run_timed_replay(std::span<const Launch> launches) { return run_timed(launches); }

    // True after an error that leaves the device context unusable (CUDA sticky errors); the
    // worker process then reports and exits so the parent can start a fresh one.
    virtual bool is_poisoned() const = 0;
};

class Backend {
public:
    virtual ~Backend() = default;
    virtual std::string name() const = 0;
    // The language its devices compile (the registered language this backend is the default of).
    virtual Language language() const = 0;

    // Devices found; an empty list is not an error (ggml's rule). Why none were found is in
    // unavailable_reason().
    virtual std::vector<DeviceInfo> probe() = 0;
    virtual std::string unavailable_reason() const = 0;
    virtual Expected<std::unique_ptr<Device>> open(int index) = 0;

    // Compile without a device (NVRTC can; OpenCL cannot and says so). For CI and --compile-only.
    virtual Expected<CompileOutcome> compile_offline(const std::string& source, const std::vector<std::string>& defines,
                                                     const std::string& arch) = 0;
    virtual std::string default_offline_arch() const = 0;
};

}  // namespace kevo
