// See loop.hpp.
#include "search/loop.hpp"

#include <unistd.h>

#include <algorithm>
#include <cassert>
#include <cctype>
#include <chrono>
#include <string_view>
#include <filesystem>
#include <system_error>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "core/clock.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/interrupt.hpp"
#include "eval/calibration.hpp"
#include "eval/directives.hpp"
#include "eval/fraction_text.hpp"
#include "knowledge/library.hpp"
#include "search/knob_defaults.hpp"
#include "search/promotion.hpp"
#include "search/proposers/common.hpp"
#include "search/search_state.hpp"
#include "search/source_identity.hpp"
#include "search/strategies/registry.hpp"
#include "store/run_lock.hpp"
#include "task/registry.hpp"

namespace kevo {

namespace {

using Clock = std::chrono::steady_clock;

std::string score_text(const std::optional<double>& s) { return s ? fmt::format("{:.4f}", *s) : std::string("-"); }

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

// The transcript part of an iteration's record.
IterationRecord transcript(const std::string& run_id, int iteration, const Proposal& proposal) {
    IterationRecord rec;
    rec.run_id = run_id;
    rec.iteration = iteration;
    rec.prompt = proposal.prompt;
    rec.answer = proposal.answer;
    rec.prompt_tokens = proposal.prompt_tokens;
    rec.completion_tokens = proposal.completion_tokens;
    rec.cost_usd = proposal.cost_usd;
    rec.note = proposal.note;
    rec.knowledge = proposal.knowledge;
    if (proposal.status == Proposal::Status::failed) {
        rec.failure = proposer_failure_name(proposal.failure_class);
        rec.http_status = proposal.http_status;
    }
    return rec;
}

// What the gate found about one kernel, as a row of the held-out table.
HeldoutRecord heldout_row(const std::string& run_id, const std::string& role, const GateExamination& e) {
    HeldoutRecord h;
    h.run_id = run_id;
    h.role = role;
    h.candidate_id = e.candidate_id;
    h.iteration = e.iteration;
    h.verdict = verdict_name(e.verdict);
    h.fraction = e.heldout_fraction;
    h.seconds = e.heldout_seconds;
    h.passed = e.passed;
    h.reason = e.reason;
    h.speedup = e.speedup;
    h.speedup_spread = e.speedup_spread;
    h.heldout_speedup = e.heldout_speedup;
    h.heldout_speedup_spread = e.heldout_speedup_spread;
    h.rounds = e.rounds;
    h.result = to_json(e.result);
    return h;
}

// The seed's side of the examination that handed a kernel out.
HeldoutRecord seed_row(const std::string& run_id, int64_t seed_id, const GateExamination& e) {
    HeldoutRecord h = heldout_row(run_id, "seed", e);
    h.candidate_id = seed_id;
    h.iteration = 0;
    h.verdict = verdict_name(e.seed_result.verdict);
    h.fraction = e.seed_heldout_fraction;
    h.seconds = e.seed_heldout_seconds;
    h.passed = true;
    h.reason.clear();
    h.speedup = h.heldout_speedup = 1.0;
    h.speedup_spread = h.heldout_speedup_spread = 0.0;
    h.result = to_json(e.seed_result);
    return h;
}

// One run, from the store's state (nothing, for a new run) to its summary.
class RunDriver {
public:
    RunDriver(Evaluating& evaluator, Store& store, Proposer& proposer, std::function<void(const std::string&)> progress,
              RunRecord run, const RunOptions& options, const Task& task, DeviceInfo device, Language language,
              std::unique_ptr<Strategy> strategy, std::vector<KnowledgeNote> knowledge)
        : evaluator_(evaluator), store_(store), proposer_(proposer), progress_(std::move(progress)), run_(std::move(run)),
          options_(options), task_(task), device_(std::move(device)),
          language_(language), suffix_(language_suffix(language_)),
          strategy_(std::move(strategy)), knowledge_(std::move(knowledge)) {}

    Expected<RunSummary> drive() {
        auto summary = drive_to_the_end();
        if (!summary) return stopped_by(summary.error());
        return summary;
    }

private:
    Expected<RunSummary> drive_to_the_end() {
        if (auto r = replay_stored(); !r) return r.error();
        if (!state_.started()) {
            if (auto r = evaluate_seed(); !r) return r.error();
        }
        if (!options_.from_file.empty() && state_.last_iteration() == 0) {
            if (auto r = evaluate_from(); !r) return r.error();
        }
        ceilings_ = state_.seed().attempt.result.ceilings;
        stop_reason_ = fmt::format("{} iteration{}{}", options_.iterations, options_.iterations == 1 ? "" : "s",
                                   options_.from_file.empty() ? "" : " after the --from kernel");
        for (int it = state_.last_iteration() + 1; it <= last_iteration(); ++it) {
            if (interrupt_requested()) return interrupted();
            if (auto spent = budget_spent()) {
                stop_reason_ = *spent;
                break;
            }
            auto more = iterate(it);
            if (!more) return more.error();
            if (!unavailable_.empty()) return interrupted(Interruption::proposer_unavailable);
            if (!*more) break;
        }
        if (interrupt_requested()) return interrupted();
        return finish();
    }

    // The last iteration's number: --iterations proposals after the seed (and after the user's own
    // starting kernel, which is iteration 1, when there is one). An iteration whose proposal failed
    // (the server gone or refusing, a command that failed, a request cut by a signal or the deadline)
    // is recorded but not counted: the budget is of proposals that came back. The rule reads the
    // search state, so a resumed run counts exactly as the live one did.
    int last_iteration() const {
        return options_.iterations + (options_.from_file.empty() ? 0 : 1) + state_.failed_proposals();
    }

    std::string resume_hint() const { return resume_command(run_.run_id, store_.path(), options_.output_dir); }

    // Ctrl-C / SIGTERM are not failures: the run winds down with its best so far on disk. Any other
    // error ends it too: before its first iteration (the seed, the device) it failed; after, it is
    // interrupted, and resumable.
    Expected<RunSummary> stopped_by(const Error& error) {
        if (interrupt_requested()) return interrupted();
        run_.status = state_.started() && !fatal_ ? RunStatus::interrupted : RunStatus::failed;
        run_.summary = {{"error", error.message}, {"proposals", state_.counts()}};
        if (auto r = store_.update_run(run_); !r) return make_error(error.message + "; and " + r.error().message);
        return error;
    }

    // Stopped before the gate, resumable: by a signal, or by a proposer that keeps failing (then the
    // stored summary says why, for kevo report).
    Expected<RunSummary> interrupted(Interruption why = Interruption::signal) {
        run_.status = RunStatus::interrupted;
        const std::string reason = why == Interruption::signal ? fmt::format("interrupted by {}", interrupt_signal_name())
                                                               : "proposer unavailable: " + unavailable_;
        if (why == Interruption::proposer_unavailable)
            run_.summary = {{"error", unavailable_}, {"interruption", why}, {"stop_reason", reason},
                            {"proposals", state_.counts()}, {"resume", resume_hint()}};
        if (auto r = store_.update_run(run_); !r) return r.error();
        RunSummary s;
        s.run_id = run_.run_id;
        s.task = options_.task;
        s.proposer = options_.proposer;
        s.strategy = strategy_->name();
        s.outcome = RunOutcome::interrupted;
        s.interruption = why;
        s.stop_reason = reason;
        s.resume = resume_hint();
        s.iterations = run_.iterations_done;
        s.proposals = state_.counts();
        s.cost_usd = state_.cost_usd();
        if (state_.started()) {
            const auto& best = strategy_->best();
            s.recommended = best.attempt.iteration;
            s.seed_score = state_.seed().attempt.result.score;
            s.best_score = best.attempt.result.score;
            s.ceilings = best.attempt.result.ceilings;
            s.population = strategy_->population();
            auto path = write_best_so_far();
            if (!path) return path.error();
            s.best_path = *path;
        }
        return s;
    }

    Evaluating& evaluator_;
    Store& store_;
    Proposer& proposer_;
    std::function<void(const std::string&)> progress_;
    RunRecord run_;
    const RunOptions& options_;
    const Task& task_;
    DeviceInfo device_;
    Language language_;
    std::string suffix_;
    SearchState state_;
    std::unique_ptr<Strategy> strategy_;  // the population: what is proposed from, accepted, gated
    std::vector<KnowledgeNote> knowledge_;  // the notes chosen for this task, language and device (--knowledge)
    CeilingsUsed ceilings_;  // those the seed was scored against: shown to the proposer
    std::string stop_reason_;
    bool fatal_ = false;  // the run cannot go on (its --from kernel is wrong, a cost cannot be told): failed
    std::string unavailable_;  // why the proposer is taken to be unavailable (the run is then interrupted)

    void say(const std::string& line) const {
        if (progress_) progress_(line);
    }

    Expected<EvalResult> evaluate(const Attempt& a, SizeSelection sizes) {
        EvalRequest r;
        r.task = options_.task;
        r.profile = options_.profile;
        r.source = a.source;
        r.language = language_->name;
        r.defines = a.defines;
        r.sizes = sizes;
        r.warmup = options_.warmup;
        r.repeat = options_.repeat;
        r.max_repeat = options_.max_repeat;  // (the runner never takes fewer than --repeat)
        r.noise_cv = options_.noise_cv;
        r.timeout_s = options_.timeout_s;
        r.roofline = options_.roofline;
        r.seed = options_.seed & 0xFFFFFFFFull;
        r.ceilings = options_.ceilings;
        return evaluator_.evaluate(r);
    }

    // The one way an iteration changes the state, live and on --resume.
    void absorb(const IterationRecord& rec, const std::optional<StoredAttempt>& evaluated) {
        state_.apply(rec, evaluated);
        strategy_->apply(rec, evaluated);
        if (evaluated) proposer_.observe(evaluated->attempt);
    }

    Expected<void> record(const IterationRecord& rec, const std::optional<StoredAttempt>& evaluated) {
        if (auto r = store_.add_iteration(rec); !r) return r;
        absorb(rec, evaluated);
        if (rec.accepted) {
            run_.best_score = strategy_->best().attempt.result.score;
            run_.best_candidate_id = strategy_->best().candidate_id;
        }
        run_.iterations_done = rec.iteration;
        if (auto r = store_.update_run(run_); !r) return r;
        // The best so far is on disk at every promotion: a kill during the gate leaves it there.
        if (rec.accepted && rec.iteration > 0)
            if (auto w = write_best_so_far(); !w) return w.error();
        return {};
    }

    std::filesystem::path run_dir() const {
        return std::filesystem::path(options_.output_dir.empty() ? "kevo-runs" : options_.output_dir) / run_.run_id;
    }

    // best.<suffix> before the gate: the incumbent, marked as not yet through the gate.
    Expected<std::string> write_best_so_far() const {
        const auto& best = strategy_->best();
        const std::string path = (run_dir() / ("best." + suffix_)).string();
        const std::string status = fmt::format("best so far (not yet through the held-out gate; run {} stopped or is "
                                               "still running)", run_.run_id);
        if (auto w = write_file_atomic(path, standalone_kernel(best.attempt, status)); !w) return w.error();
        return path;
    }

    // A kernel file that stands alone: the tuned knob values are its #define defaults, and a header
    // says where it came from.
    std::string standalone_kernel(const Attempt& a, const std::string& status) const {
        std::vector<std::string> launch, knobs;
        for (const auto& k : a.result.resources)
            launch.push_back(fmt::format("{} block={} per_thread={}", k.kernel, fmt::join(k.block, "x"),
                                         fmt::join(k.per_thread, "x")));
        for (const auto& [name, value] : a.result.defines) knobs.push_back(name + "=" + value);
        const std::string& comment = language_->directive_comment;
        const auto score = [](const std::optional<double>& v) { return v ? fmt::format("{:.4f}", *v) : std::string("-"); };
        std::string header = fmt::format(
            "{0} kevo run {1}: {2}, {3} of the search ({4} proposer), on {5} ({6}), profile {7}\n"
            "{0} score S {8} (the seed's {9}); {10}\n{0} launch: {11}; knobs: {12}\n{0} written {13}\n",
            comment, run_.run_id, options_.task,
            a.iteration == 0                                 ? std::string("the seed")
            : a.iteration == 1 && !options_.from_file.empty() ? fmt::format("the --from kernel {} (iteration 1)", options_.from_file)
                                                              : fmt::format("iteration {}", a.iteration),
            options_.proposer, device_.name, options_.backend, options_.profile, score(a.result.score),
            score(state_.seed().attempt.result.score), status, launch.empty() ? "-" : fmt::format("{}", fmt::join(launch, "; ")),
            knobs.empty() ? "none" : fmt::format("{}", fmt::join(knobs, " ")), utc_now_iso8601());
        return header + apply_knob_defaults(strip_kevo_header(a.source, comment), a.result.defines, comment);
    }


    Expected<void> replay_stored() {
        auto recorded = store_.load_iterations(run_.run_id);
        if (!recorded) return recorded.error();
        for (const auto& rec : *recorded) {
            std::optional<StoredAttempt> evaluated;
            if ((rec.status == IterationStatus::evaluated || rec.status == IterationStatus::from) && rec.candidate_id) {
                auto candidate = store_.load_candidate(*rec.candidate_id);
                if (!candidate) return candidate.error();
                auto result = eval_result_from_json(rec.result);
                if (!result) return result.error();
                evaluated = StoredAttempt{candidate->id, candidate->hash,
                                          Attempt{rec.iteration, candidate->source, candidate->defines, *result}};
            }
            absorb(rec, evaluated);
        }
        if (state_.started())
            say(fmt::format("resuming run {} after iteration {} (best {})", run_.run_id, state_.last_iteration(),
                            score_text(strategy_->best().attempt.result.score)));
        proposer_.skip(state_.proposals());
        return {};
    }

    // Stores a correct kernel the search starts from (the seed at iteration 0, a --from kernel at 1)
    // as a candidate and an accepted iteration, and applies it to the state.
    Expected<void> record_starting_point(int iteration, IterationStatus status, const std::string& proposer,
                                         std::optional<int64_t> parent, const std::string& source,
                                         const EvalResult& result, const std::string& note, Clock::time_point t0) {
        const std::string hash = candidate_hash(source, result.defines, language_);
        auto id = store_.add_candidate({0, run_.run_id, hash, parent, proposer, source, result.defines});
        if (!id) return id.error();
        IterationRecord rec;
        rec.run_id = run_.run_id;
        rec.iteration = iteration;
        rec.candidate_id = *id;
        rec.status = status;
        rec.verdict = "ok";
        rec.score = result.score;
        rec.diagnostics = result.diagnostics;
        rec.accepted = true;
        rec.note = note;
        rec.result = to_json(result);
        strategy_->annotate(rec.strategy, result);
        rec.seconds = seconds_since(t0);
        return record(rec, StoredAttempt{*id, hash, Attempt{iteration, source, result.defines, result}});
    }

    // Iteration 0: the seed, which must be correct.
    Expected<void> evaluate_seed() {
        const std::string source(task_file(options_.task, "seed." + suffix_));
        say(fmt::format("run {}: {} with proposer {} on {} ({}, {} kernels), profile {}", run_.run_id, options_.task,
                        options_.proposer, device_.name, options_.backend, language_->display_name, options_.profile));
        const auto t0 = Clock::now();
        auto result = evaluate(Attempt{0, source, {}, {}}, SizeSelection::in);
        if (!result) return result.error();
        if (result->verdict != Verdict::ok)
            return make_error(fmt::format("the seed of {} failed ({}): {}", options_.task, verdict_name(result->verdict),
                                          result->diagnostics));
        run_.seed_score = result->score;
        if (auto r = record_starting_point(0, IterationStatus::evaluated, "seed", std::nullopt, source, *result, "seed", t0); !r)
            return r;
        say(fmt::format("[{:>3}/{}] seed: score {}", 0, last_iteration(), score_text(result->score)));
        return {};
    }

    // Iteration 1 of a run started --from the user's kernel: it must be correct, and it becomes the
    // incumbent whatever its score (the seed stays the side-by-side baseline of the gate).
    Expected<void> evaluate_from() {
        const std::string& source = options_.from_source;
        const auto t0 = Clock::now();
        if (const std::string hash = candidate_hash(source, {}, language_); hash == state_.seed().hash)
            return record_from_duplicate(hash, t0);
        auto result = evaluate(Attempt{1, source, {}, {}}, SizeSelection::in);
        if (!result) return result.error();
        if (result->verdict != Verdict::ok) {
            fatal_ = true;
            return make_error(fmt::format("--from {}: the kernel is {}: {}", options_.from_file,
                                          verdict_name(result->verdict), result->diagnostics));
        }
        const std::string note =
            fmt::format("from {}: the starting point (the seed stays the gate's baseline)", options_.from_file);
        if (auto r = record_starting_point(1, IterationStatus::from, "from", state_.seed().candidate_id, source, *result, note, t0);
            !r)
            return r;
        say(fmt::format("[{:>3}/{}] from {}: score {} (the seed's {})", 1, last_iteration(), options_.from_file,
                        score_text(result->score), score_text(state_.seed().attempt.result.score)));
        return {};
    }

    // A --from kernel that is the seed up to comments and layout: a duplicate, not evaluated; the
    // seed stays the incumbent, so the run cannot hand the seed out as an improvement of itself.
    Expected<void> record_from_duplicate(const std::string& hash, Clock::time_point t0) {
        const std::string& source = options_.from_source;
        auto id = store_.add_candidate({0, run_.run_id, hash, state_.seed().candidate_id, "from", source, {}});
        if (!id) return id.error();
        IterationRecord rec;
        rec.run_id = run_.run_id;
        rec.iteration = 1;
        rec.candidate_id = *id;
        rec.status = IterationStatus::duplicate;
        rec.diagnostics = fmt::format("--from {} is the seed (the same source once comments and layout are set aside); "
                                      "not evaluated, and the seed stays the incumbent", options_.from_file);
        rec.note = rec.diagnostics;
        rec.seconds = seconds_since(t0);
        if (auto r = record(rec, std::nullopt); !r) return r;
        say(fmt::format("[{:>3}/{}] from {}: duplicate of the seed (comments and layout set aside); not evaluated", 1,
                        last_iteration(), options_.from_file));
        return {};
    }

    // The reason to stop before the next iteration, if a budget is spent.
    std::optional<std::string> budget_spent() const {
        if (options_.max_wall_s > 0 && state_.seconds() >= options_.max_wall_s)
            return fmt::format("wall-time limit ({:.0f} s)", options_.max_wall_s);
        if (options_.max_cost_usd > 0 && state_.cost_usd() >= options_.max_cost_usd)
            return fmt::format("cost cap (${:.2f} spent of ${:.2f})", state_.cost_usd(), options_.max_cost_usd);
        if (options_.max_tokens_total > 0 && state_.tokens() >= options_.max_tokens_total)
            return fmt::format("token budget ({} used of {})", state_.tokens(), options_.max_tokens_total);
        return std::nullopt;
    }

    ProposalContext context(int it, const Plan& plan) const {
        ProposalContext ctx;
        ctx.spec = &task_.spec();
        ctx.language = language_;
        ctx.brief = std::string(task_file(options_.task, "brief.md"));
        ctx.device = device_;
        ctx.ceilings = ceilings_;
        ctx.profile = options_.profile;
        ctx.iteration = it;
        ctx.previous = plan.previous;
        ctx.unused = state_.unused();
        ctx.incumbent = plan.parent.attempt;
        ctx.seed = options_.seed;
        ctx.fresh_approach = plan.dropout;
        ctx.history = plan.history;
        ctx.inspirations = plan.inspirations;
        ctx.knowledge = knowledge_;
        // A request gets at most what --max-wall leaves of the run.
        if (options_.max_wall_s > 0)
            ctx.deadline = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(
                                              std::max(0.0, options_.max_wall_s - state_.seconds())));
        return ctx;
    }

    // One proposal, recorded. False when the proposer has nothing left (stop_reason_ says so); an
    // error when it cannot go on (the run then fails, resumable once the cause is mended).
    Expected<bool> iterate(int it) {
        const Plan plan = strategy_->plan(it);
        const std::string where = plan.where.empty() ? "" : plan.where + ": ";
        if (plan.dropout)
            say(fmt::format("[{:>3}/{}] {}no improvement for {} iterations: history dropped, asking for a different approach",
                            it, last_iteration(), where, options_.stagnation_window));
        const auto t0 = Clock::now();
        const Proposal proposal = proposer_.propose(context(it, plan));
        if (proposal.status == Proposal::Status::exhausted) {
            stop_reason_ = "proposer exhausted: " + proposal.note;
            return false;
        }
        IterationRecord rec = transcript(run_.run_id, it, proposal);
        rec.dropout = plan.dropout;
        rec.strategy = plan.record;
        std::optional<StoredAttempt> evaluated;
        std::string line;
        if (proposal.status != Proposal::Status::ok) {
            rec.status = unused_status(proposal);
            // The record keeps the whole text (a multi-line server message); the line shows its note.
            rec.diagnostics = proposal.detail.empty() ? proposal.note : proposal.detail;
            line = fmt::format("{}: {}", iteration_status_name(rec.status), proposal.note);
        } else if (interrupt_requested()) {
            line = cut_by_signal(rec);
        } else {
            auto judged = try_candidate(it, plan, proposal, rec, evaluated);
            if (!judged && !interrupt_requested()) return judged.error();
            if (!judged) evaluated.reset();
            line = !judged ? cut_by_signal(rec) : proposal.note.empty() ? *judged : proposal.note + ": " + *judged;
        }
        rec.seconds = seconds_since(t0);
        if (auto r = record(rec, evaluated); !r) return r.error();
        const std::string placed = strategy_->placed(plan, rec.strategy);
        say(fmt::format("[{:>3}/{}] {}{}  best {}", it, last_iteration(), placed.empty() ? "" : placed + ": ",
                        one_line(line, 400),
                        score_text(strategy_->best().attempt.result.score)));
        if (proposal.failure == Proposal::Failure::fatal) {
            fatal_ = true;
            return make_error(fmt::format("the proposer cannot go on: {}; mend it and resume with {}", proposal.note,
                                          resume_hint()));
        }
        // The summary and the command's last lines say so, with the command that resumes it.
        if (state_.proposer_failures_in_a_row() >= options_.max_proposer_failures) unavailable_ = unavailable_reason(proposal);
        return true;
    }

    // An answer that arrived as a signal came, before its candidate was judged: recorded (its
    // transcript, tokens and cost count) as a proposal cut by the signal, not evaluated; a resume
    // asks again. Returns the progress text.
    static std::string cut_by_signal(IterationRecord& rec) {
        rec.status = IterationStatus::proposer_error;
        rec.failure = proposer_failure_name(ProposerFailure::interrupted);
        rec.candidate_id.reset();
        rec.diagnostics = fmt::format("interrupted by {} before the answer's candidate was evaluated (the answer is kept; "
                                      "its tokens and cost are counted)", interrupt_signal_name());
        return fmt::format("{}: {}", iteration_status_name(rec.status), rec.diagnostics);
    }

    // Why the proposer is taken to be unavailable: the streak, and the last failure's class.
    std::string unavailable_reason(const Proposal& proposal) const {
        const int n = state_.proposer_failures_in_a_row(), same = state_.same_failures_in_a_row();
        const std::string failure = proposer_failure_name(proposal.failure_class);
        const std::string alike = same == n ? fmt::format("{} each time", failure)
                                            : fmt::format("the last {} {}", same, failure);
        return fmt::format("the proposer failed {} times in a row ({}; --max-proposer-failures {}): {}", n, alike,
                           options_.max_proposer_failures, proposal.note);
    }

    static IterationStatus unused_status(const Proposal& proposal) {
        switch (proposal.status) {
            case Proposal::Status::no_code: return IterationStatus::no_code;
            case Proposal::Status::edit_failed: return IterationStatus::edit_failed;
            default: break;
        }
        const bool permanent = proposal.failure == Proposal::Failure::permanent || proposal.failure == Proposal::Failure::fatal;
        return permanent ? IterationStatus::permanent_error : IterationStatus::proposer_error;
    }

    // Stores the candidate, evaluates it unless it is a duplicate, and judges it against what the
    // strategy says it must beat; fills `rec` and `evaluated`. Returns the progress text.
    Expected<std::string> try_candidate(int it, const Plan& plan, const Proposal& proposal, IterationRecord& rec,
                                        std::optional<StoredAttempt>& evaluated) {
        const std::string hash = candidate_hash(proposal.source, proposal.defines, language_);
        auto id = store_.add_candidate({0, run_.run_id, hash, plan.parent.candidate_id, options_.proposer,
                                        proposal.source, proposal.defines});
        if (!id) return id.error();
        rec.candidate_id = *id;
        if (state_.seen(hash)) {
            const int earlier = state_.evaluated_at(*id);
            rec.status = IterationStatus::duplicate;
            rec.diagnostics = fmt::format("the same source and knob values as {} (not evaluated again)",
                                          earlier == 0  ? std::string("the seed")
                                          : earlier > 0 ? fmt::format("iteration {}", earlier)
                                                        : std::string("an earlier candidate"));
            return fmt::format("duplicate: {}", rec.diagnostics);
        }
        Attempt attempt{it, proposal.source, proposal.defines, {}};
        auto result = evaluate(attempt, SizeSelection::in);
        if (!result)
            return make_error(fmt::format("iteration {}: {} (resume with {})", it, result.error().message, resume_hint()));
        attempt.result = std::move(*result);
        const std::optional<StoredAttempt> rival = strategy_->rival(plan, attempt.result);
        auto decision = judge_against(rival, attempt);
        if (!decision)
            return make_error(fmt::format("iteration {}: {} (resume with {})", it, decision.error().message, resume_hint()));
        const EvalResult& r = attempt.result;
        rec.status = IterationStatus::evaluated;
        rec.verdict = verdict_name(r.verdict);
        rec.score = r.score;
        rec.diagnostics = r.diagnostics;
        rec.result = to_json(r);
        strategy_->annotate(rec.strategy, r);
        rec.accepted = decision->decision == Promotion::accept;
        if (r.verdict == Verdict::ok && rival) rec.gain = decision->gain, rec.gain_spread = decision->spread;
        rec.note = proposal.note.empty() ? decision->why : proposal.note + "; " + decision->why;
        std::string line = fmt::format("{} score {}{}", rec.verdict, score_text(r.score),
                                       rec.accepted ? " ACCEPTED (" + decision->why + ")"
                                                    : (r.verdict == Verdict::ok ? " (" + decision->why + ")" : ""));
        if (r.verdict != Verdict::ok) line += ": " + one_line(r.diagnostics, 160);
        evaluated = StoredAttempt{*id, hash, std::move(attempt)};
        return line;
    }

    // The promotion rule against `rival`; with none (an empty place in the population) a correct
    // candidate is accepted.
    Expected<PromotionDecision> judge_against(const std::optional<StoredAttempt>& rival, const Attempt& candidate) {
        if (rival)
            return decide_promotion(candidate, rival->attempt, [&](const Attempt& a) { return evaluate(a, SizeSelection::in); });
        PromotionDecision d = judge(candidate.result, candidate.result);
        if (candidate.result.verdict == Verdict::ok && candidate.result.score) {
            d.decision = Promotion::accept;
            d.why = "accepted: the first correct kernel of its place in the population";
        }
        return d;
    }

    const StoredAttempt& attempt_with_id(int64_t candidate_id) const {
        const StoredAttempt* a = state_.attempt(candidate_id);
        assert(a && "the gate hands out an evaluated kernel");
        return a ? *a : state_.seed();
    }

    // The gate, the kernel files, the held-out rows and the summary.
    Expected<RunSummary> finish() {
        say(fmt::format("gate: the best side by side with the seed, {} interleaved rounds on all {} sizes, held-out included",
                        options_.gate_rounds, options_.profile));
        const std::vector<StoredAttempt> preference = strategy_->gate_candidates(options_.gate_top);
        auto report = run_gate(state_.seed(), preference,
                               [&](const Attempt& a) { return evaluate(a, SizeSelection::all); },
                               GateOptions{options_.gate_rounds, progress_});
        if (!report) return report.error();
        RunSummary summary = summarize(*report);
        if (auto w = write_kernels(*report, summary); !w) return w.error();
        if (auto s = store_gate(*report); !s) return s.error();
        run_.status = RunStatus::finished;
        run_.best_score = summary.best_score;
        run_.best_candidate_id = report->recommended().candidate_id;
        run_.summary = summary;
        if (auto r = store_.update_run(run_); !r) return r.error();
        return summary;
    }

    RunSummary summarize(const GateReport& report) const {
        const GateExamination& handed = report.recommended();
        RunSummary s;
        s.run_id = run_.run_id;
        s.task = options_.task;
        s.proposer = options_.proposer;
        s.strategy = strategy_->name();
        s.population = strategy_->population();
        s.stop_reason = stop_reason_;
        s.outcome = report.outcome;
        s.recommended = handed.iteration;
        s.iterations = run_.iterations_done;
        s.seed_score = state_.seed().attempt.result.score;
        s.best_score = attempt_with_id(handed.candidate_id).attempt.result.score;
        s.speedup = handed.speedup;
        s.speedup_spread = handed.speedup_spread;
        s.heldout_fraction = handed.heldout_fraction;
        s.heldout_seed_fraction = handed.seed_heldout_fraction;
        s.heldout_speedup = handed.heldout_speedup;
        s.heldout_speedup_spread = handed.heldout_speedup_spread;
        s.heldout_best_verdict = verdict_name(handed.verdict);
        s.gate = report.examined;
        if (const GateExamination* close = report.within_noise())
            s.within_noise = RejectedKernel{close->iteration, close->candidate_id, "", close->reason, close->detail};
        s.ceilings = handed.result.ceilings;
        s.proposals = state_.counts();
        s.cost_usd = state_.cost_usd();
        return s;
    }

    // best.<suffix>: the kernel handed out, with its tuned knob values as defaults; beside it the
    // search's best when it failed, under a name that says why.
    Expected<void> write_kernels(const GateReport& report, RunSummary& summary) const {
        namespace fs = std::filesystem;
        const fs::path dir = run_dir();
        std::error_code ec;
        for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec))
            if (const std::string name = it->path().filename().string();
                name.rfind("rejected-", 0) == 0 || name.rfind("candidate-within-noise.", 0) == 0)
                fs::remove(it->path(), ec);  // an earlier, interrupted gate's
        auto write = [&](const GateExamination& e, const std::string& name) -> Expected<std::string> {
            const Attempt& a = attempt_with_id(e.candidate_id).attempt;
            const std::string path = (dir / (name + "." + suffix_)).string();
            const std::string status =
                e.passed ? fmt::format("passed the held-out gate (outcome {}): held-out Phi {}, speed-up over the seed {} "
                                       "in distribution, {} held-out", outcome_name(report.outcome),
                                       fraction_text(e.heldout_fraction),
                                       e.speedup ? fmt::format("{:.3f}x", *e.speedup) : "-",
                                       e.heldout_speedup ? fmt::format("{:.3f}x", *e.heldout_speedup) : "-")
                         : e.failure == GateFailure::within_noise
                             ? fmt::format("NOT handed out: within the noise of the seed ({}); the seed is handed out "
                                           "as best.{} (outcome {})", e.detail, suffix_, outcome_name(report.outcome))
                             : fmt::format("FAILED the held-out gate ({}): {}", e.reason, e.detail);
            if (auto w = write_file_atomic(path, standalone_kernel(a, status)); !w) return w.error();
            return path;
        };
        auto best = write(report.recommended(), "best");
        if (!best) return best.error();
        summary.best_path = *best;
        if (const GateExamination* bad = report.rejected()) {
            auto path = write(*bad, "rejected-" + bad->reason);
            if (!path) return path.error();
            summary.rejected = RejectedKernel{bad->iteration, bad->candidate_id, *path, bad->reason, bad->detail};
        }
        if (const GateExamination* close = report.within_noise()) {
            auto path = write(*close, "candidate-within-noise");
            if (!path) return path.error();
            summary.within_noise->path = *path;
        }
        return {};
    }

    Expected<void> store_gate(const GateReport& report) {
        const GateExamination& handed = report.recommended();
        std::vector<HeldoutRecord> rows = {seed_row(run_.run_id, state_.seed().candidate_id, handed),
                                           heldout_row(run_.run_id, "best", handed)};
        for (const auto& e : report.examined)
            if (&e != &handed) rows.push_back(heldout_row(run_.run_id, fmt::format("rejected-{}", e.iteration), e));
        for (const auto& h : rows)
            if (auto r = store_.add_heldout(h); !r) return r;
        return {};
    }
};

// `word` as a POSIX shell reads it back: bare where it holds only safe characters, else quoted.
std::string shell_word(const std::string& word) {
    const bool bare = !word.empty() && std::all_of(word.begin(), word.end(), [](char c) {
        return std::isalnum(static_cast<unsigned char>(c)) || std::string_view("._/=:@%+,-").find(c) != std::string_view::npos;
    });
    if (bare) return word;
    std::string out = "'";
    for (char c : word) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
    return out + "'";
}

}  // namespace

std::string resume_command(const std::string& run_id, const std::string& db, const std::string& output_dir) {
    std::string command = "kevo run --resume " + shell_word(run_id);
    if (!db.empty() && db != "kevo.db") command += " --db " + shell_word(db);
    if (!output_dir.empty() && output_dir != "kevo-runs") command += " --out " + shell_word(output_dir);
    return command;
}

StrategySettings strategy_settings(const RunOptions& o) {
    StrategySettings s;
    s.history = o.history;
    s.stagnation_window = o.stagnation_window;
    s.seed = o.seed;
    s.options = o.strategy_options;
    for (const RunOption* option : options_of(OptionPart::strategy, o.strategy))
        if (!s.options.contains(option->name)) s.options[option->name] = option->fallback;
    return s;
}

Expected<Language> run_language(const RunOptions& options) { return backend_language(options.language, options.backend); }

Expected<RunOptions> run_options_from_json(const nlohmann::json& j) {
    try {
        auto options = j.get<RunOptions>();
        for (const char* key : {"islands", "migration_every"})  // stored at the top before strategy_options
            if (j.contains(key) && !options.strategy_options.contains(key)) options.strategy_options[key] = j[key];
        // A run stored before the knowledge notes had none in its prompts: resumed, it still has none.
        if (!j.contains("knowledge")) options.knowledge = kNoKnowledge;
        return options;
    } catch (const nlohmann::json::exception& e) {
        return make_error(fmt::format("malformed run settings: {}", e.what()));
    }
}

SearchLoop::SearchLoop(Evaluating& evaluator, Store& store, Proposer& proposer, std::function<void(const std::string&)> progress)
    : evaluator_(evaluator), store_(store), proposer_(proposer), progress_(std::move(progress)) {}

// The ceilings a new run pins: those given (checked against the device), else the device's own.
Expected<nlohmann::json> SearchLoop::ceilings_to_pin(const nlohmann::json& given, const DeviceInfo& device) {
    if (given.is_null()) {
        auto in_force = evaluator_.ceilings();
        if (!in_force) return in_force.error();
        return to_json(*in_force);
    }
    auto calibration = calibration_from_json(given);
    if (!calibration) return make_error("the ceilings given cannot be read: " + calibration.error().message);
    if (calibration->device_name != device.name)
        return make_error(fmt::format("the ceilings given were measured on {}, not on this run's device {}",
                                      calibration->device_name, device.name));
    return given;
}

// A resumed run keeps its ceilings; a newer calibration of the device is reported, never mixed in.
// A run stored before runs pinned their ceilings pins the device's current ones from here on.
Expected<void> SearchLoop::keep_ceilings(RunOptions& options, const std::string& run_id) {
    auto current = evaluator_.ceilings();
    if (!current) return current.error();
    if (options.ceilings.is_null()) {
        options.ceilings = to_json(*current);
        if (progress_)
            progress_(fmt::format("run {} was stored without pinned ceilings; from here on it divides by the device's "
                                  "current ones ({:.1f} GB/s, {:.1f} GFLOP/s, measured {})", run_id, current->bandwidth_gbs,
                                  current->fp32_gflops, current->measured_at));
        return {};
    }
    auto pinned = calibration_from_json(options.ceilings);
    if (!pinned) return make_error(fmt::format("run {}: its pinned ceilings cannot be read: {}", run_id, pinned.error().message));
    if (progress_ && pinned->measured_at != current->measured_at)
        progress_(fmt::format("run {} keeps the ceilings it started with ({:.1f} GB/s, {:.1f} GFLOP/s, measured {}); the "
                              "device's newer calibration ({:.1f} GB/s, {:.1f} GFLOP/s, measured {}) is not mixed in",
                              run_id, pinned->bandwidth_gbs, pinned->fp32_gflops, pinned->measured_at,
                              current->bandwidth_gbs, current->fp32_gflops, current->measured_at));
    return {};
}

Expected<RunSummary> SearchLoop::start(const RunOptions& given, const std::string& run_id) {
    auto info = evaluator_.device();
    if (!info) return info.error();
    RunOptions options = given;
    auto ceilings = ceilings_to_pin(given.ceilings, *info);
    if (!ceilings) return ceilings.error();
    options.ceilings = std::move(*ceilings);
    RunRecord run;
    run.run_id = run_id.empty() ? timestamped_id('r') : run_id;
    run.task = options.task;
    run.backend = options.backend;
    run.device = info->name;
    run.profile = options.profile;
    run.proposer = options.proposer;
    run.strategy = options.strategy;
    run.settings = options;
    run.created_at = run.updated_at = utc_now_iso8601();
    run.pid = static_cast<int>(::getpid());
    auto lock = RunLock::acquire(store_.path(), run.run_id);
    if (!lock) return lock.error();
    if (auto r = store_.create_run(run); !r) return r.error();
    return drive(std::move(run), options);
}

Expected<RunSummary> SearchLoop::resume(const std::string& run_id, const RunExtension& extension) {
    // The lock first: a run another process is driving must not be read, changed or driven here.
    auto lock = RunLock::acquire(store_.path(), run_id);
    if (!lock) return lock.error();
    auto run = store_.load_run(run_id);
    if (!run) return run.error();
    auto options = run_options_from_json(run->settings);
    if (!options) return make_error(fmt::format("run {}: {}", run_id, options.error().message));
    const bool longer = extension.iterations && *extension.iterations > options->iterations;
    if (run->status == RunStatus::finished && !longer)
        return make_error(fmt::format("run {} has already finished ({} iterations); to search further, give "
                                      "--iterations N with N > {}", run_id, options->iterations, options->iterations));
    if (extension.iterations) options->iterations = *extension.iterations;
    if (extension.max_wall_s) options->max_wall_s = *extension.max_wall_s;
    if (extension.max_cost_usd) options->max_cost_usd = *extension.max_cost_usd;
    if (extension.max_tokens_total) options->max_tokens_total = *extension.max_tokens_total;
    if (extension.max_proposer_failures) options->max_proposer_failures = *extension.max_proposer_failures;
    if (extension.settings) options->settings = *extension.settings;
    if (auto kept = keep_ceilings(*options, run_id); !kept) return kept.error();
    if (run->status == RunStatus::finished) {
        // Searching on after the gate: its verdict no longer holds, and it runs again at the end.
        if (auto r = store_.clear_heldout(run_id); !r) return r.error();
    }
    run->summary = nullptr;  // what the last stop said (an error, an interruption) no longer holds
    run->settings = *options;
    run->pid = static_cast<int>(::getpid());
    run->status = RunStatus::running;
    if (auto r = store_.update_run(*run); !r) return r.error();
    return drive(*run, *options);
}

Expected<RunSummary> SearchLoop::drive(RunRecord run, const RunOptions& options) {
    auto task = make_task(options.task);
    if (!task) return task.error();
    auto info = evaluator_.device();
    if (!info) return info.error();
    auto strategy = make_strategy(options.strategy, strategy_settings(options));
    if (!strategy) return strategy.error();
    auto language = run_language(options);
    if (!language) return make_error("--language: " + language.error().message);
    auto library = load_knowledge(options.knowledge);
    if (!library) return library.error();
    std::vector<KnowledgeNote> notes = select_notes(library->notes, note_target((*task)->spec(), (*language)->name, *info),
                                                    static_cast<size_t>(std::max(0, options.knowledge_tokens)));
    return RunDriver(evaluator_, store_, proposer_, progress_, std::move(run), options, **task, *info, *language,
                     std::move(*strategy), std::move(notes)).drive();
}

}  // namespace kevo
