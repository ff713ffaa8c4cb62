// What a search run stores: the run, every iteration (with its candidate, transcript and
// evaluation), and the held-out gate. Plain data shared by the store, the loop and the reports.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace kevo {

// running: its process holds the run's lock. interrupted: stopped before its gate (Ctrl-C, a kill,
// a crash; read so when the process is gone) and resumable. failed: could not get through its
// first iteration (the seed, the device), or its proposer could not go on (the same permanent error
// again and again; resumable once mended); the reason is in the summary. finished: through the gate.
enum class RunStatus { running, finished, interrupted, failed };
const char* run_status_name(RunStatus status);
std::optional<RunStatus> parse_run_status(const std::string& name);

struct RunRecord {
    std::string run_id;            // "r" + UTC timestamp + random suffix, unique
    std::string task, backend, device, profile;
    std::string proposer, strategy;
    nlohmann::json settings;       // every option the run was started with (for --resume and reports)
    RunStatus status = RunStatus::running;
    std::string created_at, updated_at;  // ISO-8601 UTC
    int iterations_done = 0;       // iterations fully recorded (the seed evaluation is iteration 0)
    std::optional<double> seed_score, best_score;
    std::optional<int64_t> best_candidate_id;
    nlohmann::json summary;        // the final summary (held-out gate etc.) once finished
    int pid = 0;                   // process that ran it last (the run's lock says who holds it now)
};

// What came of one iteration. evaluated: its candidate went through the evaluation (the seed is
// iteration 0). from: the user's starting kernel (`kevo run --from FILE`). no_code / edit_failed:
// the answer held no usable kernel or edit. duplicate: a candidate already evaluated in this run.
// proposer_error: the proposer failed and may succeed next time; permanent_error: it never will
// as configured.
enum class IterationStatus { evaluated, from, no_code, edit_failed, duplicate, proposer_error, permanent_error };
const char* iteration_status_name(IterationStatus status);
std::optional<IterationStatus> parse_iteration_status(const std::string& name);

struct CandidateRecord {
    int64_t id = 0;
    std::string run_id;
    std::string hash;              // content hash of (source, defines)
    std::optional<int64_t> parent_id;
    std::string proposer;
    std::string source;
    std::map<std::string, std::string> defines;
};

// One iteration of the loop: what the proposer was asked and answered, what came of it.
struct IterationRecord {
    std::string run_id;
    int iteration = 0;
    std::optional<int64_t> candidate_id;  // absent when the proposer produced no usable code
    IterationStatus status = IterationStatus::evaluated;
    std::string verdict;           // eval verdict when evaluated
    std::optional<double> score;
    std::string diagnostics;
    bool accepted = false;         // became the incumbent
    std::string prompt, answer;    // the whole transcript of this iteration
    int prompt_tokens = 0, completion_tokens = 0;
    double cost_usd = 0;
    double seconds = 0;            // wall time of the iteration
    nlohmann::json result;         // the EvalResult JSON, when evaluated
    std::string note;              // proposer's note ("BX=32 BY=8", "HTTP 429, retried 3x", ...)
    bool dropout = false;          // began with an optimisation dropout: history withheld, a different approach asked for
    nlohmann::json strategy;       // since schema 3: what the search strategy recorded (island, parent, archive cell)
    // Since schema 4, for a proposal that failed: the failure's class (proposer_failure_name: "auth",
    // "unreachable", ...; empty otherwise) and the last reply's HTTP status (0: none arrived).
    std::string failure;
    int http_status = 0;
    // Since schema 5: the ids of the knowledge notes its prompt carried, and for a correct candidate
    // the promotion rule's relative gain over the kernel it was judged against and the spread the
    // gain had to exceed (re-timed side by side when it looked better; absent before schema 5).
    std::vector<std::string> knowledge;
    std::optional<double> gain, gain_spread;
};

// One kernel the gate examined side by side with the seed.
struct HeldoutRecord {
    std::string run_id;
    std::string role;              // "seed" | "best" (the kernel handed out) | "rejected-<iteration>"
    int64_t candidate_id = 0;
    std::string verdict;           // the worst round's
    std::optional<double> fraction;  // Phi at the held-out size
    double seconds = 0;            // median time at the held-out size
    nlohmann::json result;         // the EvalResult of its median round (or of the round it failed)
    // Since schema 2 (rows written before read as: no iteration, passed, no reason, no speed-ups).
    std::optional<int> iteration;  // the iteration that proposed it
    bool passed = true;            // passed the gate
    std::string reason;            // why it failed ("heldout-incorrect", "slower-than-seed", ...); empty when it passed
    std::optional<double> speedup, speedup_spread;                  // in distribution, against the seed
    std::optional<double> heldout_speedup, heldout_speedup_spread;  // at the held-out size
    nlohmann::json rounds;         // every round's verdicts and times, both sides
};

// A study (`kevo sweep STUDY.toml`): the file as given, so that a report can show it and a reader rerun it.
struct StudyRecord {
    std::string study_id;          // "s" + UTC timestamp + random suffix, unique
    std::string name;              // the study file's name
    std::string file_path, file_text;
    nlohmann::json settings;       // the study as parsed (tasks, models, strategies, seeds, budget, profile)
    std::string created_at, updated_at;  // ISO-8601 UTC
};

// One cell of a study's matrix: a (task, model, strategy, seed), and the run that fills it once started.
struct StudyCellRecord {
    std::string study_id;
    std::string cell;              // "task/model/strategy/seed", unique within the study
    std::string task, model, strategy;
    int64_t seed = 0;
    std::optional<std::string> run_id;
};

}  // namespace kevo
