// `kevo run`: the search loop. Evaluates the seed, then each iteration shows the proposer the
// incumbent, the previous attempt and a short history, evaluates its candidate, records everything
// in the store and lets the (1+1) strategy decide. It ends with the gate: seed and best re-timed
// side by side, interleaved, on the in-distribution sizes and on the held-out size that the
// proposer never saw. A run killed at any point resumes from the store.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "eval/evaluator.hpp"
#include "search/proposer.hpp"
#include "store/store.hpp"

namespace kevo {

struct RunOptions {
    std::string task;
    std::string backend;
    int device = 0;
    std::string profile;            // resolved (small / paper / large)
    std::string proposer;           // name, for the record
    std::string strategy = "one-plus-one";
    int iterations = 20;            // proposals after the seed
    double max_wall_s = 0;          // 0: no limit
    double max_cost_usd = 0;        // 0: no limit
    int stagnation_window = 6;      // iterations without improvement before optimisation dropout
    int history = 4;                // attempts shown to the proposer
    int warmup = 3, repeat = 10;
    double timeout_s = 60;
    RooflineMode roofline = RooflineMode::static_peak;
    uint64_t seed = 0;              // proposer randomness and correctness inputs
    std::string output_dir;         // where best.<suffix> is written (a folder per run inside)
    nlohmann::json settings;        // the command line as given, stored with the run
};

struct RunSummary {
    std::string run_id, task, proposer, stop_reason;
    int iterations = 0;
    std::optional<double> seed_score, best_score;
    std::optional<double> speedup;           // in-distribution, seed time / best time, side by side
    std::optional<double> heldout_fraction;  // Phi of the best
    std::optional<double> heldout_seed_fraction;
    std::optional<double> heldout_speedup;
    std::string best_path;
    std::string best_verdict_heldout;
    double cost_usd = 0;
    nlohmann::json to_json() const;
};

class SearchLoop {
public:
    SearchLoop(Evaluator& evaluator, Store& store, Proposer& proposer, std::function<void(const std::string&)> progress);

    // A new run.
    Expected<RunSummary> start(const RunOptions& options);
    // Continues the run `run_id` (options come from the store).
    Expected<RunSummary> resume(const std::string& run_id);

private:
    Evaluator& evaluator_;
    Store& store_;
    Proposer& proposer_;
    std::function<void(const std::string&)> progress_;

    Expected<RunSummary> drive(RunRecord run, const RunOptions& options);
};

RunOptions run_options_from_json(const nlohmann::json& j);
nlohmann::json to_json(const RunOptions& o);

}  // namespace kevo
