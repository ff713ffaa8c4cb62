// Captures what is written to file descriptor 2 while an object lives: some OpenCL compilers (PoCL's
// clang) print their own diagnostics ("1 error generated.") straight to the process's stderr during
// clBuildProgram. Captured, the text is appended to the build log, so it reaches the user attributed
// to the kernel that caused it instead of leaking unattributed into kevo's own stderr.
#pragma once

#include <mutex>
#include <string>

namespace kevo::opencl {

class StderrCapture {
public:
    StderrCapture();  // starts capturing; on failure (no temporary file) nothing is captured
    ~StderrCapture();
    StderrCapture(const StderrCapture&) = delete;
    StderrCapture& operator=(const StderrCapture&) = delete;

    // Restores fd 2 and returns what was written to it meanwhile (empty when nothing was).
    std::string finish();

private:
    std::unique_lock<std::mutex> lock_;  // one capture at a time: fd 2 is the process's
    int saved_ = -1, file_ = -1;
};

}  // namespace kevo::opencl
