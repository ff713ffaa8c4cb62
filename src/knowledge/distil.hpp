// `kevo knowledge distil`: draft notes from a store, one per accepted kernel: what changed from the
// kernel it replaced (knob values, launch directives, the lines added and removed) and the gain the
// promotion rule measured with both re-timed side by side. Drafts carry `draft = true`, so no
// prompt shows them until a person keeps one (deletes that line, says why it was faster).
#pragma once

#include <string>
#include <vector>

#include "core/expected.hpp"
#include "knowledge/note.hpp"
#include "store/store.hpp"

namespace kevo {

// The drafts of run `run_id`'s accepted kernels, or of every run's when it is empty; an error names
// a run that is not in the store.
Expected<std::vector<KnowledgeNote>> distil_notes(Store& store, const std::string& run_id);

// What `after` changed from `before`, line by line: the lines only `before` has and those only
// `after` has, each in its source's order (a longest common subsequence of whole lines, blank lines
// and surrounding spaces ignored).
struct LineChanges {
    std::vector<std::string> removed, added;
};
LineChanges changed_lines(const std::string& before, const std::string& after);

}  // namespace kevo
