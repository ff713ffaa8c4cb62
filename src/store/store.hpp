// The SQLite store (WAL mode): runs, candidates (deduplicated by content hash within a run),
// iterations with transcripts and evaluations, held-out results, studies and their cells. Every write is its own
// transaction, so a run killed at any point loses at most the iteration in flight.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/expected.hpp"
#include "store/records.hpp"

struct sqlite3;

namespace kevo {

class Store {
public:
    enum class Access { read_write, read_only };
    // read_write: opens, creating and migrating as needed. read_only: opens an existing store
    // without writing anything to it (a read-only file, an empty file stay as they are).
    static Expected<std::unique_ptr<Store>> open(const std::string& path, Access access = Access::read_write);
    ~Store();
    Store(const Store&) = delete;
    Store& operator=(const Store&) = delete;

    Expected<void> create_run(const RunRecord& run);
    Expected<void> update_run(const RunRecord& run);  // by run_id; sets updated_at
    Expected<RunRecord> load_run(const std::string& run_id);  // error names the id when absent
    Expected<std::vector<RunRecord>> list_runs();     // newest first; "running" runs whose pid is gone read as "interrupted"

    // Returns the id of the candidate with this (run_id, hash), inserting it if new.
    Expected<int64_t> add_candidate(const CandidateRecord& candidate);
    Expected<CandidateRecord> load_candidate(int64_t id);
    Expected<void> add_iteration(const IterationRecord& iteration);  // replaces a row with the same (run, iteration)
    Expected<std::vector<IterationRecord>> load_iterations(const std::string& run_id);  // by iteration
    Expected<void> add_heldout(const HeldoutRecord& heldout);
    // Forgets the gate's rows of a run (a finished run searched further runs its gate again).
    Expected<void> clear_heldout(const std::string& run_id);
    // Removes the run with its candidates, iterations and held-out rows (error names an unknown id).
    Expected<void> delete_run(const std::string& run_id);
    Expected<std::vector<HeldoutRecord>> load_heldout(const std::string& run_id);

    // Studies (store_studies.cpp). create_study refuses an id that exists.
    Expected<void> create_study(const StudyRecord& study);
    Expected<StudyRecord> load_study(const std::string& study_id);  // error names the id when absent
    Expected<std::vector<StudyRecord>> list_studies();               // newest first
    // Inserts the cell, or replaces the row with the same (study_id, cell); touches the study's updated_at.
    Expected<void> set_study_cell(const StudyCellRecord& cell);
    Expected<std::vector<StudyCellRecord>> load_study_cells(const std::string& study_id);  // by cell

    // Shards of a sweep spread over MPI ranks (store_merge.cpp). make_shard writes a consistent copy
    // of the whole store to a new file (VACUUM INTO) with a baseline of its run rows. merge_from takes
    // in the runs a shard changed since (created, or whose row differs from its baseline): each
    // replaces this store's rows of that run whole (candidates renumbered), so a run is never recorded
    // twice and an unchanged copy never puts back an older run; the shard's studies and its cells that
    // name a run follow.
    struct MergeCounts {
        int runs_added = 0, runs_replaced = 0, cells_set = 0;
    };
    Expected<void> make_shard(const std::string& path);
    Expected<MergeCounts> merge_from(const std::string& shard_path);

    const std::string& path() const { return path_; }

private:
    Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}
    sqlite3* db_;
    std::string path_;
};

}  // namespace kevo
