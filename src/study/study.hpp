// A study (`kevo sweep STUDY.toml`, docs/study.md): a matrix of runs, tasks x models x strategies
// x seeds, with one budget matched across every cell. This is the study as parsed and checked
// (study_file.hpp reads it); each cell becomes one `kevo run`, whose command line is built here.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/json.hpp"

namespace kevo {

// The budget of every cell (0: no limit).
struct StudyBudget {
    int iterations = 20;
    int64_t max_tokens = 0;  // prompt + completion tokens over the run
    double max_cost_usd = 0;
    double max_wall_s = 0;
};
KEVO_JSON_FIELDS(StudyBudget, iterations, max_tokens, max_cost_usd, max_wall_s)

// One proposer with its settings: the built-in tuner, a replayed folder, a command, an LLM endpoint.
struct StudyModel {
    std::string name;          // the label of its cells and reports ([A-Za-z0-9._-]+)
    std::string proposer;      // tune | llm | cmd | replay
    nlohmann::json options;    // its proposer's options (search/options.hpp) as given (paths absolute, {task} kept)
};
KEVO_JSON_FIELDS(StudyModel, name, proposer, options)

struct Study {
    std::string name;
    std::string profile;       // empty: kevo run's default for the device
    std::string backend = "auto";
    int device = 0;
    std::vector<std::string> tasks, strategies;
    std::vector<int64_t> seeds;
    int concurrency = 0;       // runs in flight; 0: the default for the device
    StudyBudget budget;
    nlohmann::json run_options = nlohmann::json::object();  // [run]: the run options a study sets (search/options.hpp)
    std::vector<StudyModel> models;
};
KEVO_JSON_FIELDS(Study, name, profile, backend, device, tasks, strategies, seeds, concurrency, budget, run_options, models)

// One cell: a run of one task by one model under one strategy and seed.
struct StudyCell {
    std::string key;           // "task/model/strategy/seed"
    std::string task, model, strategy;
    int64_t seed = 0;
    bool operator==(const StudyCell&) const = default;
};

// Every cell, task-major (the order they are started in).
std::vector<StudyCell> study_cells(const Study& study);
const StudyModel& cell_model(const Study& study, const StudyCell& cell);

// The replay folder of `model` for `task` ({task} substituted); empty for other proposers.
std::string replay_folder(const StudyModel& model, const std::string& task);
// The kernel file every run of `task` starts from ([run] from, {task} substituted); empty when none.
std::string start_kernel(const Study& study, const std::string& task);

// Where a cell's run goes: the store, the folder of best kernels, the study and the run's id.
struct CellTarget {
    std::string db, out_dir, study_id, run_id;
    std::string ceilings_file;  // the study's pinned ceilings (empty: the run pins the device's own)
    int device = -1;            // the device of a sweep's pool the run is placed on; -1: the study's
    // A run started in place of another whose device faulted: that run's id and why (in the study tag).
    std::string replaces = {}, replaced_because = {};
};
// `kevo run`'s arguments (after "run") for a fresh run of the cell, tagged with its study.
std::vector<std::string> run_arguments(const Study& study, const StudyCell& cell, const CellTarget& target);

// What the stored settings of a study say that differs from `now`, one line per difference
// ("budget.iterations: 8 stored, 12 in the file"); the concurrency may change and is left out.
std::vector<std::string> study_differences(const nlohmann::json& stored, const Study& now);

}  // namespace kevo
