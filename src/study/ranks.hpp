// The ranks of an MPI job running `kevo sweep` (`mpirun -np N kevo sweep STUDY.toml`): which one this
// process is, and the one collective step a sharded sweep needs, every rank's JSON gathered to all.
// Outside mpirun (or in a kevo built without MPI, launched alone) it is rank 0 of 1. MPI is optional at
// build time (find_package(MPI)); a kevo without it that finds itself one of several ranks says so.
#pragma once

#include <memory>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"

namespace kevo {

class Ranks {
public:
    // Joins the MPI job this process was started in (MPI_Init), if any. Once per process.
    static Expected<std::unique_ptr<Ranks>> join();
    ~Ranks();  // MPI_Finalize
    Ranks(const Ranks&) = delete;
    Ranks& operator=(const Ranks&) = delete;

    int rank() const { return rank_; }
    int size() const { return size_; }
    bool single() const { return size_ == 1; }

    // Every rank's `mine`, by rank; a barrier too. An error ends the job for every rank (MPI_Abort
    // follows from MPI's own error handler).
    Expected<std::vector<nlohmann::json>> all_gather(const nlohmann::json& mine) const;

private:
    Ranks(int rank, int size, bool initialised) : rank_(rank), size_(size), initialised_(initialised) {}
    int rank_ = 0, size_ = 1;
    bool initialised_ = false;  // MPI_Init was called here
};

// Whether this kevo was built with MPI.
bool built_with_mpi();

}  // namespace kevo
