// Progress on a terminal: one status line that each step overwrites, above which the lasting
// output (table rows, notices) accumulates. Off a terminal every status is a line of its own on
// stderr, so logs keep the whole story; lasting output then goes where the caller says.
#pragma once

#include <cstdio>
#include <string>

namespace kevo::cli {

class LiveStatus {
public:
    // `live`: stderr is a terminal and the status line may be rewritten in place.
    explicit LiveStatus(bool live) : live_(live) {}
    ~LiveStatus() { clear(); }
    LiveStatus(const LiveStatus&) = delete;
    LiveStatus& operator=(const LiveStatus&) = delete;

    bool live() const { return live_; }
    // Replaces the status line (live), or prints it as a line on stderr.
    void status(const std::string& text);
    // Prints lasting text on `out`, after clearing the status line so the two never mix.
    void print(std::FILE* out, const std::string& text);
    void clear();

private:
    bool live_ = false;
    bool shown_ = false;  // a status line is on screen
};

// True when `stream` is a terminal.
bool is_terminal(std::FILE* stream);
// True when both streams write to one place (one terminal, or `> log 2>&1`): what is printed on
// one as it happens must then not be printed again on the other.
bool same_destination(std::FILE* a, std::FILE* b);

}  // namespace kevo::cli
