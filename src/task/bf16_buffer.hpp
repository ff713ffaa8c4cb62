// bf16 buffers for the ML tasks: values drawn in float are rounded once (to nearest even) into the
// buffer, and the reference reads them back as the exact floats a kernel sees.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "task/task.hpp"

namespace kevo {

// A bf16 buffer holding `values` rounded to bf16.
HostBuffer make_bf16_buffer(std::string name, BufferRole role, std::span<const float> values);
// A zero-filled bf16 buffer of `count` elements (for outputs, whose contents are poisoned anyway).
HostBuffer make_bf16_buffer(std::string name, BufferRole role, size_t count);
// The values a bf16 buffer holds, as floats (exact).
std::vector<float> bf16_values(const HostBuffer& buffer);
// Rounds every value to the nearest bf16 in place (what storing and reading back gives).
void round_all_to_bf16(std::span<float> values);

}  // namespace kevo
