// The sbatch script that runs a study under SLURM through mpirun, one rank per device (`kevo sweep
// STUDY --dry-run --slurm`, docs/scale.md): printed for the user to keep, edit and submit.
#pragma once

#include <string>

namespace kevo {

struct SlurmJob {
    std::string name;          // the study's name (the job's)
    std::string study_file;    // as the sweep is to read them, from `workdir`
    std::string db, out;
    std::string workdir;       // absolute: where the job starts
    std::string kevo;          // the kevo binary, absolute
    int nodes = 1;
    int ranks_per_node = 1;    // one per device
    bool gpus = false;         // ask SLURM for a GPU per rank
};

std::string sbatch_script(const SlurmJob& job);

}  // namespace kevo
