// See slurm_script.hpp. mpirun inside the allocation starts one rank per task SLURM gave (Open MPI
// reads the allocation itself); each rank takes the device of its place on its node (--devices local),
// so R ranks per node drive the node's R GPUs, and every rank reads and writes the same folders.
#include "study/slurm_script.hpp"

#include <cctype>

#include <fmt/format.h>

#include "core/shell_word.hpp"

namespace kevo {
namespace {

// A job name SLURM and a log file name take as they are.
std::string job_word(const std::string& name) {
    std::string out;
    for (char c : name) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '-';
    return out.empty() ? std::string("study") : out;
}

}  // namespace

std::string sbatch_script(const SlurmJob& job) {
    const std::string name = "kevo-" + job_word(job.name);
    std::string text = fmt::format(
        "#!/bin/bash\n"
        "# kevo sweep of study \"{0}\" under SLURM ({1} node(s) x {2} rank(s), one rank per device), printed by\n"
        "# `kevo sweep {3} --dry-run --slurm`. Each rank sweeps its share of the cells on the device of its\n"
        "# place on its node (--devices local) into its own shard of the store; rank 0 merges the shards\n"
        "# into {4} at the end. Submitting it again continues the study where it stands (docs/scale.md).\n"
        "#SBATCH --job-name={5}\n"
        "#SBATCH --nodes={1}\n"
        "#SBATCH --ntasks-per-node={2}\n",
        job.name, job.nodes, job.ranks_per_node, shell_word(job.study_file), job.db, name);
    if (job.gpus) text += fmt::format("#SBATCH --gpus-per-node={}\n", job.ranks_per_node);
    text += fmt::format("#SBATCH --output={}-%j.log\n", name);
    text += "set -euo pipefail\n";
    text += "cd " + shell_word(job.workdir) + "\n";
    text += shell_command({"mpirun", job.kevo, "sweep", job.study_file, "--db", job.db, "--out", job.out, "--devices",
                           "local"}) +
            "\n";
    return text;
}

}  // namespace kevo
