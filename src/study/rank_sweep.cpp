// The study sharded over MPI ranks (see sweep.hpp, docs/scale.md). Each rank is an ordinary sweep of
// its share of the cells into its own shard store; the ranks meet only at four gathers: the study
// rank 0 opened, the shards copied, the ceilings pinned (in rank order, so the first rank with a
// device model measures it and every other rank takes its figures), and the end, after which rank 0
// merges the shards. Shards, not rank 0 writing for all: every write stays a local SQLite transaction
// (SQLite's locks are not safe on the network file systems that clusters share), and a merge keyed by
// run id takes only the whole runs a shard changed since it was copied (Store::merge_from), so no run
// is recorded twice and no rank's unchanged copy puts back another rank's older run.
#include <filesystem>
#include <system_error>

#include <fmt/format.h>

#include "store/run_lock.hpp"
#include "study/ranks.hpp"
#include "study/sweep.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;

fs::path shard_folder(const std::string& db) { return fs::path(db + ".shards"); }
fs::path shard_path(const std::string& db, int rank) { return shard_folder(db) / fmt::format("rank-{}.db", rank); }

void remove_store_files(const fs::path& path) {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path.string() + suffix, ec);
    fs::remove_all(path.string() + ".locks", ec);
}

// A shard whose study a live sweep still holds (an earlier job winding down) is not taken: its
// later writes would be lost with the file.
Expected<void> shard_in_use(const std::string& path) {
    auto shard = Store::open(path, Store::Access::read_only);
    if (!shard) return make_error(fmt::format("cannot read the shard {}: {}", path, shard.error().message));
    auto studies = (*shard)->list_studies();
    if (!studies) return studies.error();
    for (const auto& study : *studies)
        if (RunLock::probe(path, study.study_id) == RunLock::State::held)
            return make_error(fmt::format("the shard {} is still in use by a sweep of study {} (an earlier job still "
                                          "ending?); run the command again once it has ended", path, study.study_id));
    return {};
}

// Every shard in the folder (this invocation's, or one a killed earlier invocation left) into the
// study's store, then gone.
Expected<void> merge_shards(Store& store, const SweepOptions& options) {
    std::error_code ec;
    const fs::path folder = shard_folder(options.db);
    if (!fs::exists(folder, ec)) return {};
    for (const auto& entry : fs::directory_iterator(folder, ec)) {
        const fs::path& path = entry.path();
        if (path.extension() != ".db") continue;
        if (auto busy = shard_in_use(path.string()); !busy) return busy;
        auto counts = store.merge_from(path.string());
        if (!counts) return make_error(fmt::format("cannot merge the shard {}: {}", path.string(), counts.error().message));
        if (options.say && (counts->runs_added || counts->runs_replaced))
            options.say(fmt::format("merged {}: {} new runs, {} updated, {} cells", path.string(), counts->runs_added,
                                    counts->runs_replaced, counts->cells_set));
        remove_store_files(path);
    }
    return {};
}

// A step's outcome as every rank sees it: an error on any rank ends the sweep on all, naming the rank.
nlohmann::json outcome(const Expected<void>& r) { return r ? nlohmann::json::object() : nlohmann::json{{"error", r.error().message}}; }

Expected<std::vector<nlohmann::json>> gather_checked(const Ranks& ranks, const nlohmann::json& mine) {
    auto all = ranks.all_gather(mine);
    if (!all) return all.error();
    for (size_t r = 0; r < all->size(); ++r)
        if ((*all)[r].contains("error")) return make_error(fmt::format("rank {}: {}", r, (*all)[r]["error"].get<std::string>()));
    return all;
}

class RankSweep {
public:
    RankSweep(const Study& study, const SweepOptions& options, const Ranks& ranks)
        : study_(study), options_(options), ranks_(ranks), shard_(shard_path(options.db, ranks.rank()).string()) {}

    Expected<SweepSummary> run() {
        if (auto r = open_study(); !r) return r.error();
        if (auto r = copy_shard(); !r) return r.error();
        if (auto r = pin_ceilings(); !r) return r.error();
        auto mine = sweep_share();
        auto ended = ranks_.all_gather(mine ? nlohmann::json{{"interrupted", mine->interrupted}} : outcome(mine.error()));
        if (!ended) return ended.error();
        if (ranks_.rank() != 0) return mine;
        return whole_study(*ended, mine);
    }

private:
    const Study& study_;
    const SweepOptions& options_;
    const Ranks& ranks_;
    const std::string shard_;
    std::string study_id_;
    std::map<std::string, nlohmann::json> ceilings_;

    SweepOptions with(const std::string& db, SweepOptions::Stop stop) const {
        SweepOptions o = options_;
        o.db = db;
        o.stop = stop;
        o.study_id = study_id_;
        o.pinned_ceilings = ceilings_;
        o.rank = ranks_.rank();
        if (ranks_.rank() != 0) o.say = nullptr;
        return o;
    }

    // Rank 0 takes in what an earlier invocation left, then opens the study and records its cells.
    Expected<void> open_study() {
        nlohmann::json mine = nlohmann::json::object();
        if (ranks_.rank() == 0) {
            auto opened = [&]() -> Expected<std::string> {
                auto store = Store::open(options_.db);
                if (!store) return store.error();
                if (auto r = merge_shards(**store, options_); !r) return r.error();
                auto summary = run_sweep(study_, with(options_.db, SweepOptions::Stop::after_cells));
                if (!summary) return summary.error();
                return summary->study_id;
            }();
            mine = opened ? nlohmann::json{{"study_id", *opened}} : outcome(opened.error());
        }
        auto all = gather_checked(ranks_, mine);
        if (!all) return all.error();
        study_id_ = (*all)[0]["study_id"].get<std::string>();
        return {};
    }

    Expected<void> copy_shard() {
        auto copied = [&]() -> Expected<void> {
            std::error_code ec;
            fs::create_directories(shard_folder(options_.db), ec);
            if (ec) return make_error(fmt::format("cannot create {}: {}", shard_folder(options_.db).string(), ec.message()));
            remove_store_files(shard_);
            auto store = Store::open(options_.db);  // read-write: the shard is attached to it to be written
            if (!store) return store.error();
            return (*store)->make_shard(shard_);
        }();
        auto all = gather_checked(ranks_, outcome(copied));
        if (!all) return all.error();
        return {};
    }

    // Rank by rank: each pins the models the ranks before it did not have.
    Expected<void> pin_ceilings() {
        for (int turn = 0; turn < ranks_.size(); ++turn) {
            nlohmann::json mine = nlohmann::json::object();
            if (turn == ranks_.rank()) {
                auto pinned = run_sweep(study_, with(shard_, SweepOptions::Stop::after_ceilings));
                mine = pinned ? nlohmann::json{{"ceilings", pinned->ceilings}} : outcome(pinned.error());
            }
            auto all = gather_checked(ranks_, mine);
            if (!all) return all.error();
            const nlohmann::json pinned = (*all)[static_cast<size_t>(turn)].value("ceilings", nlohmann::json::object());
            for (const auto& [model, figures] : pinned.items()) ceilings_.emplace(model, figures);
        }
        return {};
    }

    Expected<SweepSummary> sweep_share() {
        SweepOptions o = with(shard_, SweepOptions::Stop::never);
        const size_t size = static_cast<size_t>(ranks_.size()), rank = static_cast<size_t>(ranks_.rank());
        o.runs_cell = [size, rank](size_t cell) { return cell % size == rank; };
        if (rank != 0) o.on_progress = nullptr;
        return run_sweep(study_, o);
    }

    // After every rank ended: the shards merged into the study's store, whose cells are the summary.
    Expected<SweepSummary> whole_study(const std::vector<nlohmann::json>& ended, const Expected<SweepSummary>& mine) {
        auto store = Store::open(options_.db);
        if (!store) return store.error();
        if (auto r = merge_shards(**store, options_); !r) return r.error();
        store->reset();
        for (size_t r = 0; r < ended.size(); ++r)
            if (ended[r].contains("error")) return make_error(fmt::format("rank {}: {}", r, ended[r]["error"].get<std::string>()));
        auto whole = run_sweep(study_, with(options_.db, SweepOptions::Stop::after_cells));
        if (!whole) return whole.error();
        whole->resumed = mine->resumed;
        whole->concurrency = mine->concurrency;
        whole->devices = mine->devices;
        whole->devices_left = mine->devices_left;
        for (const auto& e : ended) whole->interrupted = whole->interrupted || e.value("interrupted", false);
        return whole;
    }
};

}  // namespace

Expected<SweepSummary> run_sweep_on_ranks(const Study& study, const SweepOptions& options, const Ranks& ranks) {
    if (ranks.single()) return run_sweep(study, options);
    return RankSweep(study, options, ranks).run();
}

}  // namespace kevo
