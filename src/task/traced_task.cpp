// A task with the trace profile of its folder's trace.toml added to its spec; every other call goes
// to the task itself (a trace shape is a size like any other to make_case, reference and check).
#include "task/registry.hpp"
#include "task/trace_profile.hpp"

namespace kevo {
namespace {

class TracedTask final : public Task {
public:
    TracedTask(std::unique_ptr<Task> inner, std::vector<SizeSpec> trace) : inner_(std::move(inner)), spec_(inner_->spec()) {
        spec_.profiles[kTraceProfile] = std::move(trace);
    }
    const TaskSpec& spec() const override { return spec_; }
    Case make_case(const SizeSpec& size, uint64_t seed, Trial trial) const override {
        return inner_->make_case(size, seed, trial);
    }
    Reference reference(const SizeSpec& size, const Case& c) const override { return inner_->reference(size, c); }
    HostFootprint host_footprint(const SizeSpec& size) const override { return inner_->host_footprint(size); }
    CheckResult check(const SizeSpec& size, const Case& c, const Reference& ref,
                      const std::vector<std::vector<std::byte>>& outputs) const override {
        return inner_->check(size, c, ref, outputs);
    }

private:
    std::unique_ptr<Task> inner_;
    TaskSpec spec_;
};

}  // namespace

Expected<std::unique_ptr<Task>> with_trace_profile(std::unique_ptr<Task> task) {
    const std::string name = task->spec().name;
    const std::string_view text = task_file(name, kTraceFile);
    if (text.empty()) return task;
    auto trace = parse_trace_file(std::string(text), "tasks/" + name + "/" + std::string(kTraceFile), task->spec());
    if (!trace) return trace.error();
    return std::unique_ptr<Task>(std::make_unique<TracedTask>(std::move(task), std::move(trace->sizes)));
}

}  // namespace kevo
