// See loop.hpp.
#include "search/loop.hpp"

#include <unistd.h>

#include <chrono>
#include <cmath>
#include <deque>
#include <filesystem>
#include <set>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "core/files.hpp"
#include "core/hash.hpp"
#include "core/rng.hpp"
#include "core/stats.hpp"
#include "search/knob_defaults.hpp"
#include "search/promotion.hpp"
#include "task/registry.hpp"

namespace kevo {

namespace {

using Clock = std::chrono::steady_clock;

nlohmann::json opt_json(const std::optional<double>& v) { return v ? nlohmann::json(*v) : nlohmann::json(nullptr); }

std::string candidate_hash(const std::string& source, const std::map<std::string, std::string>& defines) {
    std::string text = source;
    for (const auto& [k, v] : defines) text += "\n-D" + k + "=" + v;
    return hex64(hash64(text));
}

std::string new_run_id() {
    const auto now = std::chrono::system_clock::now();
    const std::time_t t = std::chrono::system_clock::to_time_t(now);
    std::tm tm{};
    gmtime_r(&t, &tm);
    char stamp[32];
    std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm);
    return fmt::format("r{}-{:04x}", stamp, rng::fresh_seed() & 0xFFFF);
}

std::string score_text(const std::optional<double>& s) { return s ? fmt::format("{:.4f}", *s) : std::string("-"); }

// Per-size median seconds over several side-by-side evaluations.
struct SideBySide {
    std::map<std::string, std::vector<double>> seconds;  // by size label
    std::map<std::string, bool> heldout;
    std::vector<EvalResult> results;
    bool all_ok = true;
    std::string failure;
};

}  // namespace

nlohmann::json RunSummary::to_json() const {
    return {{"run_id", run_id}, {"task", task}, {"proposer", proposer}, {"iterations", iterations},
            {"seed_score", opt_json(seed_score)}, {"best_score", opt_json(best_score)}, {"speedup", opt_json(speedup)},
            {"heldout_fraction", opt_json(heldout_fraction)}, {"heldout_seed_fraction", opt_json(heldout_seed_fraction)},
            {"heldout_speedup", opt_json(heldout_speedup)}, {"heldout_best_verdict", best_verdict_heldout},
            {"best_path", best_path}, {"stop_reason", stop_reason}, {"cost_usd", cost_usd}};
}

nlohmann::json to_json(const RunOptions& o) {
    return {{"task", o.task}, {"backend", o.backend}, {"device", o.device}, {"profile", o.profile},
            {"proposer", o.proposer}, {"strategy", o.strategy}, {"iterations", o.iterations},
            {"max_wall_s", o.max_wall_s}, {"max_cost_usd", o.max_cost_usd}, {"stagnation_window", o.stagnation_window},
            {"history", o.history}, {"warmup", o.warmup}, {"repeat", o.repeat}, {"timeout_s", o.timeout_s},
            {"roofline", o.roofline == RooflineMode::static_peak ? "static" : "workload"}, {"seed", o.seed},
            {"output_dir", o.output_dir}, {"settings", o.settings}};
}

RunOptions run_options_from_json(const nlohmann::json& j) {
    RunOptions o;
    o.task = j.value("task", "");
    o.backend = j.value("backend", "");
    o.device = j.value("device", 0);
    o.profile = j.value("profile", "");
    o.proposer = j.value("proposer", "");
    o.strategy = j.value("strategy", "one-plus-one");
    o.iterations = j.value("iterations", 20);
    o.max_wall_s = j.value("max_wall_s", 0.0);
    o.max_cost_usd = j.value("max_cost_usd", 0.0);
    o.stagnation_window = j.value("stagnation_window", 6);
    o.history = j.value("history", 4);
    o.warmup = j.value("warmup", 3);
    o.repeat = j.value("repeat", 10);
    o.timeout_s = j.value("timeout_s", 60.0);
    o.roofline = j.value("roofline", "static") == "workload" ? RooflineMode::workload : RooflineMode::static_peak;
    o.seed = j.value("seed", uint64_t{0});
    o.output_dir = j.value("output_dir", "");
    o.settings = j.value("settings", nlohmann::json::object());
    return o;
}

SearchLoop::SearchLoop(Evaluator& evaluator, Store& store, Proposer& proposer, std::function<void(const std::string&)> progress)
    : evaluator_(evaluator), store_(store), proposer_(proposer), progress_(std::move(progress)) {}

Expected<RunSummary> SearchLoop::start(const RunOptions& options) {
    auto info = evaluator_.device();
    if (!info) return info.error();
    RunRecord run;
    run.run_id = new_run_id();
    run.task = options.task;
    run.backend = options.backend;
    run.device = info->name;
    run.profile = options.profile;
    run.proposer = options.proposer;
    run.strategy = options.strategy;
    run.settings = to_json(options);
    run.created_at = run.updated_at = utc_now_iso8601();
    run.pid = static_cast<int>(::getpid());
    if (auto r = store_.create_run(run); !r) return r.error();
    return drive(std::move(run), options);
}

Expected<RunSummary> SearchLoop::resume(const std::string& run_id) {
    auto run = store_.load_run(run_id);
    if (!run) return run.error();
    if (run->status == "finished") return make_error(fmt::format("run {} has already finished; nothing to resume", run_id));
    run->pid = static_cast<int>(::getpid());
    run->status = "running";
    if (auto r = store_.update_run(*run); !r) return r.error();
    return drive(*run, run_options_from_json(run->settings));
}

Expected<RunSummary> SearchLoop::drive(RunRecord run, const RunOptions& options) {
    auto task_or = make_task(options.task);
    if (!task_or) return task_or.error();
    const Task& task = **task_or;
    auto info = evaluator_.device();
    if (!info) return info.error();
    const Language language = options.backend == "cuda" ? Language::cuda : Language::opencl;
    const std::string suffix = language_suffix(language);
    auto say = [&](const std::string& line) { if (progress_) progress_(line); };

    EvalRequest base;
    base.task = options.task;
    base.profile = options.profile;
    base.sizes = SizeSelection::in;
    base.warmup = options.warmup;
    base.repeat = options.repeat;
    base.timeout_s = options.timeout_s;
    base.roofline = options.roofline;
    base.seed = options.seed & 0xFFFFFFFFull;
    auto evaluate = [&](const std::string& source, const std::map<std::string, std::string>& defines,
                        SizeSelection sizes) -> Expected<EvalResult> {
        EvalRequest r = base;
        r.source = source;
        r.defines = defines;
        r.sizes = sizes;
        return evaluator_.evaluate(r);
    };

    RunSummary summary;
    summary.run_id = run.run_id;
    summary.task = options.task;
    summary.proposer = options.proposer;

    // Rebuild the state from what the store holds (nothing, for a new run).
    auto recorded = store_.load_iterations(run.run_id);
    if (!recorded) return recorded.error();
    Attempt seed, incumbent;
    int64_t seed_id = 0, incumbent_id = 0;
    std::optional<Attempt> previous;
    std::deque<Attempt> history;
    std::set<std::string> evaluated;
    int since_improvement = 0, proposals = 0, last_iteration = -1;
    double cost = 0, elapsed = 0;
    for (const auto& rec : *recorded) {
        last_iteration = rec.iteration;
        cost += rec.cost_usd;
        elapsed += rec.seconds;
        if (rec.iteration > 0) ++proposals;
        if (rec.status != "evaluated" || !rec.candidate_id) {
            ++since_improvement;
            continue;
        }
        auto candidate = store_.load_candidate(*rec.candidate_id);
        if (!candidate) return candidate.error();
        auto result = eval_result_from_json(rec.result);
        if (!result) return result.error();
        Attempt a{rec.iteration, candidate->source, candidate->defines, *result};
        evaluated.insert(candidate->hash);
        proposer_.observe(a);
        if (rec.iteration == 0) seed = a, seed_id = candidate->id;
        if (rec.accepted) {
            incumbent = a;
            incumbent_id = candidate->id;
            since_improvement = 0;
        } else if (rec.iteration > 0) {
            ++since_improvement;
        }
        if (rec.iteration > 0) {
            previous = a;
            history.push_back(a);
            while (static_cast<int>(history.size()) > options.history) history.pop_front();
        }
    }
    if (last_iteration >= 0) say(fmt::format("resuming run {} after iteration {} (best {})", run.run_id, last_iteration,
                                             score_text(incumbent.result.score)));
    proposer_.skip(proposals);

    // Iteration 0: the seed.
    if (last_iteration < 0) {
        const std::string source(task_file(options.task, "seed." + suffix));
        say(fmt::format("run {}: {} with proposer {} on {} ({}), profile {}", run.run_id, options.task, options.proposer,
                        info->name, options.backend, options.profile));
        const auto t0 = Clock::now();
        auto result = evaluate(source, {}, SizeSelection::in);
        if (!result) return result.error();
        if (result->verdict != Verdict::ok)
            return make_error(fmt::format("the seed of {} failed ({}): {}", options.task, verdict_name(result->verdict),
                                          result->diagnostics));
        CandidateRecord c{0, run.run_id, candidate_hash(source, result->defines), std::nullopt, "seed", source, result->defines};
        auto id = store_.add_candidate(c);
        if (!id) return id.error();
        IterationRecord rec;
        rec.run_id = run.run_id;
        rec.iteration = 0;
        rec.candidate_id = *id;
        rec.status = "evaluated";
        rec.verdict = "ok";
        rec.score = result->score;
        rec.diagnostics = result->diagnostics;
        rec.accepted = true;
        rec.note = "seed";
        rec.result = to_json(*result);
        rec.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        if (auto r = store_.add_iteration(rec); !r) return r.error();
        seed = incumbent = Attempt{0, source, result->defines, *result};
        seed_id = incumbent_id = *id;
        evaluated.insert(c.hash);
        proposer_.observe(seed);
        run.seed_score = run.best_score = result->score;
        run.best_candidate_id = *id;
        run.iterations_done = 0;
        last_iteration = 0;
        if (auto r = store_.update_run(run); !r) return r.error();
        say(fmt::format("[{:>3}/{}] seed: score {}", 0, options.iterations, score_text(result->score)));
    }

    Calibration ceilings;
    if (auto c = load_cached_calibration(*info)) ceilings = *c;
    else if (auto d = datasheet_calibration(*info)) ceilings = *d;

    std::string stop_reason = fmt::format("{} iterations", options.iterations);
    const auto loop_start = Clock::now();
    for (int it = last_iteration + 1; it <= options.iterations; ++it) {
        const double wall = elapsed + std::chrono::duration<double>(Clock::now() - loop_start).count();
        if (options.max_wall_s > 0 && wall >= options.max_wall_s) {
            stop_reason = fmt::format("wall-time limit ({:.0f} s)", options.max_wall_s);
            break;
        }
        if (options.max_cost_usd > 0 && cost >= options.max_cost_usd) {
            stop_reason = fmt::format("cost cap (${:.2f} spent of ${:.2f})", cost, options.max_cost_usd);
            break;
        }
        ProposalContext ctx;
        ctx.spec = &task.spec();
        ctx.language = language;
        ctx.brief = std::string(task_file(options.task, "brief.md"));
        ctx.device = *info;
        ctx.ceilings = ceilings;
        ctx.profile = options.profile;
        ctx.iteration = it;
        ctx.previous = previous;
        ctx.incumbent = incumbent;
        ctx.seed = options.seed;
        if (options.stagnation_window > 0 && since_improvement >= options.stagnation_window) {
            // Optimisation dropout: forget the history, ask for a different approach, keep the incumbent.
            ctx.fresh_approach = true;
            history.clear();
            since_improvement = 0;
            say(fmt::format("[{:>3}/{}] no improvement for {} iterations: history dropped, asking for a different approach",
                            it, options.iterations, options.stagnation_window));
        }
        ctx.history.assign(history.begin(), history.end());

        const auto t0 = Clock::now();
        Proposal proposal = proposer_.propose(ctx);
        if (proposal.status == Proposal::Status::exhausted) {
            stop_reason = "proposer exhausted: " + proposal.note;
            break;
        }
        cost += proposal.cost_usd;
        IterationRecord rec;
        rec.run_id = run.run_id;
        rec.iteration = it;
        rec.prompt = proposal.prompt;
        rec.answer = proposal.answer;
        rec.prompt_tokens = proposal.prompt_tokens;
        rec.completion_tokens = proposal.completion_tokens;
        rec.cost_usd = proposal.cost_usd;
        rec.note = proposal.note;
        std::string line;
        if (proposal.status != Proposal::Status::ok) {
            rec.status = proposal.status == Proposal::Status::no_code ? "no_code" : "proposer_error";
            rec.diagnostics = proposal.note;
            ++since_improvement;
            line = fmt::format("{}: {}", rec.status, proposal.note);
        } else {
            const std::string hash = candidate_hash(proposal.source, proposal.defines);
            CandidateRecord c{0, run.run_id, hash, incumbent_id, options.proposer, proposal.source, proposal.defines};
            auto id = store_.add_candidate(c);
            if (!id) return id.error();
            rec.candidate_id = *id;
            if (evaluated.count(hash)) {
                rec.status = "duplicate";
                rec.diagnostics = "the same source and knob values were evaluated earlier in this run";
                ++since_improvement;
                line = "duplicate of an earlier candidate (not re-evaluated)";
            } else {
                evaluated.insert(hash);
                auto result = evaluate(proposal.source, proposal.defines, SizeSelection::in);
                if (!result) return make_error(fmt::format("iteration {}: {} (run {} can be resumed)", it,
                                                           result.error().message, run.run_id));
                Attempt attempt{it, proposal.source, proposal.defines, *result};
                PromotionDecision decision = judge(*result, incumbent.result);
                if (decision.decision == Promotion::too_close) {
                    // Re-time both, interleaved, and let the mean scores decide.
                    std::vector<double> mine, theirs;
                    for (int round = 0; round < 2; ++round) {
                        auto a = evaluate(incumbent.source, incumbent.result.defines, SizeSelection::in);
                        auto b = evaluate(proposal.source, proposal.defines, SizeSelection::in);
                        if (!a || !b) return make_error(fmt::format("iteration {}: re-timing failed: {}", it,
                                                                    (!a ? a.error() : b.error()).message));
                        if (a->score) theirs.push_back(*a->score);
                        if (b->score) mine.push_back(*b->score);
                    }
                    const bool better = mine.size() == 2 && theirs.size() == 2 &&
                                        (mine[0] + mine[1]) > (theirs[0] + theirs[1]);
                    decision.decision = better ? Promotion::accept : Promotion::reject;
                    decision.why += fmt::format("; interleaved re-timing: {:.4f} vs {:.4f} -> {}",
                                                mine.empty() ? 0.0 : (mine[0] + mine.back()) / 2,
                                                theirs.empty() ? 0.0 : (theirs[0] + theirs.back()) / 2,
                                                better ? "accepted" : "kept the incumbent");
                }
                rec.status = "evaluated";
                rec.verdict = verdict_name(result->verdict);
                rec.score = result->score;
                rec.diagnostics = result->diagnostics;
                rec.result = to_json(*result);
                rec.accepted = decision.decision == Promotion::accept;
                rec.note = proposal.note.empty() ? decision.why : proposal.note + "; " + decision.why;
                proposer_.observe(attempt);
                previous = attempt;
                history.push_back(attempt);
                while (static_cast<int>(history.size()) > options.history) history.pop_front();
                if (rec.accepted) {
                    incumbent = attempt;
                    incumbent_id = *id;
                    since_improvement = 0;
                    run.best_score = result->score;
                    run.best_candidate_id = *id;
                } else {
                    ++since_improvement;
                }
                line = fmt::format("{} score {}{}", rec.verdict, score_text(result->score),
                                   rec.accepted ? " ACCEPTED (" + decision.why + ")"
                                                : (result->verdict == Verdict::ok ? " (" + decision.why + ")" : ""));
                if (result->verdict != Verdict::ok) line += ": " + result->diagnostics.substr(0, 160);
            }
        }
        rec.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
        if (auto r = store_.add_iteration(rec); !r) return r.error();
        run.iterations_done = it;
        if (auto r = store_.update_run(run); !r) return r.error();
        say(fmt::format("[{:>3}/{}] {}{}  best {}", it, options.iterations,
                        proposal.note.empty() ? "" : proposal.note.substr(0, 60) + ": ", line,
                        score_text(incumbent.result.score)));
    }

    // The gate: seed and best side by side, interleaved, on every size including the held-out one.
    say(fmt::format("gate: re-timing seed and best side by side on all {} sizes, held-out included", options.profile));
    SideBySide seed_runs, best_runs;
    // When nothing beat the seed, the best is the seed: measure it once, so that noise between two
    // measurements of one kernel is not reported as a speed-up.
    const bool best_is_seed = incumbent_id == seed_id;
    for (int round = 0; round < 2; ++round) {
        for (auto* side : {&seed_runs, &best_runs}) {
            if (best_is_seed && side == &best_runs) continue;
            const Attempt& a = side == &seed_runs ? seed : incumbent;
            auto r = evaluate(a.source, a.result.defines, SizeSelection::all);
            if (!r) return r.error();
            if (r->verdict != Verdict::ok) {
                side->all_ok = false;
                side->failure = fmt::format("{}: {}", verdict_name(r->verdict), r->diagnostics);
            }
            for (const auto& s : r->sizes) {
                side->heldout[s.label] = s.heldout;
                if (s.timed) side->seconds[s.label].push_back(s.seconds);
            }
            side->results.push_back(*r);
        }
    }
    if (best_is_seed) best_runs = seed_runs;
    auto median_of = [](const SideBySide& s, const std::string& label) {
        auto it = s.seconds.find(label);
        return it == s.seconds.end() ? 0.0 : summarize(it->second).median;
    };
    std::vector<double> ratios;
    std::optional<double> heldout_ratio;
    for (const auto& [label, heldout] : seed_runs.heldout) {
        const double ts = median_of(seed_runs, label), tb = median_of(best_runs, label);
        if (ts <= 0 || tb <= 0) continue;
        if (heldout) heldout_ratio = ts / tb;
        else ratios.push_back(ts / tb);
    }
    summary.iterations = run.iterations_done;
    summary.seed_score = seed.result.score;
    summary.best_score = incumbent.result.score;
    if (!ratios.empty()) summary.speedup = geometric_mean(ratios);
    const EvalResult& best_gate = best_runs.results.back();
    const EvalResult& seed_gate = seed_runs.results.back();
    summary.best_verdict_heldout = verdict_name(best_gate.verdict);
    summary.heldout_fraction = best_runs.all_ok ? best_gate.heldout_fraction.value_or(0) : 0.0;
    summary.heldout_seed_fraction = seed_runs.all_ok ? seed_gate.heldout_fraction : std::nullopt;
    if (best_runs.all_ok) summary.heldout_speedup = heldout_ratio;
    summary.stop_reason = stop_reason;
    summary.cost_usd = cost;
    for (auto [role, side, id] : {std::tuple{"seed", &seed_runs, seed_id}, std::tuple{"best", &best_runs, incumbent_id}}) {
        HeldoutRecord h;
        h.run_id = run.run_id;
        h.role = role;
        h.candidate_id = id;
        h.verdict = verdict_name(side->results.back().verdict);
        h.fraction = side->all_ok ? side->results.back().heldout_fraction : std::optional<double>(0.0);
        for (const auto& [label, heldout] : side->heldout)
            if (heldout) h.seconds = median_of(*side, label);
        h.result = to_json(side->results.back());
        if (auto r = store_.add_heldout(h); !r) return r.error();
    }
    if (!best_runs.all_ok) say("gate: the best kernel FAILED at the held-out size or on re-check: " + best_runs.failure);

    // The best kernel, with its tuned knob values as the defaults.
    const auto dir = std::filesystem::path(options.output_dir.empty() ? "kevo-runs" : options.output_dir) / run.run_id;
    summary.best_path = (dir / ("best." + suffix)).string();
    if (auto w = write_file_atomic(summary.best_path, apply_knob_defaults(incumbent.source, incumbent.result.defines)); !w)
        return w.error();
    run.status = "finished";
    run.summary = summary.to_json();
    if (auto r = store_.update_run(run); !r) return r.error();
    return summary;
}

}  // namespace kevo
