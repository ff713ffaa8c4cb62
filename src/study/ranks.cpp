// See ranks.hpp. The launcher's environment says whether this process is one rank of several (Open
// MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE of MPICH's and SLURM's launchers), so a
// lone `kevo sweep` never initialises MPI (whose start-up costs time and may print).
#include "study/ranks.hpp"

#include <cstdlib>
#include <string>

#include <fmt/format.h>

#ifdef KEVO_HAVE_MPI
#include <mpi.h>
#endif

namespace kevo {
namespace {

int launcher_size() {
    for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"})
        if (const char* value = std::getenv(name)) return std::max(1, std::atoi(value));
    return 1;
}

}  // namespace

bool built_with_mpi() {
#ifdef KEVO_HAVE_MPI
    return true;
#else
    return false;
#endif
}

Expected<std::unique_ptr<Ranks>> Ranks::join() {
    const int launched = launcher_size();
    if (launched == 1) return std::unique_ptr<Ranks>(new Ranks(0, 1, false));
#ifdef KEVO_HAVE_MPI
    int provided = 0;
    if (MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS)
        return make_error("MPI_Init failed: this process was started as one of several ranks but cannot join them");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rank = 0, size = 1;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    return std::unique_ptr<Ranks>(new Ranks(rank, size, true));
#else
    return make_error(fmt::format("this process is one of {} ranks (mpirun), but this kevo was built without MPI: "
                                  "install Open MPI (Debian: openmpi-bin libopenmpi-dev) and configure kevo again",
                                  launched));
#endif
}

Ranks::~Ranks() {
#ifdef KEVO_HAVE_MPI
    if (initialised_) MPI_Finalize();
#endif
}

Expected<std::vector<nlohmann::json>> Ranks::all_gather(const nlohmann::json& mine) const {
    if (single()) return std::vector<nlohmann::json>{mine};
#ifdef KEVO_HAVE_MPI
    const std::string text = mine.dump();
    const int length = static_cast<int>(text.size());
    std::vector<int> lengths(static_cast<size_t>(size_)), offsets(static_cast<size_t>(size_));
    if (MPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, MPI_COMM_WORLD) != MPI_SUCCESS)
        return make_error("MPI_Allgather failed: a rank of the sweep is gone");
    int total = 0;
    for (size_t r = 0; r < lengths.size(); ++r) offsets[r] = total, total += lengths[r];
    std::string all(static_cast<size_t>(total), '\0');
    if (MPI_Allgatherv(text.data(), length, MPI_CHAR, all.data(), lengths.data(), offsets.data(), MPI_CHAR,
                       MPI_COMM_WORLD) != MPI_SUCCESS)
        return make_error("MPI_Allgatherv failed: a rank of the sweep is gone");
    std::vector<nlohmann::json> out;
    for (size_t r = 0; r < lengths.size(); ++r)
        out.push_back(nlohmann::json::parse(all.substr(static_cast<size_t>(offsets[r]), static_cast<size_t>(lengths[r]))));
    return out;
#else
    return make_error("not built with MPI");
#endif
}

}  // namespace kevo
