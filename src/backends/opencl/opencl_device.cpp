// OpenclDevice: context and queue lifetime, program compilation, kernels and buffers.
// Launching lives in opencl_run.cpp.
#include "backends/opencl/opencl_device.hpp"

#include <fmt/format.h>

#include <cctype>
#include <chrono>

#include "backends/opencl/cl_errors.hpp"
#include "backends/opencl/stderr_capture.hpp"

namespace kevo::opencl {
namespace {

// -cl-kernel-arg-info keeps the parameters' names and types, so a wrong signature can be named.
std::string build_options(const std::vector<std::string>& defines) {
    std::string options = "-cl-kernel-arg-info";
    for (const auto& define : defines) {
        options += " -D";
        options += define;
    }
    return options;
}

std::string trim_trailing_space(std::string text) {
    while (!text.empty() && std::isspace(static_cast<unsigned char>(text.back()))) text.pop_back();
    return text;
}

std::string arg_info_text(cl_kernel kernel, cl_uint index, cl_kernel_arg_info what, cl_int& status) {
    size_t size = 0;
    status = clGetKernelArgInfo(kernel, index, what, 0, nullptr, &size);
    if (status != CL_SUCCESS) return "";
    std::string text(size, '\0');
    status = clGetKernelArgInfo(kernel, index, what, size, text.data(), nullptr);
    while (!text.empty() && text.back() == '\0') text.pop_back();
    return text;
}

const char* address_space_name(cl_kernel_arg_address_qualifier q) {
    switch (q) {
        case CL_KERNEL_ARG_ADDRESS_GLOBAL: return "global";
        case CL_KERNEL_ARG_ADDRESS_LOCAL: return "local";
        case CL_KERNEL_ARG_ADDRESS_CONSTANT: return "constant";
        default: return "private";
    }
}

std::string build_log(cl_program program, cl_device_id device) {
    size_t size = 0;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS || size == 0)
        return "";
    std::string log(size, '\0');
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, log.data(), nullptr) != CL_SUCCESS) return "";
    // Drop the terminating NUL and the blank lines some drivers append to an empty log.
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n' || log.back() == ' ')) log.pop_back();
    return log;
}

}  // namespace

Expected<std::unique_ptr<Device>> OpenclDevice::open(const DeviceRef& ref, DeviceInfo info) {
    std::unique_ptr<OpenclDevice> dev(new OpenclDevice(ref.device, std::move(info)));
    const cl_context_properties props[] = {CL_CONTEXT_PLATFORM, reinterpret_cast<cl_context_properties>(ref.platform), 0};
    cl_int status = CL_SUCCESS;
    dev->context_ = clCreateContext(props, 1, &ref.device, nullptr, nullptr, &status);
    if (status != CL_SUCCESS)
        return make_error(fmt::format("OpenCL device '{}': clCreateContext failed: {}", dev->info_.name, error_text(status)));
    // clCreateCommandQueue is deprecated in 2.0 but is the 1.2 call, and every driver still has it.
    dev->queue_ = clCreateCommandQueue(dev->context_, ref.device, CL_QUEUE_PROFILING_ENABLE, &status);
    if (status != CL_SUCCESS)
        return make_error(
            fmt::format("OpenCL device '{}': clCreateCommandQueue failed: {}", dev->info_.name, error_text(status)));
    dev->base_align_bytes_ = base_address_alignment_bytes(ref.device);
    return std::unique_ptr<Device>(std::move(dev));
}

OpenclDevice::~OpenclDevice() {
    if (queue_) clFinish(queue_);
    for (auto& [id, buffer] : buffers_) {
        for (auto& [offset, view] : buffer.views) clReleaseMemObject(view);
        clReleaseMemObject(buffer.mem);
    }
    for (auto& [id, entry] : kernels_) clReleaseKernel(entry.kernel);
    for (auto& [id, program] : modules_) clReleaseProgram(program);
    if (queue_) clReleaseCommandQueue(queue_);
    if (context_) clReleaseContext(context_);
}

cl_int OpenclDevice::note(cl_int status) {
    // These mean the queue (or, on NVIDIA, the whole context) is gone; a new process is cheaper
    // than guessing what still works.
    if (status == CL_OUT_OF_RESOURCES || status == CL_INVALID_COMMAND_QUEUE) poisoned_ = true;
    return status;
}

Expected<CompileOutcome> OpenclDevice::compile(const std::string& source, const std::vector<std::string>& defines) {
    const auto start = std::chrono::steady_clock::now();
    const char* text = source.c_str();
    const size_t length = source.size();
    cl_int status = CL_SUCCESS;
    cl_program program = clCreateProgramWithSource(context_, 1, &text, &length, &status);
    if (status != CL_SUCCESS) return make_error(fmt::format("clCreateProgramWithSource failed: {}", error_text(status)));

    const std::string options = build_options(defines);
    StderrCapture compiler_stderr;
    status = clBuildProgram(program, 1, &device_, options.c_str(), nullptr, nullptr);
    const std::string printed = trim_trailing_space(compiler_stderr.finish());
    CompileOutcome outcome;
    outcome.log = build_log(program, device_);
    // What the compiler printed itself (PoCL: "1 error generated.") belongs to this kernel's log.
    if (!printed.empty()) outcome.log += fmt::format("{}the compiler also printed:\n{}", outcome.log.empty() ? "" : "\n", printed);
    outcome.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

    if (status == CL_SUCCESS) {
        const uint32_t id = next_id();
        modules_[id] = program;
        outcome.module = id;
        return outcome;
    }
    clReleaseProgram(program);
    // A candidate that does not build (or whose defines the compiler rejects) is a verdict.
    if (status == CL_BUILD_PROGRAM_FAILURE || status == CL_INVALID_BUILD_OPTIONS) {
        if (status == CL_INVALID_BUILD_OPTIONS)
            outcome.log = fmt::format("invalid build options '{}'{}{}", options, outcome.log.empty() ? "" : "\n", outcome.log);
        else if (outcome.log.empty())
            outcome.log = "the OpenCL compiler failed without a build log";
        return outcome;
    }
    return make_error(fmt::format("clBuildProgram failed: {}{}{}", error_text(note(status)),
                                  outcome.log.empty() ? "" : "\n", outcome.log));
}

Expected<uint32_t> OpenclDevice::kernel(uint32_t module, const std::string& name) {
    auto it = modules_.find(module);
    if (it == modules_.end()) return make_error(fmt::format("unknown OpenCL module handle {}", module));
    cl_int status = CL_SUCCESS;
    cl_kernel kernel = clCreateKernel(it->second, name.c_str(), &status);
    if (status == CL_INVALID_KERNEL_NAME) return make_error(fmt::format("kernel '{}' not found in the program", name));
    if (status != CL_SUCCESS)
        return make_error(fmt::format("clCreateKernel('{}') failed: {}", name, error_text(note(status))));
    const uint32_t id = next_id();
    kernels_[id] = KernelEntry{kernel, name, module};
    return id;
}

Expected<KernelAttributes> OpenclDevice::attributes(uint32_t kernel) {
    auto it = kernels_.find(kernel);
    if (it == kernels_.end()) return make_error(fmt::format("unknown OpenCL kernel handle {}", kernel));
    cl_kernel k = it->second.kernel;
    size_t work_group = 0;
    cl_ulong local = 0, priv = 0;
    cl_int status = clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_WORK_GROUP_SIZE, sizeof work_group, &work_group, nullptr);
    if (status == CL_SUCCESS)
        status = clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, nullptr);
    if (status == CL_SUCCESS)
        status = clGetKernelWorkGroupInfo(k, device_, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv, nullptr);
    if (status != CL_SUCCESS)
        return make_error(fmt::format("clGetKernelWorkGroupInfo('{}') failed: {}", it->second.name, error_text(status)));
    KernelAttributes attrs;
    attrs.registers = -1;  // OpenCL has no query for registers
    attrs.shared_bytes = static_cast<int64_t>(local);
    attrs.local_bytes = static_cast<int64_t>(priv);
    attrs.max_threads = static_cast<unsigned>(work_group);
    return attrs;
}

Expected<KernelParams> OpenclDevice::parameters(uint32_t kernel) {
    auto it = kernels_.find(kernel);
    if (it == kernels_.end()) return make_error(fmt::format("unknown OpenCL kernel handle {}", kernel));
    cl_kernel k = it->second.kernel;
    cl_uint count = 0;
    cl_int status = clGetKernelInfo(k, CL_KERNEL_NUM_ARGS, sizeof count, &count, nullptr);
    if (status != CL_SUCCESS)
        return make_error(fmt::format("clGetKernelInfo('{}', CL_KERNEL_NUM_ARGS) failed: {}", it->second.name, error_text(status)));
    KernelParams params;
    params.known = true;
    params.detailed = true;
    params.params.resize(count);
    // A driver without kernel-arg info answers CL_KERNEL_ARG_INFO_NOT_AVAILABLE: then the count alone.
    for (cl_uint i = 0; i < count && params.detailed; ++i) {
        KernelParam& p = params.params[i];
        cl_kernel_arg_address_qualifier space = 0;
        cl_kernel_arg_type_qualifier qualifier = 0;
        status = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof space, &space, nullptr);
        if (status == CL_SUCCESS) status = clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof qualifier, &qualifier, nullptr);
        if (status == CL_SUCCESS) p.type_name = arg_info_text(k, i, CL_KERNEL_ARG_TYPE_NAME, status);
        if (status == CL_SUCCESS) p.name = arg_info_text(k, i, CL_KERNEL_ARG_NAME, status);
        if (status != CL_SUCCESS) {
            params.detailed = false;
            break;
        }
        p.address_space = address_space_name(space);
        p.is_const = (qualifier & CL_KERNEL_ARG_TYPE_CONST) != 0;
    }
    if (!params.detailed) params.params.assign(count, KernelParam{});
    return params;
}

void OpenclDevice::release_module(uint32_t module) {
    auto it = modules_.find(module);
    if (it == modules_.end()) return;
    // Kernels die with their module, as CUDA functions die with cuModuleUnload.
    for (auto k = kernels_.begin(); k != kernels_.end();) {
        if (k->second.module == module) {
            clReleaseKernel(k->second.kernel);
            k = kernels_.erase(k);
        } else {
            ++k;
        }
    }
    clReleaseProgram(it->second);
    modules_.erase(it);
}

Expected<BufferHandle> OpenclDevice::allocate(uint64_t bytes) {
    cl_int status = CL_SUCCESS;
    cl_mem mem = clCreateBuffer(context_, CL_MEM_READ_WRITE, bytes, nullptr, &status);
    if (status != CL_SUCCESS)
        return make_error(fmt::format("clCreateBuffer({} bytes) failed: {}", bytes, error_text(note(status))));
    const uint32_t id = next_id();
    buffers_[id] = BufferEntry{mem, bytes, {}};
    return BufferHandle{id};
}

void OpenclDevice::release(BufferHandle buffer) {
    auto it = buffers_.find(buffer.id);
    if (it == buffers_.end()) return;
    for (auto& [offset, view] : it->second.views) clReleaseMemObject(view);
    clReleaseMemObject(it->second.mem);
    buffers_.erase(it);
}

Expected<OpenclDevice::BufferEntry*> OpenclDevice::find_buffer(BufferHandle handle, uint64_t offset, uint64_t bytes,
                                                               const char* what) {
    auto it = buffers_.find(handle.id);
    if (it == buffers_.end()) return make_error(fmt::format("{}: unknown OpenCL buffer handle {}", what, handle.id));
    if (offset > it->second.bytes || bytes > it->second.bytes - offset)
        return make_error(fmt::format("{}: {} bytes at offset {} exceed buffer {} of {} bytes", what, bytes, offset,
                                      handle.id, it->second.bytes));
    return &it->second;
}

Expected<void> OpenclDevice::upload(BufferHandle dst, uint64_t offset, const void* src, uint64_t bytes) {
    auto buffer = find_buffer(dst, offset, bytes, "upload");
    if (!buffer) return buffer.error();
    if (bytes == 0) return {};
    cl_int status = clEnqueueWriteBuffer(queue_, (*buffer)->mem, CL_TRUE, offset, bytes, src, 0, nullptr, nullptr);
    if (status != CL_SUCCESS) return make_error(fmt::format("clEnqueueWriteBuffer failed: {}", error_text(note(status))));
    return {};
}

Expected<void> OpenclDevice::download(BufferHandle src, uint64_t offset, void* dst, uint64_t bytes) {
    auto buffer = find_buffer(src, offset, bytes, "download");
    if (!buffer) return buffer.error();
    if (bytes == 0) return {};
    cl_int status = clEnqueueReadBuffer(queue_, (*buffer)->mem, CL_TRUE, offset, bytes, dst, 0, nullptr, nullptr);
    if (status != CL_SUCCESS) return make_error(fmt::format("clEnqueueReadBuffer failed: {}", error_text(note(status))));
    return {};
}

Expected<void> OpenclDevice::copy(BufferHandle dst, BufferHandle src, uint64_t bytes) {
    auto to = find_buffer(dst, 0, bytes, "copy destination");
    if (!to) return to.error();
    auto from = find_buffer(src, 0, bytes, "copy source");
    if (!from) return from.error();
    if (bytes == 0) return {};
    cl_int status = clEnqueueCopyBuffer(queue_, (*from)->mem, (*to)->mem, 0, 0, bytes, 0, nullptr, nullptr);
    if (status == CL_SUCCESS) status = clFinish(queue_);
    if (status != CL_SUCCESS) return make_error(fmt::format("clEnqueueCopyBuffer failed: {}", error_text(note(status))));
    return {};
}

}  // namespace kevo::opencl
