// See sweep.hpp. One thread: it starts children up to the concurrency, polls them, and reads each
// running cell's progress from the store (the children write it there, every iteration its own
// transaction), so that what the table shows is what a resume would find.
#include "study/sweep.hpp"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <deque>
#include <filesystem>
#include <thread>
#include <tuple>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/registry.hpp"
#include "core/clock.hpp"
#include "core/interrupt.hpp"
#include "core/files.hpp"
#include "core/process.hpp"
#include "eval/calibration.hpp"
#include "eval/evaluator_factory.hpp"
#include "report/run_figures.hpp"
#include "store/run_lock.hpp"
#include "study/child_process.hpp"
#include "study/device_pool.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;
constexpr auto kPollInterval = std::chrono::milliseconds(100);
constexpr auto kRefreshInterval = std::chrono::milliseconds(1000);

CellStatus status_of(RunStatus status) {
    switch (status) {
        case RunStatus::running: return CellStatus::running;
        case RunStatus::finished: return CellStatus::finished;
        case RunStatus::interrupted: return CellStatus::interrupted;
        case RunStatus::failed: return CellStatus::failed;
    }
    return CellStatus::pending;
}

std::string log_name(const StudyCell& cell) {
    std::string name = cell.key;
    for (char& c : name)
        if (c == '/') c = '_';
    return name + ".log";
}

// The last line a child wrote: what a failed run said about why.
std::string last_line(const fs::path& log) {
    std::FILE* f = std::fopen(log.c_str(), "r");
    if (!f) return {};
    std::string line, last;
    char buffer[4096];
    while (std::fgets(buffer, sizeof buffer, f)) {
        line = buffer;
        while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
        if (!line.empty()) last = line;
    }
    std::fclose(f);
    return last;
}

class Sweep {
public:
    Sweep(const Study& study, const SweepOptions& options, Store& store)
        : study_(study), options_(options), store_(store), cells_(study_cells(study)) {
        for (const auto& c : cells_) {
            CellProgress p;
            p.cell = c;
            summary_.cells.push_back(std::move(p));
        }
    }

    Expected<SweepSummary> run() {
        if (auto r = check_environment(); !r) return r.error();
        auto concurrency = study_.concurrency > 0 ? Expected<int>(study_.concurrency) : default_concurrency(study_);
        if (!concurrency) return concurrency.error();
        summary_.concurrency = *concurrency;
        auto backend = resolve_backend_name(study_.backend);
        if (!backend) return backend.error();
        backend_ = *backend;
        summary_.devices = options_.devices.empty() ? std::vector<int>{study_.device} : options_.devices;
        pool_ = DevicePool(summary_.devices, summary_.concurrency);
        if (auto r = open_study(); !r) return r.error();
        auto lock = RunLock::acquire(store_.path(), summary_.study_id);
        if (!lock)
            return make_error(fmt::format("study {} is being swept by another process: {}", summary_.study_id,
                                          lock.error().message));
        if (auto r = record_cells(); !r) return r.error();
        if (options_.stop == SweepOptions::Stop::after_cells) return summary_;
        if (auto r = pin_ceilings(); !r) return r.error();
        if (options_.stop == SweepOptions::Stop::after_ceilings) return summary_;
        return sweep();
    }

private:
    const Study& study_;
    const SweepOptions& options_;
    Store& store_;
    std::vector<StudyCell> cells_;
    SweepSummary summary_;
    fs::path log_dir_;
    struct Active {
        size_t cell;
        int device;
        ChildProcess child;
    };
    std::vector<Active> active_;
    std::vector<bool> recorded_;  // the cell's row names its run (which must exist first: a foreign key)
    std::string backend_;
    DevicePool pool_{{}, 1};
    // The study's pinned ceilings per device of the pool (one file per device model), passed to
    // every new cell's run on that device.
    std::map<int, std::string> ceilings_files_;
    // A cell placed again after its device faulted: the run it replaces and why.
    std::map<size_t, std::pair<std::string, std::string>> replacing_;

    void say(const std::string& line) const {
        if (options_.say) options_.say(line);
    }

    // An API key is named, never written in the file; it must be there before anything starts.
    Expected<void> check_environment() const {
        for (const auto& m : study_.models) {
            const std::string name = m.options.value("api_key_env", std::string());
            if (!name.empty() && !std::getenv(name.c_str()))
                return make_error(fmt::format("{}: model {} takes its API key from ${}, which is not set",
                                              options_.study_path, m.name, name));
        }
        return {};
    }

    // The newest study of this name continues (a finished one has nothing left to run), when its cells
    // still mean the same.
    Expected<void> open_study() {
        if (!options_.study_id.empty()) {
            auto given = store_.load_study(options_.study_id);
            if (!given) return given.error();
            summary_.study_id = given->study_id;
            summary_.resumed = true;
            return {};
        }
        if (!options_.fresh) {
            auto studies = store_.list_studies();
            if (!studies) return studies.error();
            for (const auto& s : *studies) {
                if (s.name != study_.name) continue;
                const auto differences = study_differences(s.settings, study_);
                if (!differences.empty()) {
                    std::string text;
                    for (const auto& d : differences) text += "\n  " + d;
                    return make_error(fmt::format("{}: study \"{}\" ({}) in {} was started with other settings, which "
                                                  "would change what its cells mean:{}\nrestore them to continue it, "
                                                  "or give --new to start a fresh study",
                                                  options_.study_path, s.name, s.study_id, store_.path(), text));
                }
                summary_.study_id = s.study_id;
                summary_.resumed = true;
                return {};
            }
        }
        StudyRecord record;
        record.study_id = timestamped_id('s');
        record.name = study_.name;
        record.file_path = fs::absolute(options_.study_path).string();
        record.file_text = options_.file_text;
        record.settings = study_;
        if (auto r = store_.create_study(record); !r) return r;
        summary_.study_id = record.study_id;
        return {};
    }

    // A cell's run id follows from the study's and the cell's place in the matrix, so that a sweep
    // killed after a run was created, before its row named it, finds that run again.
    std::string run_id_for(size_t i) const { return fmt::format("r{}-{:03}", summary_.study_id.substr(1), i + 1); }

    // Every cell gets its row before anything runs; a cell whose run exists shows what it did so far.
    Expected<void> record_cells() {
        auto stored = store_.load_study_cells(summary_.study_id);
        if (!stored) return stored.error();
        recorded_.assign(cells_.size(), false);
        for (size_t i = 0; i < cells_.size(); ++i) {
            const auto& cell = cells_[i];
            auto row = std::find_if(stored->begin(), stored->end(), [&](const auto& r) { return r.cell == cell.key; });
            if (row == stored->end()) {
                StudyCellRecord rec{summary_.study_id, cell.key, cell.task, cell.model, cell.strategy, cell.seed, {}};
                if (auto r = store_.set_study_cell(rec); !r) return r;
            }
            recorded_[i] = row != stored->end() && row->run_id;
            summary_.cells[i].run_id = recorded_[i] ? *row->run_id : run_id_for(i);
            if (auto r = refresh(i); !r) return r;
        }
        log_dir_ = fs::path(options_.out_dir) / fmt::format("sweep-{}", summary_.study_id);
        std::error_code ec;
        fs::create_directories(log_dir_, ec);
        if (ec) return make_error(fmt::format("cannot create the sweep's log folder {}: {}", log_dir_.string(), ec.message()));
        return {};
    }

    // The study's ceilings, fixed once per device model for all its cells: those an earlier run of the
    // study on that model pinned (a resumed sweep), else that model's first device's calibration now.
    // Written beside the logs for the children.
    Expected<void> pin_ceilings() {
        auto backend = make_backend(backend_);
        const auto infos = backend->probe();
        std::map<std::string, std::string> by_model;  // device name -> its file
        for (int device : summary_.devices) {
            if (device < 0 || device >= static_cast<int>(infos.size()))
                return make_error(fmt::format("device {} is out of range: backend {} has {} device(s)", device, backend_,
                                              infos.size()));
            const std::string& model = infos[static_cast<size_t>(device)].name;
            if (auto known = by_model.find(model); known != by_model.end()) {
                ceilings_files_[device] = known->second;
                continue;
            }
            auto given = options_.pinned_ceilings.find(model);
            auto pinned = given != options_.pinned_ceilings.end() ? Expected<nlohmann::json>(given->second)
                                                                  : pinned_ceilings(model, device);
            if (!pinned) return pinned.error();
            summary_.ceilings[model] = *pinned;
            const bool told = given != options_.pinned_ceilings.end();  // pinned by another rank, which said so
            auto calibration = calibration_from_json(*pinned);
            if (!calibration) return make_error("the study's pinned ceilings cannot be read: " + calibration.error().message);
            const std::string stem = options_.rank == 0 ? std::string("ceilings") : fmt::format("ceilings-r{}", options_.rank);
            const std::string file =
                (log_dir_ / (by_model.empty() ? stem + ".json" : fmt::format("{}-{}.json", stem, by_model.size()))).string();
            if (auto w = write_file_atomic(file, pinned->dump(1) + "\n"); !w) return w.error();
            if (!told)
                say(fmt::format("the study's ceilings on {}: {:.1f} GB/s, {:.1f} GFLOP/s (measured {})", model,
                            calibration->bandwidth_gbs, calibration->fp32_gflops, calibration->measured_at));
            by_model[model] = file;
            ceilings_files_[device] = file;
        }
        return {};
    }

    // A worker on `device` of the study's backend, from this sweep's kevo binary.
    EvaluatorOptions evaluator_options(int device) const {
        EvaluatorOptions eo;
        eo.backend = backend_;
        eo.device = device;
        eo.worker_executable = options_.executable;
        return eo;
    }

    // The ceilings an earlier run of the study pinned on a device of this model, else the device's own.
    Expected<nlohmann::json> pinned_ceilings(const std::string& model, int device) {
        for (const auto& p : summary_.cells) {
            auto run = store_.load_run(p.run_id);
            if (!run) continue;
            const auto pinned = run->settings.value("ceilings", nlohmann::json());
            if (pinned.is_object() && pinned.value("device_name", std::string()) == model) return pinned;
        }
        auto measured = make_evaluator(evaluator_options(device))->ceilings();
        if (!measured) return make_error("the study's ceilings: " + measured.error().message);
        return nlohmann::json(to_json(*measured));
    }

    // The run's state as stored: its status, iterations, scores, spending; the cell's row names the
    // run once it exists.
    Expected<void> refresh(size_t i) {
        CellProgress& p = summary_.cells[i];
        auto run = store_.load_run(p.run_id);
        if (!run) return {};  // not yet created by its child
        if (!recorded_[i]) {
            const StudyCell& c = cells_[i];
            if (auto r = store_.set_study_cell({summary_.study_id, c.key, c.task, c.model, c.strategy, c.seed, p.run_id}); !r)
                return r;
            recorded_[i] = true;
        }
        p.status = status_of(run->status);
        p.device = run->settings.value("device", p.device);
        p.iterations_done = run->iterations_done;
        p.seed_score = run->seed_score;
        p.best_score = run->best_score;
        if (run->summary.is_object()) {
            if (run->status == RunStatus::finished) p.note = run->summary.value("outcome", std::string());
            // A failed run's error, and why a run was interrupted by its proposer (a signal stores none).
            if (run->status == RunStatus::failed || run->status == RunStatus::interrupted)
                p.note = run->summary.value("error", std::string());
        }
        auto iterations = store_.load_iterations(p.run_id);
        if (!iterations) return iterations.error();
        p.cost_usd = 0;
        p.tokens = 0;
        for (const auto& it : *iterations) {
            p.cost_usd += it.cost_usd;
            p.tokens += it.prompt_tokens + it.completion_tokens;
        }
        return refresh_gate(p, std::move(*run), std::move(*iterations));
    }

    // The gate's side-by-side figures, the same the study report aggregates.
    Expected<void> refresh_gate(CellProgress& p, RunRecord run, std::vector<IterationRecord> iterations) {
        p.gate_speedup = p.gate_heldout_speedup = std::nullopt;
        if (run.status != RunStatus::finished) return {};
        auto heldout = store_.load_heldout(p.run_id);
        if (!heldout) return heldout.error();
        RunData d;
        d.run = std::move(run);
        d.iterations = std::move(iterations);
        d.heldout = std::move(*heldout);
        const RunFigures f = run_figures(d);
        if (!f.speedup_from_search) p.gate_speedup = f.speedup;
        p.gate_heldout_speedup = f.heldout_speedup;
        return {};
    }

    std::vector<std::pair<std::string, std::string>> child_environment(const StudyModel& model) const {
        const std::string name = model.options.value("api_key_env", std::string());
        if (name.empty()) return {};
        return {{"KEVO_API_KEY", std::getenv(name.c_str())}};
    }

    // The cell's run on `device`, fresh or resumed.
    Expected<void> start(size_t i, int device) {
        CellProgress& p = summary_.cells[i];
        const StudyCell& cell = cells_[i];
        std::vector<std::string> args;
        if (store_.load_run(p.run_id)) {
            args = {"run", "--resume", p.run_id, "--db", store_.path()};
        } else {
            CellTarget target{store_.path(), options_.out_dir, summary_.study_id, p.run_id, ceilings_files_.at(device)};
            target.device = device;
            if (auto r = replacing_.find(i); r != replacing_.end())
                std::tie(target.replaces, target.replaced_because) = r->second;
            args = run_arguments(study_, cell, target);
            args.insert(args.begin(), "run");
        }
        const std::string exe = options_.executable.empty() ? self_executable() : options_.executable;
        auto child = ChildProcess::spawn(exe, args, child_environment(cell_model(study_, cell)),
                                         (log_dir_ / log_name(cell)).string());
        if (!child) return child.error();
        p.status = CellStatus::running;
        p.note.clear();
        p.device = device;
        active_.push_back({i, device, std::move(*child)});
        return {};
    }

    // Whether a device still works after a run on it failed: a fresh worker opens it (a run fails
    // only for kevo's or the device's reasons; a candidate's faults are verdicts).
    Expected<void> device_health(int device) const {
        auto info = make_evaluator(evaluator_options(device))->device();
        if (!info) return info.error();
        return {};
    }

    enum class Placement { started, waits, failed };

    // A cell's run goes to a free device of the pool: a resumed one to the device it was measured on
    // (its iterations were timed there), a new one to the least busy.
    Placement place(size_t i) {
        CellProgress& p = summary_.cells[i];
        if (auto run = store_.load_run(p.run_id)) {
            const int device = run->settings.value("device", study_.device);
            if (pool_.acquire(device)) return started(i, device);
            if (pool_.contains(device)) return Placement::waits;
            if (!pool_.removed().count(device)) {
                p.status = CellStatus::failed;
                p.note = fmt::format("its run {} was measured on device {}, which --devices leaves out; give that device "
                                     "to continue it", p.run_id, device);
                return Placement::failed;
            }
            replace(i, device);
        }
        auto device = pool_.acquire();
        return device ? started(i, *device) : Placement::waits;
    }

    Placement started(size_t i, int device) {
        if (auto r = start(i, device); !r) {
            pool_.release(device);
            summary_.cells[i].status = CellStatus::failed;
            summary_.cells[i].note = r.error().message;
            return Placement::failed;
        }
        return Placement::started;
    }

    // The cell starts again as a new run (the next free id after its own), which names the run it
    // replaces; that run stays in the store as it ended.
    void replace(size_t i, int device) {
        CellProgress& p = summary_.cells[i];
        const std::string old = p.run_id;
        const std::string base = run_id_for(i);
        for (int n = 2;; ++n) {
            p.run_id = fmt::format("{}-{}", base, n);
            if (!store_.load_run(p.run_id)) break;
        }
        recorded_[i] = false;
        replacing_[i] = {old, fmt::format("device {} faulted and left the pool: {}", device, pool_.removed().at(device))};
        say(fmt::format("cell {}: run {} replaced by {} ({})", p.cell.key, old, p.run_id, replacing_[i].second));
    }

    // After a failed run, the device is checked; one that no longer works leaves the pool and the
    // cell goes back to the queue, to be placed elsewhere.
    bool device_faulted(size_t i, int device) {
        if (summary_.cells[i].status != CellStatus::failed) return false;
        auto healthy = device_health(device);
        if (healthy) return false;
        pool_.remove(device, healthy.error().message);
        say(fmt::format("device {} left the pool: {}", device, healthy.error().message));
        return true;
    }

    // A child ended: the store says how its run ended; a child that never got its run going says so in its log.
    void ended(size_t i, int exit_status) {
        CellProgress& p = summary_.cells[i];
        if (auto r = refresh(i); !r) p.note = r.error().message;
        if (p.status == CellStatus::running || p.status == CellStatus::pending) {
            p.status = exit_status > 128 ? CellStatus::interrupted : CellStatus::failed;
        }
        if (p.status == CellStatus::failed && p.note.empty())
            p.note = fmt::format("exit {}: {}", exit_status, last_line(log_dir_ / log_name(cells_[i])));
    }

    void report(std::vector<CellProgress>& shown) const {
        if (shown == summary_.cells) return;
        shown = summary_.cells;
        if (options_.on_progress) options_.on_progress(shown);
    }

    // Another process driving a cell's run (a second sweep, a resume by hand) keeps it.
    bool held_elsewhere(const CellProgress& p) const {
        return RunLock::probe(store_.path(), p.run_id) == RunLock::State::held;
    }

    Expected<SweepSummary> sweep() {
        std::vector<size_t> todo;
        for (size_t i = 0; i < cells_.size(); ++i) {
            const CellProgress& p = summary_.cells[i];
            if (p.status == CellStatus::finished || (options_.runs_cell && !options_.runs_cell(i))) continue;
            if (held_elsewhere(p)) {
                say(fmt::format("cell {}: run {} is being run by another process; left to it", p.cell.key, p.run_id));
                continue;
            }
            todo.push_back(i);
        }
        const size_t done = cells_.size() - todo.size();
        if (options_.runs_cell)
            say(fmt::format("study {} ({}): {} of its {} cells to run on rank {}", study_.name, summary_.study_id,
                            todo.size(), cells_.size(), options_.rank));
        else if (summary_.resumed)
            say(fmt::format("continuing study {} ({}): {} of {} cells finished or running elsewhere, {} to run",
                            study_.name, summary_.study_id, done, cells_.size(), todo.size()));
        else
            say(fmt::format("study {} ({}): {} cells, {} at a time{}", study_.name, summary_.study_id, cells_.size(),
                            summary_.concurrency,
                            summary_.devices.size() > 1
                                ? fmt::format(" on each of devices {}", fmt::join(summary_.devices, ", "))
                                : std::string()));
        std::vector<CellProgress> shown;
        report(shown);
        std::deque<size_t> pending(todo.begin(), todo.end());
        bool forwarded = false;
        auto last_refresh = Clock::now();
        while (!pending.empty() || !active_.empty()) {
            if (interrupt_requested() && !forwarded) {
                for (auto& a : active_) a.child.signal(SIGINT);  // each winds down, resumable
                forwarded = true;
            }
            if (pool_.empty()) {
                for (size_t i : pending) {
                    summary_.cells[i].status = CellStatus::failed;
                    summary_.cells[i].note = "no device is left in the pool";
                }
                pending.clear();
            }
            for (auto it = pending.begin(); !interrupt_requested() && it != pending.end();)
                it = place(*it) == Placement::waits ? std::next(it) : pending.erase(it);
            if (interrupt_requested() && active_.empty()) break;
            for (auto it = active_.begin(); it != active_.end();) {
                if (auto status = it->child.poll()) {
                    ended(it->cell, *status);
                    pool_.release(it->device);
                    if (device_faulted(it->cell, it->device)) pending.push_back(it->cell);
                    it = active_.erase(it);
                } else {
                    ++it;
                }
            }
            if (Clock::now() - last_refresh >= kRefreshInterval) {
                for (auto& a : active_) {
                    if (auto r = refresh(a.cell); !r) say(fmt::format("cell {}: {}", cells_[a.cell].key, r.error().message));
                    summary_.cells[a.cell].status = CellStatus::running;  // its child lives, whatever the store says yet
                }
                last_refresh = Clock::now();
            }
            report(shown);
            std::this_thread::sleep_for(kPollInterval);
        }
        report(shown);
        summary_.interrupted = interrupt_requested();
        summary_.devices_left = pool_.removed();
        return summary_;
    }
};

}  // namespace

const char* cell_status_name(CellStatus status) {
    switch (status) {
        case CellStatus::pending: return "pending";
        case CellStatus::running: return "running";
        case CellStatus::finished: return "finished";
        case CellStatus::failed: return "failed";
        case CellStatus::interrupted: return "interrupted";
    }
    return "?";
}

int SweepSummary::count(CellStatus status) const {
    return static_cast<int>(std::count_if(cells.begin(), cells.end(), [&](const auto& c) { return c.status == status; }));
}

Expected<int> default_concurrency(const Study& study) {
    auto backend_name = resolve_backend_name(study.backend);
    if (!backend_name) return backend_name.error();
    auto backend = make_backend(*backend_name);
    const auto devices = backend->probe();
    if (devices.empty()) return make_error(fmt::format("no {} device: {}", *backend_name, backend->unavailable_reason()));
    if (study.device < 0 || study.device >= static_cast<int>(devices.size()))
        return make_error(fmt::format("device {} is out of range: backend {} has {} device(s)", study.device,
                                      *backend_name, devices.size()));
    return devices[static_cast<size_t>(study.device)].is_cpu ? 1 : 4;
}

Expected<SweepSummary> run_sweep(const Study& study, const SweepOptions& options) {
    auto store = Store::open(options.db);
    if (!store) return store.error();
    return Sweep(study, options, **store).run();
}

}  // namespace kevo
