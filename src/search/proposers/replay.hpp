// The `replay` proposer: the regular files of a directory, in name order, one per proposal (for
// reproducing a run and for tests). A .cu/.cl file is a candidate source as it is; any other file
// is an answer text, parsed like a model's reply. Files of the other language's suffix (a .cl file
// on a CUDA run) and hidden files are skipped.
#pragma once

#include <memory>
#include <string>

#include "core/expected.hpp"
#include "search/proposer.hpp"

namespace kevo {

Expected<std::unique_ptr<Proposer>> make_replay_proposer(std::string dir);

}  // namespace kevo
