// See worker_client.hpp. Spawning, reaping and killing are core/process's; this file is the
// handshake and the exchange of typed events (eval/protocol.hpp).
#include "eval/worker_client.hpp"

#include <algorithm>
#include <chrono>

#include <fmt/format.h>

#include "backend/device_info_json.hpp"

namespace kevo {

WorkerClient::WorkerClient(std::string backend, int device_index, std::string offline_arch, std::string executable)
    : backend_(std::move(backend)), device_index_(device_index), offline_arch_(std::move(offline_arch)),
      executable_(executable.empty() ? self_executable() : std::move(executable)) {}

WorkerClient::~WorkerClient() {
    if (running() && channel_) {
        channel_->send(op_message(Op::quit));
        // A worker busy in a kernel would not hear it; give it a moment, then kill.
        process_->wait_for(0.2);
    }
    kill_worker();
}

Expected<DeviceInfo> WorkerClient::ensure_started(double startup_timeout_s) {
    if (running() && device_) return *device_;
    kill_worker();  // one that ended by itself (poisoned) is reaped and forgotten
    SpawnOptions options;
    options.executable = executable_;
    options.argv0 = "kevo";
    options.description = "the worker process " + executable_;
    options.args = {"worker", "--backend", backend_, "--device", std::to_string(device_index_)};
    if (!offline_arch_.empty()) options.args.insert(options.args.end(), {"--offline", offline_arch_});
    // The worker reads requests on fd 3 and writes events on fd 4; its stdout joins stderr so that
    // anything a driver prints cannot corrupt the protocol.
    options.extra_pipes = {{3, true}, {4, false}};
    options.stdout_to = StreamTo::to_stderr;
    auto process = Process::spawn(options);
    if (!process) return process.error();
    process_.emplace(std::move(*process));
    channel_ = std::make_unique<LineChannel>(process_->pipe_fd(4), process_->pipe_fd(3));
    ++restarts_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(startup_timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        auto message = channel_->receive(200);
        if (message) {
            auto event = read_event(std::move(*message));
            if (!event) {
                kill_worker();
                return make_error(fmt::format("the worker broke the protocol while starting: {}", event.error().message));
            }
            if (event->kind == Event::ready) {
                device_ = device_info_from_json(event->body.at("device"));
                return *device_;
            }
            if (event->kind == Event::fatal) {
                const std::string error = event->body.value("error", "worker failed to start");
                kill_worker();
                return make_error(error);
            }
        } else if (channel_->closed()) {
            const std::string how = reap();
            kill_worker();
            return make_error(fmt::format("the worker process ended before it was ready ({})", how));
        }
    }
    kill_worker();
    return make_error(fmt::format("the worker did not open the {} device within {:.0f} s", backend_, startup_timeout_s));
}

ExchangeOutcome WorkerClient::exchange(const nlohmann::json& request, const std::vector<Event>& final_events,
                                       const std::function<std::optional<std::string>(const WorkerEvent*)>& on_event) {
    ExchangeOutcome out;
    if (!channel_ || !channel_->send(request)) {
        out.kind = ExchangeOutcome::Kind::crashed;
        out.detail = fmt::format("the worker could not be reached ({})", reap());
        kill_worker();
        return out;
    }
    while (true) {
        std::optional<WorkerEvent> event;
        if (auto message = channel_->receive(50)) {
            auto read = read_event(std::move(*message));
            if (!read) {  // a worker that speaks outside the protocol is not to be trusted further
                kill_worker();
                out.kind = ExchangeOutcome::Kind::protocol_error;
                out.detail = read.error().message;
                return out;
            }
            event = std::move(*read);
            if (std::find(final_events.begin(), final_events.end(), event->kind) != final_events.end()) {
                out.reply_kind = event->kind;
                out.reply = std::move(event->body);
                return out;
            }
        }
        if (auto reason = on_event(event ? &*event : nullptr)) {
            kill_worker();
            out.kind = ExchangeOutcome::Kind::killed;
            out.detail = *reason;
            return out;
        }
        if (!event && channel_->closed()) {
            out.kind = ExchangeOutcome::Kind::crashed;
            out.detail = reap();
            kill_worker();
            return out;
        }
    }
}

std::string WorkerClient::reap() {
    if (!process_) return "not running";
    // The pipe closed, so the process is ending; do not wait forever on one stuck in the driver.
    if (auto status = process_->wait_for(2.0)) return status->describe();
    return "stopped answering";
}

void WorkerClient::kill_worker() {
    channel_.reset();
    process_.reset();  // kills the whole group if it still runs, reaps it and closes the pipes
    device_.reset();
}

}  // namespace kevo
