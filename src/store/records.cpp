// The text forms of the store's enums (see records.hpp).
#include "store/records.hpp"

#include <iterator>

namespace kevo {
namespace {
constexpr const char* kRunStatuses[] = {"running", "finished", "interrupted", "failed"};
// In IterationStatus's order: the spellings the store, the reports and the CSV tables hold.
constexpr const char* kIterationStatuses[] = {"evaluated",   "from",           "no_code",        "edit_failed",
                                              "duplicate",   "proposer_error", "permanent_error"};
}  // namespace

const char* run_status_name(RunStatus status) { return kRunStatuses[static_cast<int>(status)]; }

std::optional<RunStatus> parse_run_status(const std::string& name) {
    for (int i = 0; i < 4; ++i)
        if (name == kRunStatuses[i]) return static_cast<RunStatus>(i);
    return std::nullopt;
}

const char* iteration_status_name(IterationStatus status) { return kIterationStatuses[static_cast<int>(status)]; }

std::optional<IterationStatus> parse_iteration_status(const std::string& name) {
    for (size_t i = 0; i < std::size(kIterationStatuses); ++i)
        if (name == kIterationStatuses[i]) return static_cast<IterationStatus>(i);
    return std::nullopt;
}

}  // namespace kevo
