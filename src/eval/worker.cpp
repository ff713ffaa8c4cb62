// Worker process main loop (see worker.hpp). Protocol, one JSON object per line:
//   parent -> worker: {"op":"eval"|"compile","request":{...}} | {"op":"calibrate","quick":b} | {"op":"info"} | {"op":"quit"}
//   worker -> parent: {"event":"ready","device":{...}} | {"event":"fatal","error":"..."}
//                     {"event":"stage",...} | {"event":"progress","message":"..."}
//                     {"event":"result","result":{...},"poisoned":b} | {"event":"calibration",...}
//                     {"event":"error","error":"...","environment":true} (kevo's fault: no verdict)
#include "eval/worker.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include <fmt/format.h>

#include "backend/device_info_json.hpp"
#include "backend/registry.hpp"
#include "core/files.hpp"
#include "eval/calibration.hpp"
#include "eval/ceiling_keeper.hpp"
#include "eval/compile_stage.hpp"
#include "eval/device_lease.hpp"
#include "eval/line_channel.hpp"
#include "eval/reference_cache.hpp"
#include "eval/runner.hpp"
#include "task/registry.hpp"

namespace kevo {

namespace {

// Static gates and compilation only: the verdict is ok when the candidate compiled.
EvalResult compile_only(const EvalRequest& request, const DeviceInfo& info, Language language, const CompileFn& compile) {
    EvalResult result;
    result.task = request.task;
    result.backend = info.backend;
    result.device = info.name;
    result.profile = request.profile;
    result.seed = request.seed;
    auto task = make_task(request.task);
    if (!task) {
        result.verdict = Verdict::rejected;
        result.diagnostics = task.error().message;
        return result;
    }
    auto stage = run_compile_stage((*task)->spec(), request, language, info.arch, compile);
    if (!stage) {
        result.verdict = Verdict::runtime_error;
        result.diagnostics = "compiler failure: " + stage.error().message;
        return result;
    }
    result.defines = stage->knobs;
    result.compile_messages = stage->messages;
    result.warnings = stage->warnings;
    result.stage_seconds.compile = stage->seconds;
    result.stage_seconds.total = stage->seconds;
    result.verdict = stage->verdict.value_or(Verdict::ok);
    result.diagnostics = stage->verdict ? stage->diagnostics : "compiled (compile-only: not run)";
    return result;
}

// The ceilings a request pins, read strictly: a malformed pin is kevo's fault, never the candidate's.
Expected<std::optional<Calibration>> pinned_ceilings(const EvalRequest& request) {
    if (request.ceilings.is_null()) return std::optional<Calibration>();
    auto calibration = calibration_from_json(request.ceilings);
    if (!calibration) return make_error("the request's pinned ceilings cannot be read: " + calibration.error().message);
    return std::optional<Calibration>(std::move(*calibration));
}

int serve_offline(Backend& backend, const std::string& arch, LineChannel& channel) {
    DeviceInfo info;
    info.backend = backend.name();
    info.name = fmt::format("offline {} compiler ({})", backend.name(), arch);
    info.arch = arch;
    channel.send({{"event", "ready"}, {"device", to_json(info)}});
    while (true) {
        auto message = channel.receive(-1);
        if (!message) return 0;
        const std::string op = message->value("op", "");
        if (op == "quit") return 0;
        if (op != "compile") {
            channel.send({{"event", "error"}, {"error", fmt::format("an offline worker only compiles (got '{}')", op)}});
            continue;
        }
        auto request = eval_request_from_json(message->value("request", nlohmann::json::object()));
        if (!request) {
            channel.send({{"event", "error"}, {"error", request.error().message}});
            continue;
        }
        channel.send({{"event", "stage"}, {"stage", "compile"}});
        EvalResult result = compile_only(*request, info, backend.language(),
                                         [&](const std::string& source, const std::vector<std::string>& defines,
                                             const std::string& target) {
                                             return backend.compile_offline(source, defines, target.empty() ? arch : target);
                                         });
        channel.send({{"event", "result"}, {"result", to_json(result)}, {"poisoned", false}});
    }
}

}  // namespace

int run_worker(const std::string& backend_name, int device_index, int read_fd, int write_fd, const std::string& offline_arch) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the parent
    LineChannel channel(read_fd, write_fd);
    auto fatal = [&](const std::string& message) {
        channel.send({{"event", "fatal"}, {"error", message}});
        return 2;
    };
    auto backend = make_backend(backend_name);
    if (!backend) return fatal(fmt::format("unknown backend '{}'", backend_name));
    if (!offline_arch.empty()) return serve_offline(*backend, offline_arch, channel);
    const auto devices = backend->probe();
    if (devices.empty()) return fatal(fmt::format("no {} device: {}", backend_name, backend->unavailable_reason()));
    if (device_index < 0 || device_index >= static_cast<int>(devices.size()))
        return fatal(fmt::format("--device {} is out of range: backend {} has {} device{} (0..{})", device_index,
                                 backend_name, devices.size(), devices.size() == 1 ? "" : "s", devices.size() - 1));
    auto device = backend->open(device_index);
    if (!device) return fatal(fmt::format("cannot open {} device {}: {}", backend_name, device_index, device.error().message));
    channel.send({{"event", "ready"}, {"device", to_json((*device)->info())}});

    ReferenceCache references(cache_dir("references"));
    auto progress = [&](const std::string& line) { channel.send({{"event", "progress"}, {"message", line}}); };
    CeilingKeeper ceilings(**device, [&] { channel.send({{"event", "stage"}, {"stage", "calibrate"}}); }, progress);
    Runner runner(**device, references, ceilings, [&](const nlohmann::json& e) { channel.send(e); });
    while (true) {
        auto message = channel.receive(-1);
        if (!message) return 0;  // parent gone
        const std::string op = message->value("op", "");
        if (op == "quit") return 0;
        if (op == "info") {
            channel.send({{"event", "info"}, {"device", to_json((*device)->info())}});
        } else if (op == "calibrate") {
            CalibrationOptions options;
            options.quick = message->value("quick", false);
            options.progress = progress;
            auto lease = DeviceLease::acquire((*device)->info());  // measuring is timing: nothing else on the device
            if (!lease) progress(lease.error().message + "; the measurement may overlap another kevo process's");
            auto measured = measure_calibration(**device, options);
            if (!measured) {
                channel.send({{"event", "error"}, {"error", measured.error().message}});
            } else {
                auto stored = store_calibration(*measured);
                ceilings.adopt(*measured);
                channel.send({{"event", "calibration"}, {"calibration", to_json(*measured)},
                              {"stored", stored.has_value()}, {"store_error", stored ? "" : stored.error().message}});
            }
        } else if (op == "ceilings") {
            auto in_force = ceilings.current();
            if (!in_force) channel.send({{"event", "error"}, {"error", in_force.error().message}});
            else channel.send({{"event", "ceilings"}, {"calibration", to_json(**in_force)}});
        } else if (op == "compile") {
            auto request = eval_request_from_json(message->value("request", nlohmann::json::object()));
            if (!request) {
                channel.send({{"event", "error"}, {"error", request.error().message}});
                continue;
            }
            channel.send({{"event", "stage"}, {"stage", "compile"}});
            Device& d = **device;
            EvalResult result = compile_only(*request, d.info(), d.language(),
                                             [&](const std::string& source, const std::vector<std::string>& defines,
                                                 const std::string& arch) {
                                                 return arch.empty() ? d.compile(source, defines)
                                                                     : d.compile_for_arch(source, defines, arch);
                                             });
            channel.send({{"event", "result"}, {"result", to_json(result)}, {"poisoned", false}});
        } else if (op == "eval") {
            auto request = eval_request_from_json(message->value("request", nlohmann::json::object()));
            if (!request) {
                channel.send({{"event", "error"}, {"error", request.error().message}});
                continue;
            }
            auto pinned = pinned_ceilings(*request);
            if (!pinned) {
                channel.send({{"event", "error"}, {"error", pinned.error().message}});
                continue;
            }
            ceilings.pin(std::move(*pinned));
            auto result = runner.evaluate(*request);
            ceilings.pin(std::nullopt);
            const bool poisoned = (*device)->is_poisoned();
            if (!result)  // kevo's own fault (reference, host memory): an environment error, no verdict
                channel.send({{"event", "error"}, {"environment", true}, {"error", result.error().message}});
            else
                channel.send({{"event", "result"}, {"result", to_json(*result)}, {"poisoned", poisoned}});
            if (poisoned) return 3;  // the context is unusable; the parent starts a fresh worker
        } else {
            channel.send({{"event", "error"}, {"error", fmt::format("unknown op '{}'", op)}});
        }
    }
}

}  // namespace kevo
