// See gate.hpp. A loss is judged like a gain in promotion.cpp: round r gives the paired log-ratio
// of the seed's time to the candidate's (the mean over the sizes considered), and paired_estimate
// gives its spread; the candidate loses when ln(speed-up) < -spread.
#include "search/gate.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "core/stats.hpp"

namespace kevo {
namespace {

constexpr const char* kOutcomes[] = {"improved", "no_gain", "best_failed_gate", "interrupted"};
constexpr size_t kDetailChars = 240;

const SizeResult* find_size(const EvalResult& r, const std::string& label) {
    for (const auto& s : r.sizes)
        if (s.label == label && s.timed) return &s;
    return nullptr;
}

// One measured sample of one size: the round it came from and the size's figures there.
struct Sample {
    const EvalResult* round = nullptr;
    const SizeResult* size = nullptr;
};

// The round whose median time at `label` is the lower median over the rounds.
Sample median_sample(const std::vector<const EvalResult*>& rounds, const std::string& label) {
    std::vector<Sample> samples;
    for (const EvalResult* r : rounds)
        if (const SizeResult* s = find_size(*r, label)) samples.push_back({r, s});
    if (samples.empty()) return {};
    std::sort(samples.begin(), samples.end(), [](const Sample& a, const Sample& b) { return a.size->seconds < b.size->seconds; });
    return samples[(samples.size() - 1) / 2];
}

// The speed-up over one group of sizes (in distribution, or held-out) and what goes with it.
struct SpeedFigure {
    double speedup = 0, spread = 0, spread_log = 0;
    double fraction = 0, seed_fraction = 0;  // geometric means of Phi at the median samples
    double seconds = 0, seed_seconds = 0;    // geometric means of the median times
    Limiter limiter = Limiter::none;         // multi-class roofline: the first size's binding term
    double sol_seconds = 0;                  // and its speed-of-light time
    const EvalResult *round = nullptr, *seed_round = nullptr;  // the median samples' rounds (first size)
};

std::optional<SpeedFigure> speed_figure(const std::vector<const EvalResult*>& seed,
                                        const std::vector<const EvalResult*>& candidate, bool heldout) {
    std::vector<std::string> labels;
    for (const auto& s : candidate.front()->sizes)
        if (s.timed && s.heldout == heldout) labels.push_back(s.label);
    if (labels.empty()) return std::nullopt;

    SpeedFigure f;
    // Every mean below weights a size by its weight (a trace shape's call count; 1 elsewhere).
    std::vector<double> ratios, fractions, seed_fractions, seconds, seed_seconds, weights;
    for (const auto& label : labels) {
        const Sample s = median_sample(seed, label), c = median_sample(candidate, label);
        if (!s.size || !c.size) return std::nullopt;
        if (!f.round) {
            f.round = c.round, f.seed_round = s.round;
            f.limiter = c.size->limiter, f.sol_seconds = c.size->sol_seconds;
        }
        ratios.push_back(s.size->seconds / c.size->seconds);
        fractions.push_back(c.size->fraction);
        seed_fractions.push_back(s.size->fraction);
        seconds.push_back(c.size->seconds);
        seed_seconds.push_back(s.size->seconds);
        weights.push_back(c.size->weight);
    }
    // Round by round: the paired log-ratio and its standard error from within the two evaluations.
    std::vector<double> logs, sigmas;
    for (size_t r = 0; r < candidate.size(); ++r) {
        double log_sum = 0, weight_sum = 0, a = 0, b = 0;
        for (const auto& label : labels) {
            const SizeResult *s = find_size(*seed[r], label), *c = find_size(*candidate[r], label);
            if (!s || !c || s->seconds <= 0 || c->seconds <= 0) return std::nullopt;
            log_sum += c->weight * std::log(s->seconds / c->seconds);
            weight_sum += c->weight;
            a = std::max(a, median_spread(*s));
            b = std::max(b, median_spread(*c));
        }
        logs.push_back(log_sum / weight_sum);
        sigmas.push_back(std::sqrt(a * a + b * b));
    }
    f.speedup = weighted_geometric_mean(ratios, weights);
    f.spread_log = paired_estimate(logs, sigmas).spread_log;
    f.spread = std::expm1(f.spread_log);
    f.fraction = weighted_geometric_mean(fractions, weights);
    f.seed_fraction = weighted_geometric_mean(seed_fractions, weights);
    f.seconds = weighted_geometric_mean(seconds, weights);
    f.seed_seconds = weighted_geometric_mean(seed_seconds, weights);
    return f;
}

bool loses(const SpeedFigure& f) { return !(f.speedup > 0) || std::log(f.speedup) < -f.spread_log; }
bool gains(const SpeedFigure& f) { return f.speedup > 0 && std::log(f.speedup) > f.spread_log; }

std::string speed_text(const SpeedFigure& f) { return fmt::format("{:.3f}x (spread {:.1f}%)", f.speedup, 100 * f.spread); }

std::string hyphenated(std::string s) {
    std::replace(s.begin(), s.end(), '_', '-');
    return s;
}

std::string one_line(std::string s) {
    std::replace(s.begin(), s.end(), '\n', ' ');
    return s.size() > kDetailChars ? s.substr(0, kDetailChars - 3) + "..." : s;
}

std::vector<GateRound> round_table(const std::vector<EvalResult>& seed, const std::vector<EvalResult>& candidate) {
    std::vector<GateRound> table(std::max(seed.size(), candidate.size()));
    for (size_t r = 0; r < table.size(); ++r) {
        for (const auto& [results, verdict, seconds] :
             {std::tuple{&seed, &table[r].seed_verdict, &table[r].seed_seconds},
              std::tuple{&candidate, &table[r].verdict, &table[r].seconds}}) {
            if (r >= results->size()) continue;
            *verdict = (*results)[r].verdict;
            for (const auto& s : (*results)[r].sizes)
                if (s.timed) (*seconds)[s.label] = s.seconds;
        }
    }
    return table;
}

GateExamination start_examination(const StoredAttempt& candidate) {
    GateExamination e;
    e.iteration = candidate.attempt.iteration;
    e.candidate_id = candidate.candidate_id;
    return e;
}

// The first round the kernel failed, if any: recorded as a held-out or re-check fault.
bool failed_correctness(GateExamination& e, const std::vector<EvalResult>& rounds, const std::vector<EvalResult>& seed) {
    for (size_t r = 0; r < rounds.size(); ++r) {
        const EvalResult& result = rounds[r];
        if (result.verdict == Verdict::ok) continue;
        const SizeResult* bad = nullptr;
        for (const auto& s : result.sizes)
            if (!s.correct && !bad) bad = &s;
        const bool heldout = bad && bad->heldout;
        e.passed = false;
        e.failure = heldout ? GateFailure::heldout_fault : GateFailure::recheck_fault;
        e.reason = std::string(heldout ? "heldout-" : "recheck-") + hyphenated(verdict_name(result.verdict));
        e.verdict = result.verdict;
        e.heldout_fraction = 0.0;  // a kernel that failed scores nothing at the held-out size
        const std::string where = !bad ? "" : heldout ? " at the held-out size " + bad->label : " at size " + bad->label;
        e.detail = one_line(fmt::format("{}{} in gate round {}: {}", verdict_name(result.verdict), where, r + 1,
                                        result.diagnostics));
        e.result = result;
        if (!seed.empty()) e.seed_result = seed[std::min(r, seed.size() - 1)];
        return true;
    }
    return false;
}

void take_figures(GateExamination& e, const std::optional<SpeedFigure>& in, const std::optional<SpeedFigure>& held) {
    if (in) e.speedup = in->speedup, e.speedup_spread = in->spread;
    if (held) {
        e.heldout_speedup = held->speedup;
        e.heldout_speedup_spread = held->spread;
        e.heldout_fraction = held->fraction;
        e.seed_heldout_fraction = held->seed_fraction;
        e.heldout_seconds = held->seconds;
        e.seed_heldout_seconds = held->seed_seconds;
        e.heldout_limiter = held->limiter;
        e.heldout_sol_seconds = held->sol_seconds;
    }
    const SpeedFigure* any = held ? &*held : in ? &*in : nullptr;
    if (any) e.result = *any->round, e.seed_result = *any->seed_round;
}

std::vector<const EvalResult*> pointers(const std::vector<EvalResult>& v) {
    std::vector<const EvalResult*> out;
    for (const auto& r : v) out.push_back(&r);
    return out;
}

std::string examination_line(const GateExamination& e) {
    const std::string who = e.iteration == 0 ? "the seed" : fmt::format("iteration {}", e.iteration);
    return e.passed ? fmt::format("gate: {} passed: {}", who, e.detail)
                    : fmt::format("gate: {} FAILED ({}): {}", who, e.reason, e.detail);
}

}  // namespace

const char* outcome_name(RunOutcome outcome) { return kOutcomes[static_cast<int>(outcome)]; }
void to_json(nlohmann::json& j, RunOutcome outcome) { j = outcome_name(outcome); }
void from_json(const nlohmann::json& j, RunOutcome& outcome) {
    const std::string name = j.get<std::string>();
    for (size_t i = 0; i < std::size(kOutcomes); ++i)
        if (name == kOutcomes[i]) {
            outcome = static_cast<RunOutcome>(i);
            return;
        }
    throw nlohmann::json::other_error::create(
        501, fmt::format("outcome: '{}' is not one of improved, no_gain, best_failed_gate, interrupted", name), &j);
}

const GateExamination* GateReport::rejected() const {
    return outcome == RunOutcome::best_failed_gate ? &examined.front() : nullptr;
}

const GateExamination* GateReport::within_noise() const {
    for (const auto& e : examined)
        if (e.failure == GateFailure::within_noise) return &e;
    return nullptr;
}

GateExamination examine(const StoredAttempt& candidate, const std::vector<EvalResult>& seed_rounds,
                        const std::vector<EvalResult>& candidate_rounds) {
    GateExamination e = start_examination(candidate);
    e.rounds = round_table(seed_rounds, candidate_rounds);
    if (!seed_rounds.empty()) e.seed_result = seed_rounds.back();
    if (failed_correctness(e, candidate_rounds, seed_rounds)) return e;
    // Pairs whose seed evaluation succeeded (a seed failing its own task is reported by its row).
    std::vector<const EvalResult*> seeds, candidates;
    for (size_t r = 0; r < std::min(seed_rounds.size(), candidate_rounds.size()); ++r)
        if (seed_rounds[r].verdict == Verdict::ok) seeds.push_back(&seed_rounds[r]), candidates.push_back(&candidate_rounds[r]);
    e.passed = true;
    if (candidates.empty()) {
        e.detail = "correct at every size; no speed-up: the seed failed in every round";
        if (!candidate_rounds.empty()) e.result = candidate_rounds.back();
        return e;
    }
    const auto in = speed_figure(seeds, candidates, false), held = speed_figure(seeds, candidates, true);
    take_figures(e, in, held);
    const std::string figures = fmt::format("{} in distribution, {} at the held-out size, over {} rounds",
                                            in ? speed_text(*in) : "-", held ? speed_text(*held) : "-", candidates.size());
    if (in && loses(*in)) {
        e.passed = false;
        e.failure = GateFailure::slower_than_seed;
        e.reason = "slower-than-seed";
        e.detail = "slower than the seed by more than the spread: " + figures;
    } else if (held && loses(*held)) {
        e.passed = false;
        e.failure = GateFailure::slower_heldout;
        e.reason = "slower-heldout";
        e.detail = "slower than the seed at the held-out size by more than the spread: " + figures;
    } else if (!in || !gains(*in)) {
        e.passed = false;
        e.failure = GateFailure::within_noise;
        e.reason = "within-noise";
        e.detail = "correct, but not faster than the seed beyond the spread: " + figures;
    } else {
        e.detail = "correct at every size in every round; " + figures;
    }
    return e;
}

GateExamination examine_seed(const StoredAttempt& seed, const std::vector<EvalResult>& seed_rounds) {
    GateExamination e = start_examination(seed);
    e.rounds = round_table(seed_rounds, seed_rounds);
    if (!seed_rounds.empty()) e.result = e.seed_result = seed_rounds.back();
    if (failed_correctness(e, seed_rounds, seed_rounds)) return e;
    e.passed = true;
    const auto rounds = pointers(seed_rounds);
    const auto in = speed_figure(rounds, rounds, false), held = speed_figure(rounds, rounds, true);
    take_figures(e, in, held);
    // Against itself: 1 by definition, whatever the noise between its rounds.
    if (in) e.speedup = 1.0, e.speedup_spread = 0.0;
    if (held) e.heldout_speedup = 1.0, e.heldout_speedup_spread = 0.0;
    e.detail = fmt::format("the baseline, correct at every size in {} round{}", seed_rounds.size(),
                           seed_rounds.size() == 1 ? "" : "s");
    return e;
}

Expected<GateReport> run_gate(const StoredAttempt& seed, const std::vector<StoredAttempt>& preference,
                              const EvaluateAttempt& evaluate_all, const GateOptions& options) {
    auto say = [&](const std::string& line) { if (options.progress) options.progress(line); };
    GateReport report;
    std::vector<EvalResult> seed_pool;  // every seed round measured, for the seed's own examination
    for (const StoredAttempt& candidate : preference) {
        if (candidate.candidate_id == seed.candidate_id) break;
        std::vector<EvalResult> seed_rounds, rounds;
        bool failed = false;
        for (int r = 0; r < options.rounds && !failed; ++r) {
            // Which kernel goes first alternates, so that a drift within a round favours neither.
            for (const bool seed_turn : {r % 2 == 0, r % 2 != 0}) {
                auto e = evaluate_all(seed_turn ? seed.attempt : candidate.attempt);
                if (!e) return e.error();
                failed = !seed_turn && e->verdict != Verdict::ok;
                (seed_turn ? seed_rounds : rounds).push_back(std::move(*e));
                if (failed) break;  // no more rounds for a kernel that is wrong
            }
        }
        seed_pool.insert(seed_pool.end(), seed_rounds.begin(), seed_rounds.end());
        report.examined.push_back(examine(candidate, seed_rounds, rounds));
        say(examination_line(report.examined.back()));
        if (report.examined.back().passed) {
            report.outcome = report.examined.size() == 1 ? RunOutcome::improved : RunOutcome::best_failed_gate;
            return report;
        }
        if (report.examined.back().failure == GateFailure::within_noise) break;  // older incumbents are no faster
    }
    // The seed: the baseline, handed out when nothing else passed.
    const int rounds = std::max(1, options.rounds);
    while (static_cast<int>(seed_pool.size()) < rounds) {
        auto e = evaluate_all(seed.attempt);
        if (!e) return e.error();
        seed_pool.push_back(std::move(*e));
    }
    const std::vector<EvalResult> last(seed_pool.end() - rounds, seed_pool.end());
    report.examined.push_back(examine_seed(seed, last));
    say(examination_line(report.examined.back()));
    // The search's best within the noise (or only the seed examined) is no gain; a best that failed
    // for a fault or a loss is best_failed_gate, whatever was examined after it.
    const GateExamination& first = report.examined.front();
    const bool only_noise = report.examined.size() == 1 || first.failure == GateFailure::within_noise;
    report.outcome = only_noise ? RunOutcome::no_gain : RunOutcome::best_failed_gate;
    return report;
}

}  // namespace kevo
