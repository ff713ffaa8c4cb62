// See line_channel.hpp.
#include "eval/line_channel.hpp"

#include <poll.h>
#include <unistd.h>

#include <cerrno>

namespace kevo {

bool LineChannel::send(const nlohmann::json& message) {
    const std::string line = message.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    size_t written = 0;
    while (written < line.size()) {
        const ssize_t n = ::write(write_fd_, line.data() + written, line.size() - written);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        written += static_cast<size_t>(n);
    }
    return true;
}

std::optional<nlohmann::json> LineChannel::pop_line() {
    while (true) {
        const size_t eol = buffer_.find('\n');
        if (eol == std::string::npos) return std::nullopt;
        std::string line = buffer_.substr(0, eol);
        buffer_.erase(0, eol + 1);
        auto parsed = nlohmann::json::parse(line, nullptr, false);
        if (!parsed.is_discarded()) return parsed;  // stray non-JSON output is skipped
    }
}

std::optional<nlohmann::json> LineChannel::receive(int timeout_ms) {
    if (auto line = pop_line()) return line;
    while (!closed_) {
        pollfd p{read_fd_, POLLIN, 0};
        const int ready = ::poll(&p, 1, timeout_ms);
        if (ready < 0 && errno == EINTR) continue;
        if (ready <= 0) return std::nullopt;
        char chunk[65536];
        const ssize_t n = ::read(read_fd_, chunk, sizeof chunk);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) {
            closed_ = true;
            break;
        }
        buffer_.append(chunk, static_cast<size_t>(n));
        if (auto line = pop_line()) return line;
    }
    return pop_line();
}

}  // namespace kevo
