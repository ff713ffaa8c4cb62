// How much host memory the machine can still give: the evaluator's check that a size's inputs and
// reference fit before the candidate runs.
#pragma once

#include <cstdint>

namespace kevo {

// MemAvailable from /proc/meminfo (what can be allocated without swapping), or, where there is no
// such line, the free physical pages. KEVO_HOST_MEMORY_BYTES overrides both (tests; a share of a
// machine smaller than what the kernel reports).
uint64_t available_host_bytes();

}  // namespace kevo
