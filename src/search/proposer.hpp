// What a proposer sees (ProposalContext) and returns (Proposal), and the interface every
// proposer implements: tune (built-in autotuner), llm (OpenAI-compatible endpoint), cmd (any
// program: prompt on stdin, answer on stdout), replay (candidate files in order).
// Held-out sizes and results never enter a ProposalContext.
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.hpp"
#include "eval/eval_types.hpp"
#include "knowledge/note.hpp"
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
    Language language = language_named("opencl");
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
    // The knowledge notes chosen for this task, language and device (--knowledge), most specific first.
    std::vector<KnowledgeNote> knowledge;
    bool fresh_approach = false;        // optimisation dropout: history withheld, ask for a different approach
    uint64_t seed = 0;                  // for stochastic proposers
    // When the run must stop (what --max-wall leaves): a request, its retries and a command are cut
    // there, and the proposal then fails as ProposerFailure::deadline. Unset: no limit but their own.
    std::optional<std::chrono::steady_clock::time_point> deadline;
};

// Why a proposal failed, by class: read from the HTTP status, the error body's type/code field, the
// transport's error code or the command's exit, never from the wording of a message (a request id, a
// token count or the retry history in it changes nothing).
enum class ProposerFailure {
    none,
    auth,                   // 401/403, a key refused or missing (LiteLLM's 400 no_db_connection)
    not_found,              // 404: the URL or the model does not exist
    bad_request_parameter,  // 400/422 invalid_request_error: the model or a parameter is rejected as configured
    context_exceeded,       // the prompt is longer than the model's context window
    bad_request,            // another 4xx
    quota_exhausted,        // the account's credit or quota is spent (insufficient_quota)
    rate_limited,           // 429 (after the retries)
    server_error,           // 5xx (after the retries)
    unreachable,            // connection refused or reset, DNS, TLS, a URL that cannot be used
    malformed_reply,        // a 2xx that is not a usable chat completion (no choices, not JSON, a stream not asked for)
    stream_error,           // an error event inside a stream that names no HTTP-like status
    timeout,                // the request (or, streaming, the silence between bytes) took too long
    cost_unknown,           // --cost-from-server and the reply carries no cost
    command_missing,        // cmd: the shell cannot find or run the command (exit 127/126)
    command_failed,         // cmd: a non-zero exit or a signal
    interrupted,            // SIGINT/SIGTERM arrived during the request: not the proposer's fault
    deadline,               // the run's deadline (ProposalContext::deadline) came first: not the proposer's fault
};

// "auth", "rate_limited", ...: the name stored with an iteration and shown in notes.
inline const char* proposer_failure_name(ProposerFailure f) {
    switch (f) {
        case ProposerFailure::none: return "none";
        case ProposerFailure::auth: return "auth";
        case ProposerFailure::not_found: return "not_found";
        case ProposerFailure::bad_request_parameter: return "bad_request_parameter";
        case ProposerFailure::context_exceeded: return "context_exceeded";
        case ProposerFailure::bad_request: return "bad_request";
        case ProposerFailure::quota_exhausted: return "quota_exhausted";
        case ProposerFailure::rate_limited: return "rate_limited";
        case ProposerFailure::server_error: return "server_error";
        case ProposerFailure::unreachable: return "unreachable";
        case ProposerFailure::malformed_reply: return "malformed_reply";
        case ProposerFailure::stream_error: return "stream_error";
        case ProposerFailure::timeout: return "timeout";
        case ProposerFailure::cost_unknown: return "cost_unknown";
        case ProposerFailure::command_missing: return "command_missing";
        case ProposerFailure::command_failed: return "command_failed";
        case ProposerFailure::interrupted: return "interrupted";
        case ProposerFailure::deadline: return "deadline";
    }
    return "?";
}

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
    ProposerFailure failure_class = ProposerFailure::none;  // status failed only
    int http_status = 0;         // the last reply's HTTP status (0: none arrived, or not HTTP)
    std::string source;
    std::map<std::string, std::string> defines;  // knob values to evaluate with (tuner)
    std::string prompt, answer;                  // the transcript
    std::vector<std::string> knowledge;          // ids of the knowledge notes the prompt carried
    int prompt_tokens = 0, completion_tokens = 0;
    double cost_usd = 0;
    std::string note;    // one clean line (no newlines, bounded) for the progress display and the store
    std::string detail;  // the full text behind a failure's note (a multi-line server message), for the record
};

// True when the proposal evaluated nothing because the proposer could not answer (the server refused,
// failed or was gone; the command failed): what a run's --max-proposer-failures counts. False for a
// signal or the run's deadline cutting the request, and for answers without usable code.
inline bool failed_because_of_proposer(const Proposal& p) {
    return p.status == Proposal::Status::failed && p.failure_class != ProposerFailure::interrupted &&
           p.failure_class != ProposerFailure::deadline;
}

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
