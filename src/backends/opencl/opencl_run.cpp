// OpenclDevice: submitting a sequence of launches to the in-order queue, waiting for it, finding
// which launch failed, and timing the sequence with profiling events.
#include <fmt/format.h>

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/opencl/cl_errors.hpp"
#include "backends/opencl/opencl_device.hpp"

namespace kevo::opencl {
namespace {

// Owns the events of one submission so that every exit path releases them.
class EventList {
public:
    EventList() = default;
    EventList(const EventList&) = delete;
    EventList& operator=(const EventList&) = delete;
    ~EventList() {
        for (cl_event e : events_) clReleaseEvent(e);
    }
    void push(cl_event e) { events_.push_back(e); }
    const std::vector<cl_event>& get() const { return events_; }
    std::vector<cl_event> take() { return std::exchange(events_, {}); }

private:
    std::vector<cl_event> events_;
};

std::string launch_label(size_t index, const std::string& kernel) {
    return fmt::format("launch {} (kernel '{}')", index, kernel);
}

std::string geometry(const Launch& launch) {
    return fmt::format("grid {}x{}x{}, block {}x{}x{}", launch.grid.x, launch.grid.y, launch.grid.z, launch.block.x,
                       launch.block.y, launch.block.z);
}

// The fewest dimensions that cover every axis with more than one work-item or work-group.
cl_uint work_dim(const Launch& launch) {
    if (launch.grid.z != 1 || launch.block.z != 1) return 3;
    if (launch.grid.y != 1 || launch.block.y != 1) return 2;
    return 1;
}

}  // namespace

Expected<cl_mem> OpenclDevice::buffer_arg(const KernelArg& arg) {
    auto it = buffers_.find(arg.buffer.id);
    if (it == buffers_.end()) return make_error(fmt::format("unknown OpenCL buffer handle {}", arg.buffer.id));
    BufferEntry& buffer = it->second;
    if (arg.offset == 0) return buffer.mem;
    if (auto view = buffer.views.find(arg.offset); view != buffer.views.end()) return view->second;

    if (arg.offset >= buffer.bytes)
        return make_error(fmt::format("buffer offset {} is not inside buffer {} of {} bytes", arg.offset, arg.buffer.id,
                                      buffer.bytes));
    // OpenCL has no pointer arithmetic on cl_mem; an offset argument must be a sub-buffer, and a
    // sub-buffer must start on the device's base address alignment.
    if (arg.offset % base_align_bytes_ != 0)
        return make_error(fmt::format("buffer offset {} is not a multiple of the device's base address alignment "
                                      "(CL_DEVICE_MEM_BASE_ADDR_ALIGN = {} bytes)",
                                      arg.offset, base_align_bytes_));
    const cl_buffer_region region{arg.offset, buffer.bytes - arg.offset};
    cl_int status = CL_SUCCESS;
    cl_mem view = clCreateSubBuffer(buffer.mem, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &status);
    if (status != CL_SUCCESS)
        return make_error(fmt::format("clCreateSubBuffer(offset {}) failed: {}", arg.offset, error_text(note(status))));
    buffer.views[arg.offset] = view;
    return view;
}

Expected<void> OpenclDevice::set_args(const KernelEntry& kernel, const Launch& launch) {
    for (size_t i = 0; i < launch.args.size(); ++i) {
        const KernelArg& arg = launch.args[i];
        const auto index = static_cast<cl_uint>(i);
        cl_int status = CL_SUCCESS;
        switch (arg.kind) {
            case KernelArg::Kind::buffer: {
                auto mem = buffer_arg(arg);
                if (!mem) return make_error(fmt::format("argument {}: {}", i, mem.error().message));
                cl_mem value = *mem;
                status = clSetKernelArg(kernel.kernel, index, sizeof value, &value);
                break;
            }
            case KernelArg::Kind::f32: {
                const cl_float value = arg.f32;
                status = clSetKernelArg(kernel.kernel, index, sizeof value, &value);
                break;
            }
            case KernelArg::Kind::u32: {
                const cl_uint value = arg.u32;
                status = clSetKernelArg(kernel.kernel, index, sizeof value, &value);
                break;
            }
            case KernelArg::Kind::null_pointer:
                return make_error(fmt::format("argument {}: OpenCL kernels take no null pointer arguments", i));
        }
        if (status != CL_SUCCESS)
            return make_error(fmt::format("argument {}: clSetKernelArg failed: {}", i, error_text(note(status))));
    }
    return {};
}

Expected<std::vector<cl_event>> OpenclDevice::execute(std::span<const Launch> launches) {
    EventList events;
    std::vector<const KernelEntry*> names;  // for naming a launch that faults after submission
    for (size_t i = 0; i < launches.size(); ++i) {
        const Launch& launch = launches[i];
        auto it = kernels_.find(launch.kernel);
        if (it == kernels_.end()) {
            clFinish(queue_);  // let earlier launches drain before their events are released
            return make_error(fmt::format("launch {}: unknown OpenCL kernel handle {}", i, launch.kernel));
        }
        const KernelEntry& kernel = it->second;
        names.push_back(&kernel);
        if (launch.shared_bytes > 0) {  // resolve_target refuses smem= for OpenCL before any launch
            clFinish(queue_);
            return make_error(fmt::format("{}: dynamic shared memory is CUDA-only", launch_label(i, kernel.name)));
        }
        if (auto set = set_args(kernel, launch); !set) {
            clFinish(queue_);
            return make_error(fmt::format("{}: {}", launch_label(i, kernel.name), set.error().message));
        }
        const size_t global[3] = {launch.grid.x * launch.block.x, launch.grid.y * launch.block.y,
                                  launch.grid.z * launch.block.z};
        const size_t local[3] = {launch.block.x, launch.block.y, launch.block.z};
        cl_event event = nullptr;
        cl_int status =
            clEnqueueNDRangeKernel(queue_, kernel.kernel, work_dim(launch), nullptr, global, local, 0, nullptr, &event);
        if (status != CL_SUCCESS) {
            clFinish(queue_);
            return make_error(fmt::format("{}: clEnqueueNDRangeKernel failed: {} ({})", launch_label(i, kernel.name),
                                          error_text(note(status)), geometry(launch)));
        }
        events.push(event);
    }

    const cl_int finished = clFinish(queue_);
    // A kernel fault shows up as a negative execution status on its event; some drivers (NVIDIA)
    // instead fail clFinish and leave the faulting launch and those after it incomplete. In an
    // in-order queue the first launch that did not complete is then the culprit.
    std::optional<size_t> incomplete;
    for (size_t i = 0; i < events.get().size(); ++i) {
        cl_int exec = CL_COMPLETE;
        const cl_int queried =
            clGetEventInfo(events.get()[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof exec, &exec, nullptr);
        if (queried == CL_SUCCESS && exec < 0) {
            poisoned_ = true;
            return make_error(fmt::format("{}: kernel execution failed: {}", launch_label(i, names[i]->name),
                                          error_text(exec)));
        }
        if (!incomplete && (queried != CL_SUCCESS || exec != CL_COMPLETE)) incomplete = i;
    }
    if (finished != CL_SUCCESS) {
        // clFinish fails only when the queue itself is broken (NVIDIA answers -36 or -9999 after a
        // fault), so whatever the code, this device is done.
        poisoned_ = true;
        if (incomplete)
            return make_error(fmt::format("{}: did not complete (a fault in this kernel?): clFinish failed: {}",
                                          launch_label(*incomplete, names[*incomplete]->name), error_text(finished)));
        return make_error(fmt::format("clFinish after {} launch(es) failed: {}", launches.size(), error_text(finished)));
    }
    return events.take();
}

Expected<void> OpenclDevice::run(std::span<const Launch> launches) {
    auto events = execute(launches);
    if (!events) return events.error();
    for (cl_event e : *events) clReleaseEvent(e);
    return {};
}

Expected<double> OpenclDevice::run_timed(std::span<const Launch> launches) {
    if (launches.empty()) return 0.0;
    auto result = execute(launches);
    if (!result) return result.error();
    EventList events;
    for (cl_event e : *result) events.push(e);

    cl_ulong start = 0, end = 0;
    cl_int status = clGetEventProfilingInfo(events.get().front(), CL_PROFILING_COMMAND_START, sizeof start, &start, nullptr);
    if (status == CL_SUCCESS)
        status = clGetEventProfilingInfo(events.get().back(), CL_PROFILING_COMMAND_END, sizeof end, &end, nullptr);
    if (status != CL_SUCCESS) return make_error(fmt::format("clGetEventProfilingInfo failed: {}", error_text(status)));
    if (end < start) return make_error(fmt::format("profiling counters went backwards (start {} ns, end {} ns)", start, end));
    return static_cast<double>(end - start) * 1e-9;
}

}  // namespace kevo::opencl
