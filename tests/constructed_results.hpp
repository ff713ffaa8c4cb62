// Test helper: EvalResult pieces built by hand, for the promotion and gate rules.
#pragma once

#include <string>

#include "eval/eval_types.hpp"

namespace kevo::test {

// A timed, correct size whose fraction is proportional to its speed (1 GB of work, a 1000 GB/s ceiling).
inline SizeResult timed_size(const std::string& label, double seconds, double cv, int samples, bool heldout = false) {
    SizeResult s;
    s.label = label;
    s.heldout = heldout;
    s.correct = true;
    s.timed = true;
    s.seconds = seconds;
    s.cv = cv;
    s.samples = samples;
    s.work = 1e9;
    s.unit = "GB/s";
    s.ceiling = 1000;
    s.achieved = s.work / seconds / 1e9;
    s.fraction = s.achieved / s.ceiling;
    return s;
}

}  // namespace kevo::test
