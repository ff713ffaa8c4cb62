// What the study reports and the CSV export read from the store: the runs in scope (one run, a
// study's runs, or every run) with their iterations and gate rows, each tagged with the keys the
// reports group by (task, model, strategy, seed), and the study's file and cells when there is one.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/expected.hpp"
#include "pack/weights.hpp"
#include "store/records.hpp"
#include "store/store.hpp"

namespace kevo {

struct ReportScope {
    enum class Kind { run, study, all };
    Kind kind = Kind::all;
    std::string id;  // the run id, or the study id ("latest": the newest study); empty for all
};

struct RunData {
    RunRecord run;
    std::vector<IterationRecord> iterations;  // by iteration; the seed is iteration 0
    std::vector<HeldoutRecord> heldout;
    std::string model;                        // see run_model
    int64_t seed = 0;                         // the run's --seed
    std::string study_id, cell;               // from the settings' "study" tag; empty when none
};

struct ReportData {
    ReportScope scope;                       // a study's "latest" resolved to its id
    std::string db_path;
    std::vector<RunData> runs;               // oldest first
    std::optional<StudyRecord> study;        // for a study scope
    std::vector<StudyCellRecord> cells;      // the study's cells, by cell
    PackWeightsSet weights;                  // for the aggregates' S_agg (set by the caller; empty: none)
};

// The "study" object a sweep writes into a run's settings ({"study_id", "cell", "model"}), at the
// top of the settings or in the command line they hold; null when the run has none.
const nlohmann::json& study_tag(const nlohmann::json& settings);

// doc[key] when doc is an object holding a string there, else "" (stored documents of any shape read).
std::string string_field(const nlohmann::json& doc, const char* key);

// The model a run stands for: the study's model when tagged, else the llm proposer's --model, else
// the proposer's name.
std::string run_model(const RunRecord& run);

// Reads the scope's runs (an unknown run or study is an error naming it). A study's runs are those
// its cells name, plus any run tagged with the study's id.
Expected<ReportData> collect_report_data(Store& store, const ReportScope& scope);

}  // namespace kevo
