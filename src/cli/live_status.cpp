// See live_status.hpp.
#include "cli/live_status.hpp"

#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>

namespace kevo::cli {
namespace {

// The status line is cut to the terminal's width: a wrapped line cannot be overwritten in place.
size_t terminal_columns() {
    winsize w{};
    if (::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 && w.ws_col > 1) return w.ws_col - 1;
    return 79;
}

}  // namespace

bool is_terminal(std::FILE* stream) { return ::isatty(::fileno(stream)) == 1; }

bool same_destination(std::FILE* a, std::FILE* b) {
    struct stat sa {}, sb {};
    if (::fstat(::fileno(a), &sa) != 0 || ::fstat(::fileno(b), &sb) != 0) return false;
    return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

void LiveStatus::status(const std::string& text) {
    if (!live_) {
        std::fprintf(stderr, "%s\n", text.c_str());
        std::fflush(stderr);
        return;
    }
    const std::string line = text.substr(0, std::min(text.find('\n'), terminal_columns()));
    std::fprintf(stderr, "\r\033[K%s", line.c_str());
    std::fflush(stderr);
    shown_ = true;
}

void LiveStatus::print(std::FILE* out, const std::string& text) {
    clear();
    std::fputs(text.c_str(), out);
    if (!text.empty() && text.back() != '\n') std::fputc('\n', out);
    std::fflush(out);
}

void LiveStatus::clear() {
    if (!shown_) return;
    std::fputs("\r\033[K", stderr);
    std::fflush(stderr);
    shown_ = false;
}

}  // namespace kevo::cli
