// See options.hpp. The run's own options are listed here, with their defaults taken from RunOptions
// (search/loop.hpp), so that a default is written once.
#include "search/options.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <limits>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "backend/registry.hpp"
#include "knowledge/library.hpp"
#include "search/loop.hpp"
#include "search/proposers/registry.hpp"
#include "search/strategies/registry.hpp"
#include "task/task.hpp"

namespace kevo {
namespace {

using T = OptionType;
using P = OptionPart;

std::vector<RunOption> run_options() {
    const RunOptions d{};
    const double int_max = std::numeric_limits<int>::max();
    return {
        {.name = "backend", .flag = "--backend", .type = T::word, .fallback = "auto", .words = backend_choices(),
         .help = "cuda, opencl or auto (CUDA if a GPU is found, else OpenCL)", .stored_as = "backend"},
        // Unset: the backend's own (CUDA C++ on cuda, OpenCL C on opencl); a --from file's suffix sets it.
        {.name = "language", .flag = "--language", .type = T::word, .words = language_names(),
         .help = "the candidates' kernel language: the seed, the prompt and every candidate (default: the backend's "
                 "own, or that of the --from file)",
         .study = StudyPlace::run_table, .stored_as = "language"},
        {.name = "device", .flag = "--device", .type = T::integer, .fallback = 0, .lo = 0, .hi = int_max,
         .help = "device index within the backend", .stored_as = "device"},
        {.name = "profile", .flag = "--profile", .type = T::word, .words = kProfileNames,
         .help = "size profile: small, paper, large, or trace (the ML pack: production shapes weighted by call count) "
                 "(default: small on a CPU, large on a GPU)",
         .stored_as = "profile"},
        {.name = "proposer", .flag = "--proposer", .type = T::word, .fallback = "tune", .words = proposer_names(),
         .help = proposer_help(), .stored_as = "proposer"},
        // A name the strategy registry checks (its message lists the strategies: make_strategy).
        {.name = "strategy", .flag = "--strategy", .type = T::text, .fallback = d.strategy, .help = strategy_help(),
         .stored_as = "strategy"},
        {.name = "iterations", .flag = "--iterations", .type = T::integer, .fallback = d.iterations, .lo = 0, .hi = 100000,
         .help = "proposals after the seed (with --resume: search further, to N)", .part = P::budget,
         .resume = ResumeRule::extends, .stored_as = "iterations"},
        {.name = "max_wall", .flag = "--max-wall", .type = T::number, .fallback = d.max_wall_s, .lo = 0, .hi = 1e9,
         .help = "stop after this many seconds", .part = P::budget, .resume = ResumeRule::extends, .stored_as = "max_wall_s"},
        {.name = "max_cost", .flag = "--max-cost", .type = T::number, .fallback = d.max_cost_usd, .lo = 0, .hi = 1e9,
         .help = "stop once this many USD are spent (llm; needs --price-in/--price-out or --cost-from-server)",
         .part = P::budget, .resume = ResumeRule::extends, .stored_as = "max_cost_usd"},
        {.name = "max_tokens_total", .flag = "--max-tokens-total", .type = T::integer, .fallback = d.max_tokens_total,
         .lo = 0, .hi = double(int64_t(1) << 50),
         .help = "stop once the proposer has used this many tokens, prompts and answers together (0: no limit)",
         .part = P::budget, .resume = ResumeRule::extends, .stored_as = "max_tokens_total"},
        {.name = "max_proposer_failures", .flag = "--max-proposer-failures", .type = T::integer,
         .fallback = d.max_proposer_failures, .lo = 1, .hi = 100000,
         .help = "iterations in a row the proposer may fail (server gone, key refused, ...) before the run is "
                 "interrupted, exit 2, resumable",
         .part = P::budget, .resume = ResumeRule::extends, .study = StudyPlace::run_table,
         .stored_as = "max_proposer_failures"},
        {.name = "stagnation", .flag = "--stagnation", .type = T::integer, .fallback = d.stagnation_window, .lo = 0,
         .hi = 100000, .help = "iterations without improvement before optimisation dropout (0: never)", .part = P::loop,
         .study = StudyPlace::run_table, .stored_as = "stagnation_window"},
        // Read only where a prompt is built (llm, cmd): the tuner and replay ignore them, with a warning.
        {.name = "knowledge", .flag = "--knowledge", .type = T::path, .fallback = d.knowledge,
         .words = {std::string(kShippedKnowledge), std::string(kNoKnowledge)},
         .help = "the notes the prompt draws from: shipped (kevo's own), none, or a folder of note files (*.md; "
                 "docs/knowledge.md)",
         .part = P::loop, .study = StudyPlace::run_table, .stored_as = "knowledge", .prompt = true},
        {.name = "knowledge_tokens", .flag = "--knowledge-tokens", .type = T::integer, .fallback = d.knowledge_tokens,
         .lo = 0, .hi = 1000000, .help = "the notes' budget in one prompt, in estimated tokens (0: no notes)",
         .part = P::loop, .study = StudyPlace::run_table, .stored_as = "knowledge_tokens", .prompt = true},
        {.name = "gate_rounds", .flag = "--gate-rounds", .type = T::integer, .fallback = d.gate_rounds, .lo = 1, .hi = 99,
         .help = "interleaved rounds per kernel the gate examines", .part = P::gate, .study = StudyPlace::run_table,
         .stored_as = "gate_rounds"},
        {.name = "gate_top", .flag = "--gate-top", .type = T::integer, .fallback = d.gate_top, .lo = 1, .hi = 99,
         .help = "kernels of the population the gate examines, best first, before it falls back to the seed",
         .part = P::gate, .study = StudyPlace::run_table, .stored_as = "gate_top"},
        {.name = "warmup", .flag = "--warmup", .type = T::integer, .fallback = d.warmup, .lo = 0, .hi = 1000,
         .help = "untimed runs per size", .part = P::evaluation, .study = StudyPlace::run_table, .stored_as = "warmup"},
        {.name = "repeat", .flag = "--repeat", .type = T::integer, .fallback = d.repeat, .lo = 1, .hi = 10000,
         .help = "timed runs per size", .part = P::evaluation, .study = StudyPlace::run_table, .stored_as = "repeat"},
        {.name = "max_repeat", .flag = "--max-repeat", .type = T::integer, .fallback = d.max_repeat, .lo = 1, .hi = 100000,
         .help = "timed runs per size at most: while a size's cv is above --noise-cv, rounds of --repeat runs are "
                 "added up to this (and 2 s)",
         .part = P::evaluation, .study = StudyPlace::run_table, .stored_as = "max_repeat"},
        {.name = "noise_cv", .flag = "--noise-cv", .type = T::number, .fallback = d.noise_cv, .lo = 0, .hi = 10,
         .help = "a size whose cv stays above this is reported noisy", .part = P::evaluation,
         .study = StudyPlace::run_table, .stored_as = "noise_cv"},
        {.name = "timeout", .flag = "--timeout", .type = T::number, .fallback = d.timeout_s, .lo = 0.1, .hi = 86400,
         .help = "whole-candidate deadline in seconds", .part = P::evaluation, .study = StudyPlace::run_table,
         .stored_as = "timeout_s"},
        {.name = "roofline", .flag = "--roofline", .type = T::word, .fallback = "static", .words = {"static", "workload"},
         .help = "static or workload", .part = P::evaluation, .study = StudyPlace::run_table, .stored_as = "roofline"},
        // Unset: a fresh seed, drawn when the run starts.
        {.name = "seed", .flag = "--seed", .type = T::integer, .lo = 0, .hi = 9007199254740992.0 /* 2^53 */,
         .help = "seed of the proposer's randomness and the correctness inputs", .stored_as = "seed"},
        {.name = "out", .flag = "--out", .type = T::path, .fallback = "kevo-runs",
         .help = "folder for best kernels (a folder per run inside)", .stored_as = "output_dir"},
        // A study's ("{task}" substituted: "kernels/{task}.cu") is relative to the study file.
        {.name = "from", .flag = "--from", .type = T::path,
         .help = "start from your own kernel FILE instead of the shipped seed (iteration 1; the seed stays the gate's "
                 "baseline)",
         .study = StudyPlace::run_table, .stored_as = "from_file"},
    };
}

std::vector<RunOption> build_table() {
    std::vector<RunOption> table = run_options();
    const auto add = [&](const std::vector<RunOption>& options, OptionPart part, const std::string& owner) {
        for (RunOption option : options) {
            option.part = part;
            option.owner = owner;
            table.push_back(std::move(option));
        }
    };
    for (const StrategyEntry& e : strategy_entries()) add(e.options, OptionPart::strategy, e.name);
    for (const ProposerEntry& e : proposer_entries()) add(e.options, OptionPart::proposer, e.name);
    return table;
}

bool in_range(const RunOption& o, double v) { return std::isfinite(v) && v >= o.lo && v <= o.hi; }

}  // namespace

const std::vector<RunOption>& run_option_table() {
    static const std::vector<RunOption> table = build_table();
    return table;
}

const RunOption* find_run_option(std::string_view name) {
    for (const auto& o : run_option_table())
        if (o.name == name) return &o;
    return nullptr;
}

const RunOption* find_run_option_by_flag(std::string_view flag) {
    for (const auto& o : run_option_table())
        if (!o.flag.empty() && o.flag == flag) return &o;
    return nullptr;
}

std::vector<const RunOption*> options_of(OptionPart part, std::string_view owner) {
    std::vector<const RunOption*> out;
    for (const auto& o : run_option_table())
        if (o.part == part && o.owner == owner) out.push_back(&o);
    return out;
}

std::string accepted_text(const RunOption& o) {
    switch (o.type) {
        case T::text: return "a string";
        case T::path:
            return o.words.empty() ? "a string" : fmt::format("a path, or \"{}\"", fmt::join(o.words, "\" or \""));
        case T::word: return fmt::format("one of \"{}\"", fmt::join(o.words, "\", \""));
        case T::number: return fmt::format("a number from {:g} to {:g}", o.lo, o.hi);
        case T::integer: return fmt::format("an integer from {:g} to {:g}", o.lo, o.hi);
        case T::number_or_none: return fmt::format("a number from {:g} to {:g}, or \"none\"", o.lo, o.hi);
        case T::integer_or_none: return fmt::format("an integer from {:g} to {:g}, or \"none\"", o.lo, o.hi);
        case T::flag: return "true or false";
    }
    return {};
}

std::optional<nlohmann::json> read_option_value(const RunOption& o, const nlohmann::json& value) {
    const bool none = value.is_string() && value.get<std::string>() == "none";
    if (none && (o.type == T::integer_or_none || o.type == T::number_or_none)) return nlohmann::json();
    // A command line's words are strings; a study's values have their own types.
    nlohmann::json v = value;
    if (value.is_string() && o.type != T::text && o.type != T::path && o.type != T::word) {
        const std::string text = value.get<std::string>();
        if (o.type == T::flag) {
            if (text != "true" && text != "false") return std::nullopt;
            v = text == "true";
        } else if (o.type == T::integer || o.type == T::integer_or_none) {
            long long n = 0;
            const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), n);
            if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
            v = n;
        } else {
            size_t used = 0;
            try {
                v = std::stod(text, &used);
            } catch (const std::exception&) {
                return std::nullopt;
            }
            if (used != text.size()) return std::nullopt;
        }
    }
    switch (o.type) {
        case T::text:
        case T::path:
            if (!v.is_string() || v.get<std::string>().empty()) return std::nullopt;
            return v;
        case T::word:
            if (!v.is_string() || std::find(o.words.begin(), o.words.end(), v.get<std::string>()) == o.words.end())
                return std::nullopt;
            return v;
        case T::flag:
            if (!v.is_boolean()) return std::nullopt;
            return v;
        case T::number:
        case T::number_or_none:
            if (!v.is_number() || !in_range(o, v.get<double>())) return std::nullopt;
            return v;
        case T::integer:
        case T::integer_or_none:
            if (!(v.is_number_integer() || v.is_number_unsigned()) || !in_range(o, v.get<double>())) return std::nullopt;
            return v;
    }
    return std::nullopt;
}

bool is_path_word(const RunOption& o, const std::string& value) {
    return o.type == T::path && std::find(o.words.begin(), o.words.end(), value) != o.words.end();
}

std::string value_text(const nlohmann::json& value) {
    if (value.is_null()) return "none";
    if (value.is_string()) return value.get<std::string>();
    if (value.is_number_float()) return fmt::format("{}", value.get<double>());
    return value.dump();
}

std::vector<std::string> option_words(const RunOption& o, const nlohmann::json& value) {
    if (o.flag.empty()) return {};
    if (o.type == T::flag) return value.is_boolean() && value.get<bool>() ? std::vector<std::string>{o.flag} : std::vector<std::string>{};
    if (value.is_null()) {
        if (o.type == T::integer_or_none || o.type == T::number_or_none) return {o.flag, "none"};
        return {};
    }
    if (value.is_string() && value.get<std::string>().empty()) return {};
    return {o.flag, value_text(value)};
}

}  // namespace kevo
