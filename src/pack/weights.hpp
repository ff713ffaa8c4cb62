// A pack's importance weights (packs/<pack>/weights.toml, docs/packs.md): named vectors, each with
// its source and how it was mapped onto the pack, and one weight per task of the pack (0 allowed,
// with the reason). kevo's default aggregate stays the unweighted geometric mean; these give the
// S_agg = sum w_i S_i printed beside it, one per vector, never blended.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/expected.hpp"
#include "core/json.hpp"

namespace kevo {

struct OperatorWeight {
    std::string task;
    double weight = 0;
    std::string zero_because;  // why the weight is 0 (required then, refused otherwise)
    int line = 0;              // in the file, for errors
};
KEVO_JSON_FIELDS(OperatorWeight, task, weight, zero_because)

struct WeightVector {
    std::string name;          // "W_trace"
    std::string source, url, mapping;
    std::vector<OperatorWeight> weights;          // in the file's order
    std::map<std::string, std::string> left_out;  // what the source weighs that the pack lacks, and why
    int line = 0;

    const OperatorWeight* find(const std::string& task) const;
};
KEVO_JSON_FIELDS(WeightVector, name, source, url, mapping, weights, left_out)

struct PackWeights {
    std::string pack;
    std::string path;          // where it was read from ("packs/ml/weights.toml" when shipped)
    std::vector<WeightVector> vectors;
};
KEVO_JSON_FIELDS(PackWeights, pack, path, vectors)

// How far from 1 a vector's weights may sum.
constexpr double kWeightSumTolerance = 1e-6;

// Reads a weights file and checks all of it that needs no task list: every key known, sources,
// URLs and mappings non-empty, weights finite and >= 0, a reason for each 0 weight, each vector
// summing to 1. An error names the file, the line and the key, and what would be accepted.
Expected<PackWeights> parse_weights(const std::string& text, const std::string& path);
Expected<PackWeights> read_weights_file(const std::string& path);

// What does not match the pack's tasks, one "file:line: ..." line each: a task the pack lacks
// (unless it is in `pending`: named by the weights, not in this tree yet), a pack task a vector
// leaves out, a file of another pack.
std::vector<std::string> weights_mismatches(const PackWeights& weights, const std::string& pack,
                                            const std::vector<std::string>& pack_tasks,
                                            const std::vector<std::string>& pending = {});

// The weights each pack carries: its shipped file, or the file given (`--weights FILE`) for its own
// pack. A given file must parse and match its pack exactly; a shipped one that names tasks this
// build lacks is kept (those tasks are then simply missing from every aggregate).
struct PackWeightsSet {
    std::map<std::string, PackWeights> by_pack;
    std::map<std::string, std::vector<std::string>> problems;  // a shipped file's mismatches (its S_agg is not given)
    std::string given_pack;                                    // the pack of the file given, if one was
    const PackWeights* find(const std::string& pack) const;
};
Expected<PackWeightsSet> load_pack_weights(const std::string& given_file);

}  // namespace kevo
