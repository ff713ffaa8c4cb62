// The evaluation cascade as it runs inside the worker process, next to the device: directives,
// compile, resources, correctness on every selected size (two trials each), timing, re-check,
// score. Candidate faults end as a verdict in the EvalResult; nothing here throws for them.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "eval/cache_flusher.hpp"
#include "eval/calibration.hpp"
#include "eval/eval_types.hpp"
#include "eval/case_cache.hpp"
#include "eval/device_case_cache.hpp"
#include "eval/reference_cache.hpp"
#include "task/task.hpp"

namespace kevo {

class Runner {
public:
    // `emit` receives progress events ({"event":"stage",...}) that the parent uses for deadlines.
    Runner(Device& device, ReferenceCache& references, std::function<void(const nlohmann::json&)> emit);

    EvalResult evaluate(const EvalRequest& request, const Calibration& ceilings);

private:
    struct Compiled {
        uint32_t module = 0;
        std::string log;
        double seconds = 0;
        bool ok = false;
    };

    Device& device_;
    ReferenceCache& references_;
    CaseCache cases_{memory_fraction(0.15)};
    std::function<void(const nlohmann::json&)> emit_;
    std::map<std::string, Compiled> compiled_;  // keyed by hash of (source, defines)
    CacheFlusher flusher_{device_};
    DeviceCaseCache device_cases_{device_, device_case_budget(device_.info())};

    Expected<Compiled> compile(const std::string& source, const std::vector<std::string>& defines);
    // compile() in the shape run_compile_stage expects (modules stay cached here).
    Expected<CompileOutcome> compile_outcome(const std::string& source, const std::vector<std::string>& defines);
    // The task's own seed run on this device: the reference where the CPU would be too slow.
    Expected<Reference> device_reference(const Task& task, const SizeSpec& size, uint64_t case_seed, Trial trial,
                                         const Case& c);
    void stage(const char* name, const std::string& size = {}, const char* trial = nullptr, size_t launches = 0);
};

}  // namespace kevo
