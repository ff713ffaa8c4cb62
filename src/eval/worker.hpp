// The worker process: owns one device, receives requests (eval, calibrate, info) as JSON lines
// and answers with events. Everything a candidate can break breaks here, never in the parent.
#pragma once

#include <string>

namespace kevo {

// Runs until the parent says quit or goes away. Returns the process exit status.
// With a non-empty offline_arch no device is opened: only {"op":"compile"} is served, through the
// backend's offline compiler (NVRTC) for that architecture.
int run_worker(const std::string& backend, int device_index, int read_fd, int write_fd, const std::string& offline_arch = {});

}  // namespace kevo
