// The environment every test process starts with: its own folder of device leases (unless
// KEVO_LEASE_DIR is set), so that tests run side by side under ctest -j as they did before there
// were leases, while the kevo processes one test starts (a sweep's runs, two evaluations) share it.
#include <gtest/gtest.h>

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace {

const bool kOwnLeaseFolder = [] {
    const std::string dir = ::testing::TempDir() + "kevo_leases_" + std::to_string(::getpid());
    return ::setenv("KEVO_LEASE_DIR", dir.c_str(), 0) == 0;
}();

}  // namespace
