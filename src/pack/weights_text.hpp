// A pack's weights as text (`kevo tasks --pack P`): one row per task the weights name, one
// column per vector, whether the task is in this build, then each vector's source and mapping.
#pragma once

#include <string>
#include <vector>

#include "pack/weights.hpp"

namespace kevo {

std::string render_weights_text(const PackWeights& weights, const std::vector<std::string>& pack_tasks);

}  // namespace kevo
