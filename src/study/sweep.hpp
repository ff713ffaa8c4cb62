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
    int count(CellStatus status) const;
};

Expected<SweepSummary> run_sweep(const Study& study, const SweepOptions& options);

// The number of runs in flight when the study does not say: 1 on a CPU device (its lease covers all
// its work, so more would only wait), 4 on a GPU (proposers answering slowly keep it busy).
Expected<int> default_concurrency(const Study& study);

}  // namespace kevo
