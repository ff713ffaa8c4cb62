// Worker process main loop (see worker.hpp; the messages are eval/protocol.hpp's). One serve loop
// reads requests and dispatches them through a handler table: the online worker's table has every
// op, the offline compiler's only compile, and both share the compile handler.
#include "eval/worker.hpp"

#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>
#include <functional>
#include <map>

#include <fmt/format.h>

#include "backend/device_info_json.hpp"
#include "backend/registry.hpp"
#include "core/files.hpp"
#include "eval/calibration.hpp"
#include "eval/ceiling_keeper.hpp"
#include "eval/compile_stage.hpp"
#include "eval/device_lease.hpp"
#include "eval/line_channel.hpp"
#include "eval/protocol.hpp"
#include "eval/reference_cache.hpp"
#include "eval/runner.hpp"
#include "task/registry.hpp"

namespace kevo {

namespace {

// Static gates and compilation only: the verdict is ok when the candidate compiled. A compiler that
// cannot run (not installed, cannot be loaded) is an error: kevo's environment, not the candidate.
Expected<EvalResult> compile_only(const EvalRequest& request, const DeviceInfo& info, const CompileFn& compile) {
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
    auto requested = request_language(request, info.backend);
    if (!requested) return requested.error();
    auto stage = run_compile_stage((*task)->spec(), request, *requested, info.arch, compile);
    if (!stage) return make_error("the compiler cannot run: " + stage.error().message);
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

// What a handler decided: keep serving, or end the worker with this exit status.
using HandlerOutcome = std::optional<int>;
using Handler = std::function<HandlerOutcome(const nlohmann::json& message)>;
using HandlerTable = std::map<Op, Handler>;

void send_error(LineChannel& channel, const std::string& error) {
    nlohmann::json e = event_message(Event::error);
    e["error"] = error;
    channel.send(e);
}

// Serves requests until quit or the parent goes away. `refuse` words the answer to an op that is
// unknown or not in the table.
int serve(LineChannel& channel, const HandlerTable& handlers, const std::function<std::string(const std::string&)>& refuse) {
    while (true) {
        auto message = channel.receive(-1);
        if (!message) return 0;  // parent gone
        auto op = op_of(*message);
        if (op && *op == Op::quit) return 0;
        const auto handler = op ? handlers.find(*op) : handlers.end();
        if (handler == handlers.end()) {
            const bool named = message->is_object() && message->contains("op") && message->at("op").is_string();
            send_error(channel, refuse(named ? message->at("op").get<std::string>() : ""));
            continue;
        }
        if (auto exit_status = handler->second(*message)) return *exit_status;
    }
}

// The compile op: a stage event, then the compile-only result (or an error for an unreadable request).
Handler compile_handler(LineChannel& channel, std::function<DeviceInfo()> info, CompileFn compile) {
    return [&channel, info = std::move(info), compile = std::move(compile)](const nlohmann::json& message) -> HandlerOutcome {
        auto request = eval_request_from_json(message.value("request", nlohmann::json::object()));
        if (!request) {
            send_error(channel, request.error().message);
            return std::nullopt;
        }
        channel.send(stage_message({Stage::compile}));
        auto result = compile_only(*request, info(), compile);
        if (!result) {
            send_error(channel, result.error().message);
            return std::nullopt;
        }
        nlohmann::json e = event_message(Event::result);
        e["result"] = to_json(*result);
        e["poisoned"] = false;
        channel.send(e);
        return std::nullopt;
    };
}

int serve_offline(Backend& backend, const std::string& arch, LineChannel& channel) {
    DeviceInfo info;
    info.backend = backend.name();
    info.name = fmt::format("offline {} compiler ({})", backend.name(), arch);
    info.arch = arch;
    nlohmann::json ready = event_message(Event::ready);
    ready["device"] = to_json(info);
    channel.send(ready);
    const HandlerTable handlers = {
        {Op::compile, compile_handler(channel, [info] { return info; },
                                      [&](const std::string& source, const std::vector<std::string>& defines,
                                          const std::string& target) {
                                          return backend.compile_offline(source, defines, target.empty() ? arch : target);
                                      })},
    };
    return serve(channel, handlers,
                 [](const std::string& op) { return fmt::format("an offline worker only compiles (got '{}')", op); });
}

}  // namespace

int run_worker(const std::string& backend_name, int device_index, int read_fd, int write_fd, const std::string& offline_arch) {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlive the parent
    LineChannel channel(read_fd, write_fd);
    auto fatal = [&](const std::string& message) {
        nlohmann::json e = event_message(Event::fatal);
        e["error"] = message;
        channel.send(e);
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
    auto opened = backend->open(device_index);
    if (!opened) return fatal(fmt::format("cannot open {} device {}: {}", backend_name, device_index, opened.error().message));
    Device& device = **opened;
    auto device_event = [&](Event kind) {
        nlohmann::json e = event_message(kind);
        e["device"] = to_json(device.info());
        return e;
    };
    channel.send(device_event(Event::ready));

    ReferenceCache references(cache_dir("references"));
    auto progress = [&](const std::string& line) {
        nlohmann::json e = event_message(Event::progress);
        e["message"] = line;
        channel.send(e);
    };
    CeilingKeeper ceilings(device, [&] { channel.send(stage_message({Stage::calibrate})); }, progress);
    Runner runner(device, references, ceilings, [&](const nlohmann::json& e) { channel.send(e); });

    const HandlerTable handlers = {
        {Op::info,
         [&](const nlohmann::json&) -> HandlerOutcome {
             channel.send(device_event(Event::info));
             return std::nullopt;
         }},
        {Op::calibrate,
         [&](const nlohmann::json& message) -> HandlerOutcome {
             CalibrationOptions options;
             options.quick = message.value("quick", false);
             options.progress = progress;
             auto lease = DeviceLease::acquire(device.info());  // measuring is timing: nothing else on the device
             if (!lease) progress(lease.error().message + "; the measurement may overlap another kevo process's");
             auto measured = measure_calibration(device, options);
             if (!measured) {
                 send_error(channel, measured.error().message);
                 return std::nullopt;
             }
             auto stored = store_calibration(*measured);
             ceilings.adopt(*measured);
             nlohmann::json e = event_message(Event::calibration);
             e["calibration"] = to_json(*measured);
             e["stored"] = stored.has_value();
             e["store_error"] = stored ? "" : stored.error().message;
             channel.send(e);
             return std::nullopt;
         }},
        {Op::ceilings,
         [&](const nlohmann::json&) -> HandlerOutcome {
             auto in_force = ceilings.current();
             if (!in_force) {
                 send_error(channel, in_force.error().message);
                 return std::nullopt;
             }
             nlohmann::json e = event_message(Event::ceilings);
             e["calibration"] = to_json(**in_force);
             channel.send(e);
             return std::nullopt;
         }},
        {Op::compile, compile_handler(channel, [&] { return device.info(); },
                                      [&](const std::string& source, const std::vector<std::string>& defines,
                                          const std::string& arch) {
                                          return arch.empty() ? device.compile(source, defines)
                                                              : device.compile_for_arch(source, defines, arch);
                                      })},
        {Op::eval,
         [&](const nlohmann::json& message) -> HandlerOutcome {
             auto request = eval_request_from_json(message.value("request", nlohmann::json::object()));
             if (!request) {
                 send_error(channel, request.error().message);
                 return std::nullopt;
             }
             auto pinned = pinned_ceilings(*request);
             if (!pinned) {
                 send_error(channel, pinned.error().message);
                 return std::nullopt;
             }
             ceilings.pin(std::move(*pinned));
             auto result = runner.evaluate(*request);
             ceilings.pin(std::nullopt);
             const bool poisoned = device.is_poisoned();
             if (!result) {  // kevo's own fault (reference, host memory): an environment error, no verdict
                 nlohmann::json e = event_message(Event::error);
                 e["environment"] = true;
                 e["error"] = result.error().message;
                 channel.send(e);
             } else {
                 nlohmann::json e = event_message(Event::result);
                 e["result"] = to_json(*result);
                 e["poisoned"] = poisoned;
                 channel.send(e);
             }
             if (poisoned) return 3;  // the context is unusable; the parent starts a fresh worker
             return std::nullopt;
         }},
    };
    return serve(channel, handlers, [](const std::string& op) { return fmt::format("unknown op '{}'", op); });
}

}  // namespace kevo
