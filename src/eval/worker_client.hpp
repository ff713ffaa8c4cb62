// The parent's handle on a worker process: spawns it (its own process group, protocol on fds 3/4),
// exchanges JSON lines with it, and kills and forgets it on a deadline or a crash. The next
// request starts a fresh worker.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "backend/backend.hpp"
#include "core/expected.hpp"
#include "core/process.hpp"
#include "eval/line_channel.hpp"
#include "eval/protocol.hpp"

namespace kevo {

struct ExchangeOutcome {
    // protocol_error: the worker sent an event or a stage outside the protocol (it was killed).
    enum class Kind { reply, killed, crashed, protocol_error };
    Kind kind = Kind::reply;
    Event reply_kind = Event::error;
    nlohmann::json reply;   // the final event (result, calibration, info, error, fatal)
    std::string detail;     // why it was killed, how it died, or what broke the protocol
};

class WorkerClient {
public:
    // offline_arch non-empty: a compile-only worker that opens no device.
    // executable: the kevo binary that serves `kevo worker` (empty: this very process's binary).
    WorkerClient(std::string backend, int device_index, std::string offline_arch = {}, std::string executable = {});
    ~WorkerClient();
    WorkerClient(const WorkerClient&) = delete;
    WorkerClient& operator=(const WorkerClient&) = delete;

    // Starts the worker if none runs and returns its device. Errors: cannot spawn, no device.
    Expected<DeviceInfo> ensure_started(double startup_timeout_s = 120);

    // Sends `request`; every intermediate event goes to on_event (nullptr: none arrived within 50 ms),
    // which may return a reason to kill the worker (a deadline). Ends at the first event in final_events.
    ExchangeOutcome exchange(const nlohmann::json& request, const std::vector<Event>& final_events,
                             const std::function<std::optional<std::string>(const WorkerEvent* event)>& on_event);

    void kill_worker();
    bool running() const { return process_ && !process_->reaped(); }
    int restarts() const { return restarts_; }

private:
    std::string backend_;
    int device_index_;
    std::string offline_arch_;
    std::string executable_;
    std::optional<Process> process_;
    std::unique_ptr<LineChannel> channel_;
    std::optional<DeviceInfo> device_;
    int restarts_ = -1;

    std::string reap();  // waits for the process and describes how it ended
};

}  // namespace kevo
