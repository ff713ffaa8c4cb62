// `kevo run`: the search loop. Evaluates the seed, then each iteration shows the proposer what the
// strategy chose (a parent, the previous attempt, a short history, inspirations from the rest of
// the population; search/strategies/), evaluates its candidate, judges it against what the strategy
// says it must beat (promotion.hpp) and records everything in the store; the search state and the
// population move on by one rule, `apply`. It ends with the gate (gate.hpp): the strategy's top
// --gate-top kernels, best first, re-timed side by side with the seed on every size, held-out
// included; the kernel handed out is the first that passes. A run killed at any point resumes from
// the store.
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "core/json.hpp"
#include "eval/evaluating.hpp"
#include "knowledge/select.hpp"
#include "search/gate.hpp"
#include "search/proposer.hpp"
#include "search/search_state.hpp"
#include "search/strategies/strategy.hpp"
#include "store/store.hpp"

namespace kevo {

struct RunOptions {
    std::string task;
    std::string backend;
    std::string language;           // the candidates' kernel language (kernel_language.hpp); empty: the backend's own
    int device = 0;
    std::string profile;            // resolved (small / paper / large)
    std::string proposer;           // name, for the record
    std::string strategy = "one-plus-one";
    int iterations = 20;            // proposals after the seed (one whose proposer failed is not counted)
    double max_wall_s = 0;          // 0: no limit
    double max_cost_usd = 0;        // 0: no limit
    int64_t max_tokens_total = 0;   // prompt + completion tokens over the run; 0: no limit
    int stagnation_window = 6;      // iterations without improvement before optimisation dropout
    int max_proposer_failures = 3;  // iterations in a row the proposer failed before the run is interrupted
    int history = 4;                // attempts shown to the proposer
    // The knowledge notes a prompt draws from ("shipped", "none" or a folder; knowledge/library.hpp)
    // and their budget in one prompt (estimated tokens).
    std::string knowledge = "shipped";
    int knowledge_tokens = kDefaultKnowledgeTokens;
    int gate_rounds = 3;            // interleaved rounds per kernel the gate examines
    int gate_top = 3;               // kernels of the population the gate examines, best first, before the seed
    int warmup = EvalRequest{}.warmup, repeat = EvalRequest{}.repeat;  // the evaluation's defaults
    int max_repeat = EvalRequest{}.max_repeat;                          // timed runs per size with extra rounds
    double noise_cv = EvalRequest{}.noise_cv;                           // extra rounds while a size's cv is above
    double timeout_s = EvalRequest{}.timeout_s;
    RooflineMode roofline = RooflineMode::static_peak;
    uint64_t seed = 0;              // proposer randomness and correctness inputs
    std::string output_dir;         // where best.<suffix> is written (a folder per run inside)
    std::string from_file;          // --from: the user's starting kernel (iteration 1), its path ...
    std::string from_source;        // ... and its text as read at the start (a resume does not reread it)
    nlohmann::json settings;        // the proposer's options (search/options.hpp), stored with the run
    // The strategy's own options by name ("islands", "migration_every"; search/options.hpp).
    nlohmann::json strategy_options = nlohmann::json::object();
    // The ceilings every evaluation of the run divides by (a Calibration's JSON): pinned when the
    // run starts (given by a sweep, or the device's calibration then), kept on --resume.
    nlohmann::json ceilings;
};

// A kernel the gate did not hand out, kept beside best.<suffix> under a name saying why: the
// search's best that failed (rejected-<reason>), or one within the noise (candidate-within-noise).
struct RejectedKernel {
    int iteration = 0;
    int64_t candidate_id = 0;
    std::string path;    // <out>/<run>/rejected-<reason>.<suffix>
    std::string reason;  // "heldout-incorrect", "slower-than-seed", ... (GateExamination::reason)
    std::string detail;
};
KEVO_JSON_FIELDS(RejectedKernel, iteration, candidate_id, path, reason, detail)

// Why a run stopped before the gate (outcome interrupted): a signal, or a proposer that failed
// --max-proposer-failures times in a row (the server gone, a key refused, ...), which a resume
// continues once mended. none: not interrupted.
enum class Interruption { none, signal, proposer_unavailable };
NLOHMANN_JSON_SERIALIZE_ENUM(Interruption, {{Interruption::none, nullptr},
                                            {Interruption::signal, "signal"},
                                            {Interruption::proposer_unavailable, "proposer_unavailable"}})

// The command that resumes run `run_id`, complete as printed: with --db and --out where they are not
// the defaults (kevo.db, kevo-runs), each word quoted for a POSIX shell where it needs it.
std::string resume_command(const std::string& run_id, const std::string& db, const std::string& output_dir);

// What `kevo run` ends with. Every figure describes the kernel handed out (best_path): the
// search's best when it passed the gate, else the recommended fallback.
struct RunSummary {
    std::string run_id, task, proposer, strategy, stop_reason;
    RunOutcome outcome = RunOutcome::no_gain;
    int recommended = 0;                     // the iteration whose kernel is best_path (0: the seed)
    int iterations = 0;
    std::optional<double> seed_score, best_score;
    std::optional<double> speedup, speedup_spread;  // in distribution, seed time / best time, side by side
    std::optional<double> heldout_fraction;         // Phi of the best
    std::optional<double> heldout_seed_fraction;    // Phi of the seed, from the same rounds
    std::optional<double> heldout_speedup, heldout_speedup_spread;
    std::string heldout_best_verdict;
    std::string best_path;
    std::optional<RejectedKernel> rejected;         // set for best_failed_gate
    std::optional<RejectedKernel> within_noise;     // a kernel correct but not faster beyond the spread, kept
                                                    // beside the seed as candidate-within-noise.<suffix>
    std::vector<GateExamination> gate;              // every kernel the gate examined, in order
    CeilingsUsed ceilings;                          // what the gate's fractions were divided by
    ProposalCounts proposals;                       // what became of the proposals
    double cost_usd = 0;
    nlohmann::json population;                      // islands: each island's best; map-elites: the archive
    Interruption interruption = Interruption::none; // outcome interrupted: why
    std::optional<std::string> resume;              // outcome interrupted: the command that continues the run
};
KEVO_JSON_FIELDS(RunSummary, run_id, task, proposer, strategy, population, outcome, recommended, iterations, seed_score, best_score, speedup,
                 speedup_spread, heldout_fraction, heldout_seed_fraction, heldout_speedup, heldout_speedup_spread,
                 heldout_best_verdict, best_path, rejected, within_noise, gate, ceilings, stop_reason, proposals, cost_usd,
                 interruption, resume)

// What `kevo run --resume` may change: a longer search, larger budgets, and the proposer's
// connection (its settings as the command line gives them, with the segment that records the
// change: cli/cmd_run.cpp); nothing that would change what the stored iterations mean.
struct RunExtension {
    std::optional<int> iterations;
    std::optional<double> max_wall_s, max_cost_usd;
    std::optional<int64_t> max_tokens_total;
    std::optional<int> max_proposer_failures;
    std::optional<nlohmann::json> settings;  // replaces RunOptions::settings
};

class SearchLoop {
public:
    SearchLoop(Evaluating& evaluator, Store& store, Proposer& proposer, std::function<void(const std::string&)> progress);

    // A new run, under `run_id` when given (a sweep names its cells' runs before they start).
    Expected<RunSummary> start(const RunOptions& options, const std::string& run_id = {});
    // Continues the run `run_id` (options come from the store, extended by `extension`); refused
    // while another process holds the run. A finished run continues only when extended.
    Expected<RunSummary> resume(const std::string& run_id, const RunExtension& extension = {});

private:
    Evaluating& evaluator_;
    Store& store_;
    Proposer& proposer_;
    std::function<void(const std::string&)> progress_;

    Expected<RunSummary> drive(RunRecord run, const RunOptions& options);
    Expected<nlohmann::json> ceilings_to_pin(const nlohmann::json& given, const DeviceInfo& device);
    Expected<void> keep_ceilings(RunOptions& options, const std::string& run_id);
};

// The options as stored with a run (RunRecord::settings); a field a stored run lacks keeps its default
// (a run stored before strategy_options keeps its islands and migration_every at the top).
KEVO_JSON_FIELDS(RunOptions, task, backend, language, device, profile, proposer, strategy, iterations, max_wall_s, max_cost_usd,
                 max_tokens_total, max_proposer_failures, stagnation_window, history, knowledge, knowledge_tokens, gate_rounds, gate_top, strategy_options, warmup, repeat,
                 max_repeat, noise_cv, timeout_s, roofline, seed, output_dir, from_file,
                 from_source, settings, ceilings)
Expected<RunOptions> run_options_from_json(const nlohmann::json& j);
// The language of the run's candidates (RunOptions::language, else the backend's own), or an error
// naming the languages the run's backend compiles.
Expected<Language> run_language(const RunOptions& options);
// What the run's strategy is configured with, from its options.
StrategySettings strategy_settings(const RunOptions& options);

}  // namespace kevo
