// CudaDevice: context, memory, modules and launches through the dlopen'd driver API.
#include "backends/cuda/cuda_device.hpp"

#if KEVO_HAVE_CUDA_HEADERS

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <chrono>
#include <limits>
#include <optional>

#include "backends/cuda/cuda_errors.hpp"
#include "backends/cuda/nvrtc_compile.hpp"
#include "backends/cuda/vendor_libraries.hpp"

namespace kevo::cuda {
namespace {

std::string dims(const Dim3& d) {
    return fmt::format("{}x{}x{}", d.x, d.y, d.z);
}

const char* kind_name(KernelArg::Kind kind) {
    switch (kind) {
        case KernelArg::Kind::buffer:
            return "buffer";
        case KernelArg::Kind::f32:
            return "float";
        case KernelArg::Kind::u32:
            return "uint32";
        case KernelArg::Kind::null_pointer:
            return "null pointer";
    }
    return "?";
}

size_t kind_size(KernelArg::Kind kind) {
    return kind == KernelArg::Kind::buffer || kind == KernelArg::Kind::null_pointer ? sizeof(CUdeviceptr) : 4;
}

}  // namespace

Expected<std::unique_ptr<Device>> CudaDevice::open(const DriverApi& api, DeviceInfo info, int ordinal) {
    std::unique_ptr<CudaDevice> device(new CudaDevice(api, std::move(info)));
    if (auto ok = device->init(ordinal); !ok) return ok.error();
    return std::unique_ptr<Device>(std::move(device));
}

Expected<void> CudaDevice::init(int ordinal) {
    const std::string where = fmt::format("opening CUDA device {} ({})", info_.index, info_.name);
    if (auto ok = check(api_.cuDeviceGet(&device_, ordinal), where + ": cuDeviceGet"); !ok) return ok;
    CUcontext context = nullptr;
    if (auto ok = check(api_.cuDevicePrimaryCtxRetain(&context, device_), where + ": cuDevicePrimaryCtxRetain"); !ok)
        return ok;
    context_ = context;
    if (auto ok = check(api_.cuCtxSetCurrent(context_), where + ": cuCtxSetCurrent"); !ok) return ok;
    // Non-blocking: the legacy default stream, which other code in the process may use, never
    // serialises with our work.
    if (auto ok = check(api_.cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), where + ": cuStreamCreate"); !ok)
        return ok;
    if (auto ok = check(api_.cuEventCreate(&start_, CU_EVENT_DEFAULT), where + ": cuEventCreate"); !ok) return ok;
    if (auto ok = check(api_.cuEventCreate(&stop_, CU_EVENT_DEFAULT), where + ": cuEventCreate"); !ok) return ok;
    return {};
}

CudaDevice::~CudaDevice() {
    if (!context_) return;
    // Failures are ignored throughout: there is nobody left to tell, and after a sticky error every
    // call fails harmlessly. Releasing the primary context frees whatever the calls could not.
    api_.cuCtxSetCurrent(context_);
    if (!poisoned_) {
        if (stream_) api_.cuStreamSynchronize(stream_);
        release_vendor_state();
        staging_.release();
        for (auto& [id, buffer] : buffers_) api_.cuMemFree(buffer.pointer);
        for (auto& [id, module] : modules_) api_.cuModuleUnload(module);
        if (start_) api_.cuEventDestroy(start_);
        if (stop_) api_.cuEventDestroy(stop_);
        if (stream_) api_.cuStreamDestroy(stream_);
    }
    api_.cuDevicePrimaryCtxRelease(device_);
}

Error CudaDevice::fail(CUresult result, std::string_view what) {
    std::string message = fmt::format("{}: {}", what, describe(api_, result));
    if (is_sticky(result) && !poisoned_) {
        poisoned_ = true;
        poison_cause_ = message;
        message += " (the CUDA context is now unusable; the process must restart)";
    }
    return make_error(std::move(message));
}

Expected<void> CudaDevice::check(CUresult result, std::string_view what) {
    if (result == CUDA_SUCCESS) return {};
    return fail(result, what);
}

Expected<void> CudaDevice::enter() {
    if (poisoned_)
        return make_error(
            fmt::format("the CUDA context of {} is unusable after an earlier error ({})", info_.name, poison_cause_));
    return check(api_.cuCtxSetCurrent(context_), "cuCtxSetCurrent");
}

// ---- modules and kernels ----

Expected<CompileOutcome> CudaDevice::compile(const std::string& source, const std::vector<std::string>& defines) {
    return compile_for_arch(source, defines, info_.arch);
}

Expected<CompileOutcome> CudaDevice::compile_for_arch(const std::string& source, const std::vector<std::string>& defines,
                                                      const std::string& arch) {
    auto compiled = nvrtc_compile(source, defines, arch);
    if (!compiled) return compiled.error();
    CompileOutcome outcome;
    outcome.log = std::move(compiled->log);
    outcome.seconds = compiled->seconds;
    if (!compiled->cubin) return outcome;

    auto start = std::chrono::steady_clock::now();
    auto module = load_module(compiled->cubin->data());
    if (!module) return module.error();
    outcome.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    outcome.module = *module;
    return outcome;
}

Expected<uint32_t> CudaDevice::load_module(const void* image) {
    if (auto ok = enter(); !ok) return ok.error();
    CUmodule module = nullptr;
    if (auto ok = check(api_.cuModuleLoadData(&module, image), "loading the compiled module (cuModuleLoadData)"); !ok)
        return ok.error();
    uint32_t id = next_id_++;
    modules_.emplace(id, module);
    return id;
}

Expected<uint32_t> CudaDevice::load_image(const KernelImage& image) { return load_module(image.binary.data()); }

Expected<uint32_t> CudaDevice::kernel(uint32_t module, const std::string& name) {
    auto it = modules_.find(module);
    if (it == modules_.end()) return make_error(fmt::format("unknown CUDA module id {}", module));
    if (auto ok = enter(); !ok) return ok.error();

    KernelEntry entry;
    entry.module = module;
    entry.name = name;
    CUresult r = api_.cuModuleGetFunction(&entry.function, it->second, name.c_str());
    if (r == CUDA_ERROR_NOT_FOUND) return make_error(fmt::format("kernel '{}' not found in the module", name));
    if (auto ok = check(r, fmt::format("looking up kernel '{}' (cuModuleGetFunction)", name)); !ok) return ok.error();

    int max_threads = 0;
    r = api_.cuFuncGetAttribute(&max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, entry.function);
    if (auto ok = check(r, fmt::format("reading the attributes of kernel '{}'", name)); !ok) return ok.error();
    entry.max_threads = static_cast<unsigned>(max_threads);
    int static_shared = 0;
    r = api_.cuFuncGetAttribute(&static_shared, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, entry.function);
    if (auto ok = check(r, fmt::format("reading the attributes of kernel '{}'", name)); !ok) return ok.error();
    entry.static_shared = static_cast<uint64_t>(std::max(static_shared, 0));

    // The parameter list lets a launch with the wrong arguments be refused instead of letting the
    // kernel read garbage. cuFuncGetParamInfo answers INVALID_VALUE one past the last parameter.
    if (api_.cuFuncGetParamInfo) {
        entry.params_known = true;
        for (size_t i = 0;; ++i) {
            size_t offset = 0, size = 0;
            r = api_.cuFuncGetParamInfo(entry.function, i, &offset, &size);
            if (r == CUDA_ERROR_INVALID_VALUE) break;
            if (r != CUDA_SUCCESS) {
                if (is_sticky(r)) return fail(r, fmt::format("listing the parameters of kernel '{}'", name));
                entry.params_known = false;
                entry.param_sizes.clear();
                break;
            }
            entry.param_sizes.push_back(size);
        }
    }
    uint32_t id = next_id_++;
    kernels_.emplace(id, std::move(entry));
    return id;
}

Expected<KernelAttributes> CudaDevice::attributes(uint32_t kernel) {
    auto it = kernels_.find(kernel);
    if (it == kernels_.end()) return make_error(fmt::format("unknown CUDA kernel id {}", kernel));
    if (auto ok = enter(); !ok) return ok.error();
    const KernelEntry& entry = it->second;
    auto read = [&](CUfunction_attribute which, int& value) {
        return check(api_.cuFuncGetAttribute(&value, which, entry.function),
                     fmt::format("reading the attributes of kernel '{}'", entry.name));
    };
    int registers = 0, shared = 0, local = 0, max_threads = 0;
    for (auto [which, value] :
         {std::pair{CU_FUNC_ATTRIBUTE_NUM_REGS, &registers}, std::pair{CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, &shared},
          std::pair{CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES, &local},
          std::pair{CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, &max_threads}})
        if (auto ok = read(which, *value); !ok) return ok.error();
    KernelAttributes attributes;
    attributes.registers = registers;
    attributes.shared_bytes = shared;
    attributes.local_bytes = local;
    attributes.max_threads = static_cast<unsigned>(max_threads);
    return attributes;
}

// Sizes only: CUDA keeps no parameter types; cuFuncGetParamInfo (CUDA 12.4+) lists offsets and sizes.
Expected<KernelParams> CudaDevice::parameters(uint32_t kernel) {
    auto it = kernels_.find(kernel);
    if (it == kernels_.end()) return make_error(fmt::format("unknown CUDA kernel id {}", kernel));
    KernelParams params;
    params.known = it->second.params_known;
    for (size_t bytes : it->second.param_sizes) {
        KernelParam p;
        p.bytes = bytes;
        params.params.push_back(p);
    }
    return params;
}

void CudaDevice::release_module(uint32_t module) {
    auto it = modules_.find(module);
    if (it == modules_.end()) return;
    std::erase_if(kernels_, [&](const auto& kv) { return kv.second.module == module; });
    if (!poisoned_ && api_.cuCtxSetCurrent(context_) == CUDA_SUCCESS) {
        // Queued work may still use the module; it must finish before the code goes away.
        api_.cuStreamSynchronize(stream_);
        api_.cuModuleUnload(it->second);
    }
    modules_.erase(it);
}

// ---- buffers ----

Expected<BufferHandle> CudaDevice::allocate(uint64_t bytes) {
    if (auto ok = enter(); !ok) return ok.error();
    CUdeviceptr pointer = 0;
    // cuMemAlloc refuses zero bytes; a one-byte allocation keeps an empty buffer a valid handle.
    CUresult r = api_.cuMemAlloc(&pointer, std::max<uint64_t>(bytes, 1));
    if (r != CUDA_SUCCESS)
        return fail(r, fmt::format("cannot allocate {} bytes on {} (cuMemAlloc)", bytes, info_.name));
    uint32_t id = next_id_++;
    buffers_.emplace(id, BufferEntry{pointer, bytes});
    return BufferHandle{id};
}

void CudaDevice::release(BufferHandle buffer) {
    auto it = buffers_.find(buffer.id);
    if (it == buffers_.end()) return;
    if (!poisoned_ && api_.cuCtxSetCurrent(context_) == CUDA_SUCCESS) api_.cuMemFree(it->second.pointer);
    buffers_.erase(it);
}

Expected<const CudaDevice::BufferEntry*> CudaDevice::find_buffer(BufferHandle handle, std::string_view role) {
    auto it = buffers_.find(handle.id);
    if (it == buffers_.end()) return make_error(fmt::format("unknown CUDA buffer id {} ({})", handle.id, role));
    return &it->second;
}

Expected<void> CudaDevice::check_range(const BufferEntry& buffer, uint64_t offset, uint64_t bytes,
                                       std::string_view role) {
    if (offset > buffer.bytes || bytes > buffer.bytes - offset)
        return make_error(fmt::format("{} of {} bytes at offset {} overruns a buffer of {} bytes", role, bytes, offset,
                                      buffer.bytes));
    return {};
}

Expected<void> CudaDevice::staged(CUresult result, const char*& call, std::string_view direction, uint64_t bytes) {
    if (result == CUDA_SUCCESS) return {};
    Error error = fail(result, fmt::format("{} of {} bytes through pinned staging ({})", direction, bytes, call));
    drain();  // no copy may still be under way into or out of the staging buffers
    return error;
}

// The copies go through our stream and are waited for there: a plain cuMemcpyHtoD runs on the legacy
// default stream, which does not order with a non-blocking stream, and may return before a pageable
// upload has reached the device.
Expected<void> CudaDevice::upload(BufferHandle dst, uint64_t offset, const void* src, uint64_t bytes) {
    auto buffer = find_buffer(dst, "upload");
    if (!buffer) return buffer.error();
    if (auto ok = check_range(**buffer, offset, bytes, "upload"); !ok) return ok;
    if (bytes == 0) return {};
    if (auto ok = enter(); !ok) return ok;
    if (PinnedStaging::wanted(bytes)) {
        const char* call = "";
        return staged(staging_.upload(stream_, (*buffer)->pointer + offset, src, bytes, call), call, "upload", bytes);
    }
    if (auto ok = check(api_.cuMemcpyHtoDAsync((*buffer)->pointer + offset, src, bytes, stream_),
                        fmt::format("upload of {} bytes (cuMemcpyHtoDAsync)", bytes));
        !ok)
        return ok;
    return check(api_.cuStreamSynchronize(stream_), fmt::format("upload of {} bytes (cuStreamSynchronize)", bytes));
}

Expected<void> CudaDevice::download(BufferHandle src, uint64_t offset, void* dst, uint64_t bytes) {
    auto buffer = find_buffer(src, "download");
    if (!buffer) return buffer.error();
    if (auto ok = check_range(**buffer, offset, bytes, "download"); !ok) return ok;
    if (bytes == 0) return {};
    if (auto ok = enter(); !ok) return ok;
    if (PinnedStaging::wanted(bytes)) {
        const char* call = "";
        return staged(staging_.download(stream_, (*buffer)->pointer + offset, dst, bytes, call), call, "download",
                      bytes);
    }
    if (auto ok = check(api_.cuMemcpyDtoHAsync(dst, (*buffer)->pointer + offset, bytes, stream_),
                        fmt::format("download of {} bytes (cuMemcpyDtoHAsync)", bytes));
        !ok)
        return ok;
    return check(api_.cuStreamSynchronize(stream_), fmt::format("download of {} bytes (cuStreamSynchronize)", bytes));
}

Expected<void> CudaDevice::copy(BufferHandle dst, BufferHandle src, uint64_t bytes) {
    auto to = find_buffer(dst, "copy destination");
    if (!to) return to.error();
    auto from = find_buffer(src, "copy source");
    if (!from) return from.error();
    if (auto ok = check_range(**to, 0, bytes, "copy into the destination"); !ok) return ok;
    if (auto ok = check_range(**from, 0, bytes, "copy from the source"); !ok) return ok;
    if (bytes == 0) return {};
    if (auto ok = enter(); !ok) return ok;
    if (auto ok = check(api_.cuMemcpyDtoDAsync((*to)->pointer, (*from)->pointer, bytes, stream_),
                        fmt::format("device copy of {} bytes (cuMemcpyDtoDAsync)", bytes));
        !ok)
        return ok;
    return check(api_.cuStreamSynchronize(stream_),
                 fmt::format("device copy of {} bytes (cuStreamSynchronize)", bytes));
}

// ---- launches ----

std::string CudaDevice::describe_launch(std::span<const Launch> launches, size_t index) const {
    const Launch& launch = launches[index];
    auto it = kernels_.find(launch.kernel);
    std::string name =
        it == kernels_.end() ? fmt::format("id {}", launch.kernel) : fmt::format("'{}'", it->second.name);
    return fmt::format("launch {} of {} (kernel {}, grid {}, block {}{})", index + 1, launches.size(), name,
                       dims(launch.grid), dims(launch.block),
                       launch.shared_bytes ? fmt::format(", {} bytes dynamic shared", launch.shared_bytes) : "");
}

// A fault in a timed run surfaces only at the final wait, so it names every kernel that could have caused it.
std::string CudaDevice::describe_batch(std::span<const Launch> launches) const {
    std::vector<std::string> names;
    for (const Launch& launch : launches) {
        auto it = kernels_.find(launch.kernel);
        std::string name =
            it == kernels_.end() ? fmt::format("id {}", launch.kernel) : fmt::format("'{}'", it->second.name);
        if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(std::move(name));
    }
    return fmt::format("one of launches 1 to {} (kernel{} {}; a timed run waits only at its end)", launches.size(),
                       names.size() == 1 ? "" : "s", fmt::join(names, ", "));
}

Expected<CudaDevice::LaunchParams> CudaDevice::prepare(std::span<const Launch> launches, size_t index) {
    const Launch& launch = launches[index];
    auto refuse = [&](const std::string& why) {
        return make_error(fmt::format("{}: {}", describe_launch(launches, index), why));
    };
    auto it = kernels_.find(launch.kernel);
    if (it == kernels_.end()) return refuse("unknown kernel id");
    const KernelEntry& kernel = it->second;

    if (launch.block.volume() == 0 || launch.grid.volume() == 0) return refuse("empty grid or block");
    const uint64_t block[3] = {launch.block.x, launch.block.y, launch.block.z};
    const uint64_t grid[3] = {launch.grid.x, launch.grid.y, launch.grid.z};
    const char* axis = "xyz";
    for (int a = 0; a < 3; ++a) {
        if (block[a] > info_.max_block[a])
            return refuse(
                fmt::format("block.{} = {} exceeds the device limit {}", axis[a], block[a], info_.max_block[a]));
        if (grid[a] > info_.max_grid[a])
            return refuse(fmt::format("grid.{} = {} exceeds the device limit {}", axis[a], grid[a], info_.max_grid[a]));
    }
    unsigned limit = std::min(kernel.max_threads, info_.max_threads_per_block);
    if (launch.block.volume() > limit)
        return refuse(fmt::format("{} threads per block exceed the {} this kernel can launch with",
                                  launch.block.volume(), limit));

    // The evaluator has refused this already (validate_geometry); a second line for other callers.
    if (launch.shared_bytes > 0 && kernel.static_shared + launch.shared_bytes > info_.shared_mem_per_block)
        return refuse(fmt::format("{} bytes of dynamic shared memory plus the kernel's {} static bytes exceed the "
                                  "device's {} bytes per block", launch.shared_bytes, kernel.static_shared,
                                  info_.shared_mem_per_block));

    if (kernel.params_known) {
        if (kernel.param_sizes.size() != launch.args.size())
            return refuse(fmt::format("the kernel takes {} parameters but {} arguments were given",
                                      kernel.param_sizes.size(), launch.args.size()));
        for (size_t i = 0; i < launch.args.size(); ++i)
            if (kernel.param_sizes[i] != kind_size(launch.args[i].kind))
                return refuse(fmt::format("parameter {} is {} bytes wide but the argument is a {} ({} bytes)", i + 1,
                                          kernel.param_sizes[i], kind_name(launch.args[i].kind),
                                          kind_size(launch.args[i].kind)));
    }

    LaunchParams params;
    params.slots.resize(launch.args.size());
    params.pointers.resize(launch.args.size());
    for (size_t i = 0; i < launch.args.size(); ++i) {
        const KernelArg& arg = launch.args[i];
        auto& slot = params.slots[i];
        switch (arg.kind) {
            case KernelArg::Kind::buffer: {
                auto buffer = buffers_.find(arg.buffer.id);
                if (buffer == buffers_.end())
                    return refuse(fmt::format("argument {} names unknown buffer id {}", i + 1, arg.buffer.id));
                if (arg.offset > buffer->second.bytes)
                    return refuse(fmt::format("argument {} offset {} lies beyond its buffer of {} bytes", i + 1,
                                              arg.offset, buffer->second.bytes));
                slot.pointer = buffer->second.pointer + arg.offset;
                params.pointers[i] = &slot.pointer;
                break;
            }
            case KernelArg::Kind::f32:
                slot.f32 = arg.f32;
                params.pointers[i] = &slot.f32;
                break;
            case KernelArg::Kind::u32:
                slot.u32 = arg.u32;
                params.pointers[i] = &slot.u32;
                break;
            case KernelArg::Kind::null_pointer:
                slot.pointer = 0;
                params.pointers[i] = &slot.pointer;
                break;
        }
    }
    return params;
}

Expected<void> CudaDevice::submit(std::span<const Launch> launches, size_t index) {
    auto params = prepare(launches, index);
    if (!params) return params.error();
    const Launch& launch = launches[index];
    KernelEntry& kernel = kernels_.at(launch.kernel);
    CUfunction function = kernel.function;
    // Above 48 KB a kernel gets dynamic shared memory only once its limit is raised; once per kernel.
    if (launch.shared_bytes > kernel.dynamic_shared_set) {
        CUresult set = api_.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                               static_cast<int>(launch.shared_bytes));
        if (auto ok = check(set, describe_launch(launches, index) + ": raising the dynamic shared memory limit to " +
                                     std::to_string(launch.shared_bytes) + " bytes (cuFuncSetAttribute)");
            !ok)
            return ok;
        kernel.dynamic_shared_set = launch.shared_bytes;
    }
    // cuLaunchKernel copies the argument values before it returns, so `params` may die after it.
    CUresult r =
        api_.cuLaunchKernel(function, static_cast<unsigned>(launch.grid.x), static_cast<unsigned>(launch.grid.y),
                            static_cast<unsigned>(launch.grid.z), static_cast<unsigned>(launch.block.x),
                            static_cast<unsigned>(launch.block.y), static_cast<unsigned>(launch.block.z),
                            static_cast<unsigned>(launch.shared_bytes), stream_,
                            params->pointers.empty() ? nullptr : params->pointers.data(), nullptr);
    return check(r, describe_launch(launches, index));
}

void CudaDevice::drain() {
    if (poisoned_) return;
    if (CUresult r = api_.cuStreamSynchronize(stream_); r != CUDA_SUCCESS) (void)fail(r, "draining the stream");
}

Expected<void> CudaDevice::run(std::span<const Launch> launches) {
    if (auto ok = enter(); !ok) return ok;
    // Waiting after each launch costs a few microseconds apiece and pins a fault (which CUDA reports
    // asynchronously) on the launch that caused it. Timed runs do not do this.
    for (size_t i = 0; i < launches.size(); ++i) {
        if (auto ok = submit(launches, i); !ok) {
            drain();
            return ok;
        }
        if (auto ok = check(api_.cuStreamSynchronize(stream_), describe_launch(launches, i)); !ok) return ok;
    }
    return {};
}

Expected<double> CudaDevice::time_on_stream(std::span<const Launch> launches, const std::function<Expected<void>()>& queue) {
    if (auto ok = check(api_.cuEventRecord(start_, stream_), "recording the start event"); !ok) return ok.error();
    if (auto ok = queue(); !ok) {
        drain();
        return ok.error();
    }
    if (auto ok = check(api_.cuEventRecord(stop_, stream_), "recording the stop event"); !ok) {
        drain();
        return ok.error();
    }
    if (CUresult r = api_.cuStreamSynchronize(stream_); r != CUDA_SUCCESS) {
        return fail(r, launches.size() == 1 ? describe_launch(launches, 0) : describe_batch(launches));
    }
    float milliseconds = 0;
    if (auto ok = check(api_.cuEventElapsedTime(&milliseconds, start_, stop_), "reading the timing events"); !ok)
        return ok.error();
    return static_cast<double>(milliseconds) * 1e-3;
}

Expected<double> CudaDevice::run_timed(std::span<const Launch> launches) {
    if (auto ok = enter(); !ok) return ok.error();
    return time_on_stream(launches, [&]() -> Expected<void> {
        for (size_t i = 0; i < launches.size(); ++i)
            if (auto ok = submit(launches, i); !ok) return ok;
        return {};
    });
}

Expected<CUgraphExec> CudaDevice::capture_graph(std::span<const Launch> launches) {
    if (auto ok = check(api_.cuStreamBeginCapture(stream_, CU_STREAM_CAPTURE_MODE_THREAD_LOCAL), "beginning a graph capture");
        !ok)
        return ok.error();
    // A launch refused while capturing still ends the capture, so that the stream can be used again.
    std::optional<Error> refused;
    for (size_t i = 0; i < launches.size() && !refused; ++i)
        if (auto ok = submit(launches, i); !ok) refused = ok.error();
    CUgraph graph = nullptr;
    const CUresult ended = api_.cuStreamEndCapture(stream_, &graph);
    if (refused) {
        if (graph) api_.cuGraphDestroy(graph);
        return *refused;
    }
    if (auto ok = check(ended, "ending the graph capture of " + describe_batch(launches)); !ok) return ok.error();
    CUgraphExec exec = nullptr;
    const CUresult made = api_.cuGraphInstantiateWithFlags(&exec, graph, 0);
    api_.cuGraphDestroy(graph);
    if (auto ok = check(made, "instantiating the graph of " + describe_batch(launches)); !ok) return ok.error();
    // Uploaded before the timing, so that the timed launch is a replay, as in a serving loop.
    if (auto ok = check(api_.cuGraphUpload(exec, stream_), "uploading the graph"); !ok) {
        api_.cuGraphExecDestroy(exec);
        return ok.error();
    }
    return exec;
}

Expected<double> CudaDevice::run_timed_replay(std::span<const Launch> launches) {
    if (auto ok = enter(); !ok) return ok.error();
    auto exec = capture_graph(launches);
    if (!exec) return exec.error();
    auto seconds = time_on_stream(launches, [&] { return check(api_.cuGraphLaunch(*exec, stream_), "launching the graph"); });
    if (!poisoned_) api_.cuGraphExecDestroy(*exec);
    return seconds;
}

Expected<std::string> CudaDevice::vendor_library(VendorRoutine routine) {
    std::string why;
    if (routine == VendorRoutine::fft3d_c2c) {
        if (auto* fft = load_cufft(why)) return fft->label;
    } else if (is_gemm(routine)) {
        if (auto* lt = load_cublaslt(why)) return lt->label;
    } else if (auto* blas = load_cublas(why)) {
        return blas->label;
    }
    return make_error(why);
}

Expected<void> CudaDevice::submit_vendor(const VendorCall& call) {
    std::string why;
    auto x = find_buffer(call.in, "vendor input");
    if (!x) return x.error();
    auto y = find_buffer(call.out, "vendor output");
    if (!y) return y.error();
    if (is_gemm(call.routine)) {
        auto b = find_buffer(call.in_b, "vendor input B");
        if (!b) return b.error();
        const GemmDims dims = gemm_dims(call);
        const uint64_t a_bytes = gemm_a_bytes(call.routine, dims), b_bytes = gemm_b_bytes(call.routine, dims),
                       d_bytes = gemm_output_bytes(call.routine, dims);
        if ((*x)->bytes < a_bytes || (*b)->bytes < b_bytes || (*y)->bytes < d_bytes)
            return make_error(fmt::format("{} {}x{}x{}: the buffers hold fewer than {} (A), {} (B) and {} (D) bytes",
                                          vendor_routine_name(call.routine), dims.m, dims.n, dims.k, a_bytes, b_bytes,
                                          d_bytes));
        CUdeviceptr scale_a = 0, scale_b = 0;
        if (call.routine == VendorRoutine::gemm_fp8_block) {
            auto sa = find_buffer(call.scale_a, "vendor scales of A");
            if (!sa) return sa.error();
            auto sb = find_buffer(call.scale_b, "vendor scales of B");
            if (!sb) return sb.error();
            const BlockScaleCounts counts = gemm_fp8_block_scale_counts(dims);
            if ((*sa)->bytes < counts.a * 4 || (*sb)->bytes < counts.b * 4)
                return make_error(fmt::format("{}: the scale buffers hold fewer than {} (A) and {} (B) floats",
                                              vendor_routine_name(call.routine), counts.a, counts.b));
            scale_a = (*sa)->pointer;
            scale_b = (*sb)->pointer;
        }
        return lt_gemm_.enqueue(call.routine, dims, (*x)->pointer, (*b)->pointer, (*y)->pointer, scale_a, scale_b, stream_);
    }
    if (call.routine == VendorRoutine::fft3d_c2c) {
        const CufftApi* fft = load_cufft(why);
        if (!fft) return make_error(why);
        const uint64_t bytes = call.n * call.n * call.n * 8;
        if ((*x)->bytes < bytes || (*y)->bytes < bytes)
            return make_error(fmt::format("cuFFT {}^3: the buffers hold fewer than {} bytes", call.n, bytes));
        auto plan = fft_plans_.find(call.n);
        if (plan == fft_plans_.end()) {
            CufftApi::Handle handle = 0;
            const int n = static_cast<int>(call.n);
            if (int r = fft->cufftPlan3d(&handle, n, n, n, CufftApi::kC2C); r != 0)
                return make_error(fmt::format("cufftPlan3d({0}, {0}, {0}, C2C) failed with cufftResult {1}", n, r));
            if (int r = fft->cufftSetStream(handle, stream_); r != 0) {
                fft->cufftDestroy(handle);
                return make_error(fmt::format("cufftSetStream failed with cufftResult {}", r));
            }
            plan = fft_plans_.emplace(call.n, handle).first;
        }
        void* in = reinterpret_cast<void*>(static_cast<uintptr_t>((*x)->pointer));
        void* out = reinterpret_cast<void*>(static_cast<uintptr_t>((*y)->pointer));
        if (int r = fft->cufftExecC2C(plan->second, in, out, CufftApi::kForward); r != 0)
            return make_error(fmt::format("cufftExecC2C failed with cufftResult {}", r));
        return {};
    }
    const CublasApi* blas = load_cublas(why);
    if (!blas) return make_error(why);
    if (call.n > static_cast<uint64_t>(std::numeric_limits<int>::max()) || (*x)->bytes < call.n * 4 || (*y)->bytes < call.n * 4)
        return make_error(fmt::format("cuBLAS saxpy: n = {} does not fit the buffers or an int", call.n));
    if (!cublas_) {
        if (int r = blas->cublasCreate_v2(&cublas_); r != 0) {
            cublas_ = nullptr;
            return make_error(fmt::format("cublasCreate failed with cublasStatus {}", r));
        }
        if (int r = blas->cublasSetStream_v2(cublas_, stream_); r != 0)
            return make_error(fmt::format("cublasSetStream failed with cublasStatus {}", r));
    }
    auto* xp = reinterpret_cast<const float*>(static_cast<uintptr_t>((*x)->pointer));
    auto* yp = reinterpret_cast<float*>(static_cast<uintptr_t>((*y)->pointer));
    if (int r = blas->cublasSaxpy_v2(cublas_, static_cast<int>(call.n), &call.alpha, xp, 1, yp, 1); r != 0)
        return make_error(fmt::format("cublasSaxpy failed with cublasStatus {}", r));
    return {};
}

Expected<double> CudaDevice::run_vendor_timed(const VendorCall& call) {
    if (auto ok = enter(); !ok) return ok.error();
    if (auto ok = check(api_.cuEventRecord(start_, stream_), "recording the start event"); !ok) return ok.error();
    if (auto ok = submit_vendor(call); !ok) {
        drain();
        return ok.error();
    }
    if (auto ok = check(api_.cuEventRecord(stop_, stream_), "recording the stop event"); !ok) {
        drain();
        return ok.error();
    }
    if (CUresult r = api_.cuStreamSynchronize(stream_); r != CUDA_SUCCESS)
        return fail(r, fmt::format("the vendor {} call", vendor_routine_name(call.routine)));
    float milliseconds = 0;
    if (auto ok = check(api_.cuEventElapsedTime(&milliseconds, start_, stop_), "reading the timing events"); !ok)
        return ok.error();
    return static_cast<double>(milliseconds) * 1e-3;
}

void CudaDevice::release_vendor_state() {
    std::string why;
    if (const CufftApi* fft = fft_plans_.empty() ? nullptr : load_cufft(why))
        for (auto& [n, plan] : fft_plans_) fft->cufftDestroy(plan);
    fft_plans_.clear();
    if (const CublasApi* blas = cublas_ ? load_cublas(why) : nullptr) blas->cublasDestroy_v2(cublas_);
    cublas_ = nullptr;
    lt_gemm_.release();
}

}  // namespace kevo::cuda

#endif
