// See worker_client.hpp.
#include "eval/worker_client.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>

#include "backend/device_info_json.hpp"

extern char** environ;

namespace kevo {

std::string self_executable() {
    std::error_code ec;
    auto path = std::filesystem::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("/proc/self/exe") : path.string();
}

WorkerClient::WorkerClient(std::string backend, int device_index, std::string offline_arch, std::string executable)
    : backend_(std::move(backend)), device_index_(device_index), offline_arch_(std::move(offline_arch)),
      executable_(executable.empty() ? self_executable() : std::move(executable)) {}

WorkerClient::~WorkerClient() {
    if (pid_ > 0 && channel_) {
        channel_->send({{"op", "quit"}});
        // A worker busy in a kernel would not hear it; give it a moment, then kill.
        for (int i = 0; i < 20 && pid_ > 0; ++i) {
            int status = 0;
            if (::waitpid(pid_, &status, WNOHANG) == pid_) pid_ = -1;
            else ::usleep(10000);
        }
    }
    kill_worker();
}

Expected<DeviceInfo> WorkerClient::ensure_started(double startup_timeout_s) {
    if (pid_ > 0 && device_) return *device_;
    int down[2], up[2];  // parent -> worker, worker -> parent
    if (::pipe2(down, O_CLOEXEC) != 0) return make_error(fmt::format("pipe: {}", std::strerror(errno)));
    if (::pipe2(up, O_CLOEXEC) != 0) {
        ::close(down[0]), ::close(down[1]);
        return make_error(fmt::format("pipe: {}", std::strerror(errno)));
    }
    // Lift every end above the target numbers so the dup2 calls below cannot clobber each other.
    for (int* fd : {&down[0], &down[1], &up[0], &up[1]}) {
        const int high = ::fcntl(*fd, F_DUPFD_CLOEXEC, 10);
        if (high >= 0) {
            ::close(*fd);
            *fd = high;
        }
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    // The worker reads requests on fd 3 and writes events on fd 4; its stdout joins stderr so that
    // anything a driver prints cannot corrupt the protocol.
    posix_spawn_file_actions_adddup2(&actions, down[0], 3);
    posix_spawn_file_actions_adddup2(&actions, up[1], 4);
    posix_spawn_file_actions_adddup2(&actions, 2, 1);
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    const std::string& exe = executable_;
    const std::string device = std::to_string(device_index_);
    std::vector<std::string> args = {"kevo", "worker", "--backend", backend_, "--device", device};
    if (!offline_arch_.empty()) args.insert(args.end(), {"--offline", offline_arch_});
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = -1;
    const int rc = posix_spawn(&pid, exe.c_str(), &actions, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attr);
    ::close(down[0]);
    ::close(up[1]);
    if (rc != 0) {
        ::close(down[1]), ::close(up[0]);
        return make_error(fmt::format("cannot start the worker process {}: {}", exe, std::strerror(rc)));
    }
    pid_ = pid;
    to_worker_ = down[1];
    from_worker_ = up[0];
    channel_ = std::make_unique<LineChannel>(from_worker_, to_worker_);
    ++restarts_;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::duration<double>(startup_timeout_s);
    while (std::chrono::steady_clock::now() < deadline) {
        auto event = channel_->receive(200);
        if (event) {
            const std::string kind = event->value("event", "");
            if (kind == "ready") {
                device_ = device_info_from_json(event->at("device"));
                return *device_;
            }
            if (kind == "fatal") {
                const std::string error = event->value("error", "worker failed to start");
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

ExchangeOutcome WorkerClient::exchange(const nlohmann::json& request, const std::vector<std::string>& final_events,
                                       const std::function<std::optional<std::string>(const nlohmann::json*)>& on_event) {
    ExchangeOutcome out;
    if (!channel_ || !channel_->send(request)) {
        out.kind = ExchangeOutcome::Kind::crashed;
        out.detail = fmt::format("the worker could not be reached ({})", reap());
        kill_worker();
        return out;
    }
    while (true) {
        auto event = channel_->receive(50);
        if (event) {
            const std::string kind = event->value("event", "");
            if (std::find(final_events.begin(), final_events.end(), kind) != final_events.end()) {
                out.reply = std::move(*event);
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
    if (pid_ <= 0) return "not running";
    int status = 0;
    // The pipe closed, so the process is ending; do not wait forever on one stuck in the driver.
    for (int i = 0; i < 200; ++i) {
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) {
            pid_ = -1;
            if (WIFSIGNALED(status))
                return fmt::format("killed by signal {} ({})", sigabbrev_np(WTERMSIG(status)) ? sigabbrev_np(WTERMSIG(status)) : "?",
                                   strsignal(WTERMSIG(status)));
            return fmt::format("exited with status {}", WEXITSTATUS(status));
        }
        if (r < 0) break;
        ::usleep(10000);
    }
    return "stopped answering";
}

void WorkerClient::kill_worker() {
    if (pid_ > 0) {
        ::kill(-pid_, SIGKILL);  // the whole process group: driver helper threads or processes too
        ::kill(pid_, SIGKILL);
        int status = 0;
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
    }
    channel_.reset();
    if (to_worker_ >= 0) ::close(to_worker_);
    if (from_worker_ >= 0) ::close(from_worker_);
    to_worker_ = from_worker_ = -1;
    device_.reset();
}

}  // namespace kevo
