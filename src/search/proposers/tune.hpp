// The built-in, offline autotuner: searches the incumbent's `kevo: tune` knobs (which may drive
// launch directives: block shape, cells per thread). Random start, then local moves (one knob to a
// neighbouring value); never proposes a point that was already evaluated.
#pragma once

#include <memory>

#include "search/proposer.hpp"

namespace kevo {

// `language` is the run's: the one whose comments hold the directives (`// kevo:`, `# kevo:`).
std::unique_ptr<Proposer> make_tune_proposer(Language language);

}  // namespace kevo
