// What a proposer sees (ProposalContext) and returns (Proposal), and the interface every
// proposer implements: tune (built-in autotuner), llm (OpenAI-compatible endpoint), cmd (any
// program: prompt on stdin, answer on stdout), replay (candidate files in order).
// Held-out sizes and results never enter a ProposalContext.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "eval/eval_types.hpp"
#include "task/task.hpp"

namespace kevo {

struct Attempt {
    int iteration = 0;
    std::string source;
    std::map<std::string, std::string> defines;  // knob values it was evaluated with
    EvalResult result;                            // in-distribution sizes only
};

// The last iteration, when it evaluated nothing: the next prompt says what became of that answer,
// so that a model does not repeat it (the prompt would otherwise differ only in its iteration).
struct UnusedAnswer {
    enum class Kind {
        no_code,         // no fenced kernel and no edits
        edit_failed,     // SEARCH/REPLACE edits that could not be applied
        duplicate,       // a candidate evaluated earlier (duplicate_of says which iteration)
        proposer_error,  // no answer arrived (the proposer's message in detail)
    };
    int iteration = 0;
    Kind kind = Kind::no_code;
    std::string detail;            // the parser's reason or the proposer's message
    int duplicate_of = -1;         // for duplicate: the iteration that evaluated it (0: the seed)
    int in_a_row = 1;              // consecutive iterations that evaluated nothing, this one included
};

// A kernel from elsewhere in the population, shown beside the incumbent (islands: the other
// islands' bests; map-elites: other archive cells' elites).
struct Inspiration {
    std::string label;  // who it is: "island 2's best", "archive cell size=large work=x4"
    Attempt attempt;    // its source, knob values and result (the score is result.score)
};

struct ProposalContext {
    const TaskSpec* spec = nullptr;
    Language language = Language::opencl;
    std::string brief;                  // the task's brief.md
    DeviceInfo device;
    CeilingsUsed ceilings;  // those the seed was scored against
    std::string profile;
    int iteration = 0;                  // the iteration being proposed (1-based; 0 is the seed)
    std::optional<Attempt> previous;    // the last evaluated attempt
    std::optional<UnusedAnswer> unused; // the last iteration, when it evaluated nothing
    Attempt incumbent;                  // the parent the strategy chose (one-plus-one: the best so far)
    std::vector<Attempt> history;       // a few recent attempts, oldest first
    std::vector<Inspiration> inspirations;  // labelled kernels from the rest of the population (may be empty)
    bool fresh_approach = false;        // optimisation dropout: history withheld, ask for a different approach
    uint64_t seed = 0;                  // for stochastic proposers
};

struct Proposal {
    enum class Status {
        ok,          // source holds a candidate
        no_code,     // the answer held no usable code (recorded; the loop goes on)
        edit_failed, // the answer's SEARCH/REPLACE edits could not be applied (recorded; the loop goes on)
        failed,      // the proposer could not answer (transport error after retries, program failed)
        exhausted,   // nothing left to propose (replay at its end, tuner space covered)
    };
    // Why a proposal failed, for the loop's stopping rule (status failed only).
    enum class Failure {
        none,
        transient,  // may succeed next iteration: 429/5xx/timeouts after the retries, a command that failed
        permanent,  // never succeeds as configured: 401/403/404, a rejected model or parameter, an
                    // unresolvable host, a missing command; the run stops after a few identical ones
        fatal,      // the run must stop now (a cost that was required but not reported)
    };
    Status status = Status::ok;
    Failure failure = Failure::none;
    std::string source;
    std::map<std::string, std::string> defines;  // knob values to evaluate with (tuner)
    std::string prompt, answer;                  // the transcript
    int prompt_tokens = 0, completion_tokens = 0;
    double cost_usd = 0;
    std::string note;                            // one line for the progress display and the store
};

class Proposer {
public:
    virtual ~Proposer() = default;
    virtual std::string name() const = 0;
    virtual Proposal propose(const ProposalContext& context) = 0;
    // Every evaluated attempt, in order, including those replayed from the store on --resume, so
    // that a proposer with memory (the tuner) never repeats a point.
    virtual void observe(const Attempt&) {}
    // On --resume: `count` proposals were already consumed by the interrupted run (a replay
    // proposer moves past that many files; most proposers ignore it).
    virtual void skip(int /*count*/) {}
};

}  // namespace kevo
