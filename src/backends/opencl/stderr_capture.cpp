// See stderr_capture.hpp.
#include "backends/opencl/stderr_capture.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdio>

namespace kevo::opencl {
namespace {

std::mutex& capture_mutex() {
    static std::mutex m;
    return m;
}

}  // namespace

StderrCapture::StderrCapture() : lock_(capture_mutex()) {
    std::fflush(stderr);
    file_ = ::memfd_create("kevo-stderr", MFD_CLOEXEC);
    if (file_ < 0) return;
    saved_ = ::dup(STDERR_FILENO);
    if (saved_ < 0 || ::dup2(file_, STDERR_FILENO) < 0) {
        if (saved_ >= 0) ::close(saved_);
        ::close(file_);
        saved_ = file_ = -1;
    }
}

StderrCapture::~StderrCapture() { finish(); }

std::string StderrCapture::finish() {
    if (file_ < 0) return {};
    std::fflush(stderr);
    ::dup2(saved_, STDERR_FILENO);
    ::close(saved_);
    std::string text;
    char buffer[4096];
    ssize_t n = 0;
    off_t at = 0;
    while ((n = ::pread(file_, buffer, sizeof buffer, at)) > 0) {
        text.append(buffer, static_cast<size_t>(n));
        at += n;
    }
    ::close(file_);
    saved_ = file_ = -1;
    if (lock_.owns_lock()) lock_.unlock();
    return text;
}

}  // namespace kevo::opencl
