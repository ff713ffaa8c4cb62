// The text forms of the store's enums (see records.hpp).
#include "store/records.hpp"

namespace kevo {
namespace {
constexpr const char* kRunStatuses[] = {"running", "finished", "interrupted", "failed"};
}  // namespace

const char* run_status_name(RunStatus status) { return kRunStatuses[static_cast<int>(status)]; }

std::optional<RunStatus> parse_run_status(const std::string& name) {
    for (int i = 0; i < 4; ++i)
        if (name == kRunStatuses[i]) return static_cast<RunStatus>(i);
    return std::nullopt;
}

}  // namespace kevo
