// `kevo sweep`: runs a study's cells, several at once, each as a `kevo run` child process of the
// same binary (so every run stores, resumes and passes its gate exactly as a lone run does, and a
// crashing candidate cannot take the sweep down). The study and its cells are recorded before any
// run starts and each cell's run id before its run starts, so a sweep killed at any moment resumes:
// finished cells are skipped, interrupted runs continue with `kevo run --resume`. Timing never
// overlaps across the runs: each worker holds its device's lease while it times (device_lease.hpp).
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"
#include "store/store.hpp"
#include "study/study.hpp"

namespace kevo {

enum class CellStatus { pending, running, finished, failed, interrupted };
const char* cell_status_name(CellStatus status);

// What the progress table shows of one cell.
struct CellProgress {
    StudyCell cell;
    CellStatus status = CellStatus::pending;
    std::string run_id;
    int iterations_done = 0;
    std::optional<double> seed_score, best_score;  // the search's own, each from one evaluation
    // What the gate measured for the search's best side by side with the seed (report/run_figures.hpp);
    // absent before the gate, or when it could not time the best.
    std::optional<double> gate_speedup, gate_heldout_speedup;
    double cost_usd = 0;
    int64_t tokens = 0;
    std::string note;  // the outcome, or why it failed
    int device = -1;   // where its run is (or was last) placed
    bool operator==(const CellProgress&) const = default;
};

struct SweepOptions {
    std::string study_path;  // the file, as given
    std::string file_text;   // its content, stored with a new study
    std::string db = "kevo.db";
    std::string out_dir = "kevo-runs";
    bool fresh = false;            // --new: a new study even where an unfinished one of that name exists
    std::string executable;        // the kevo binary (empty: this one)
    // The device pool (--devices): the study's runs spread over these devices of its backend, the
    // study's concurrency on each; empty: the study's one device.
    std::vector<int> devices;
    // A sweep sharded over MPI ranks (rank_sweep.cpp) runs only its share of the cells, continues the
    // study that rank 0 opened, takes the ceilings pinned for each device model by the first rank that
    // has one, and may stop early: after recording the cells, or after pinning the ceilings.
    std::function<bool(size_t cell)> runs_cell;               // empty: every cell
    std::string study_id;                                     // empty: by name, or a new study
    std::map<std::string, nlohmann::json> pinned_ceilings;    // device model -> ceilings (measured where absent)
    enum class Stop { never, after_cells, after_ceilings } stop = Stop::never;
    int rank = 0;  // its ceilings files are its own (ceilings-r1.json, ...): ranks share the sweep's folder
    std::function<void(const std::string&)> say;                       // notices
    std::function<void(const std::vector<CellProgress>&)> on_progress;  // after every change
};

struct SweepSummary {
    std::string study_id;
    bool resumed = false;
    bool interrupted = false;
    int concurrency = 0;           // per device
    std::vector<int> devices;      // the pool at the start
    std::map<int, std::string> devices_left;  // devices that faulted and left the pool, with why
    std::vector<CellProgress> cells;
    std::map<std::string, nlohmann::json> ceilings;  // device model -> the study's ceilings on it
    int count(CellStatus status) const;
};

Expected<SweepSummary> run_sweep(const Study& study, const SweepOptions& options);

class Ranks;
// The study sharded over the ranks of an MPI job (rank_sweep.cpp): cell i runs on rank i % N in that
// rank's shard store (DB.shards/rank-R.db, copied from DB), every device model's ceilings are pinned
// once for all ranks, and rank 0 merges the shards into DB at the end (and, first, any shard an
// earlier, killed invocation left). Rank 0's summary is the whole study's, read from DB after the merge.
Expected<SweepSummary> run_sweep_on_ranks(const Study& study, const SweepOptions& options, const Ranks& ranks);

// The number of runs in flight when the study does not say: 1 on a CPU device (its lease covers all
// its work, so more would only wait), 4 on a GPU (proposers answering slowly keep it busy).
Expected<int> default_concurrency(const Study& study);

}  // namespace kevo
