// Newline-delimited JSON over a pair of file descriptors: the worker protocol's transport.
#pragma once

#include <optional>
#include <string>

#include <nlohmann/json.hpp>

namespace kevo {

class LineChannel {
public:
    LineChannel(int read_fd, int write_fd) : read_fd_(read_fd), write_fd_(write_fd) {}

    // False when the peer is gone.
    bool send(const nlohmann::json& message);
    // Blocks up to timeout_ms (-1: forever). nullopt on timeout; sets closed() at end of stream.
    std::optional<nlohmann::json> receive(int timeout_ms);
    bool closed() const { return closed_; }
    int read_fd() const { return read_fd_; }

private:
    int read_fd_, write_fd_;
    std::string buffer_;
    bool closed_ = false;
    std::optional<nlohmann::json> pop_line();
};

}  // namespace kevo
