// The one option schema (search/options.hpp) held against everything derived from it: kevo run's
// own parser (cli/run_flags) and the study file's check accept the same values of every option,
// bounds included; the resume rule follows the table; the reproduce line parses back to the same
// settings; and a proposer and a strategy defined only in this file, each with one registration
// line, are usable from flags and from a study with nothing else edited.
#include <algorithm>

#include <fmt/ranges.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cli/run_flags.hpp"
#include "search/options.hpp"
#include "search/proposers/registry.hpp"
#include "search/run_settings.hpp"
#include "search/strategies/lineage.hpp"
#include "search/strategies/registry.hpp"
#include "study/study.hpp"
#include "study/study_file.hpp"

namespace {

using namespace kevo;

// ---- A trivial proposer and a trivial strategy, each with an option of its own ----

class Silent final : public Proposer {
public:
    explicit Silent(int rounds) : rounds(rounds) {}
    std::string name() const override { return "test-silent"; }
    Proposal propose(const ProposalContext&) override {
        Proposal p;
        p.status = Proposal::Status::exhausted;
        return p;
    }
    int rounds;
};

Expected<std::unique_ptr<Proposer>> make_silent(const ProposerContext& c) {
    return std::unique_ptr<Proposer>(std::make_unique<Silent>(c.values.value("silent_rounds", 0)));
}

class Patient final : public Strategy {
public:
    explicit Patient(const StrategySettings& s) : patience(s.options.value("patience", -1)), line_(s.history, patience) {}
    std::string name() const override { return "test-patient"; }
    Plan plan(int) const override {
        Plan p;
        p.parent = line_.incumbent();
        return p;
    }
    void apply(const IterationRecord& record, const std::optional<StoredAttempt>& evaluated) override {
        line_.apply(record, evaluated);
    }
    const StoredAttempt& best() const override { return line_.incumbent(); }
    std::vector<StoredAttempt> gate_candidates(int) const override { return {line_.incumbent()}; }
    int patience;

private:
    Lineage line_;
};

const bool silent_registered = register_proposer(
    {"test-silent", "proposes nothing (a test)", 90,
     {{.name = "silent_rounds", .flag = "--silent-rounds", .type = OptionType::integer, .fallback = 2, .lo = 1, .hi = 7,
       .help = "rounds of silence (test-silent)", .study = StudyPlace::model_table}},
     make_silent});

const bool patient_registered = register_strategy(
    {"test-patient", "one incumbent with a patience of its own (a test)", 90,
     [](const StrategySettings& s) -> std::unique_ptr<Strategy> { return std::make_unique<Patient>(s); },
     {{.name = "patience", .flag = "--patience", .type = OptionType::integer, .fallback = 3, .lo = 0, .hi = 50,
       .help = "iterations of patience (test-patient)", .study = StudyPlace::run_table}}});

// ---- kevo run's parser and the study file's check ----

struct Parsed {
    bool ok = false;
    std::string error;
    nlohmann::json values;
    std::set<std::string> given;
};

// `args` through the very flags kevo run declares.
Parsed parse_flags(std::vector<std::string> args) {
    CLI::App app;
    cli::RunFlags flags;
    cli::add_run_flags(app, flags);
    std::reverse(args.begin(), args.end());  // CLI11 takes a vector last word first
    Parsed p;
    try {
        app.parse(args);
    } catch (const CLI::ParseError& e) {
        p.error = e.what();
        return p;
    }
    p.ok = true;
    p.values = cli::option_values(flags);
    p.given = cli::given_options(flags);
    return p;
}

// A study that sets `option` to the TOML `value` where a study sets it (with what its proposer needs).
Expected<Study> study_with(const RunOption& o, const std::string& value) {
    std::string text = "name = \"t\"\ntasks = [\"saxpy\"]\n";
    const std::string set = fmt::format("{} = {}\n", o.name, value);
    if (o.study == StudyPlace::run_table) {
        text += "[run]\n" + set + "[[models]]\nname = \"m\"\nproposer = \"tune\"\n";
    } else {
        text += fmt::format("[[models]]\nname = \"m\"\nproposer = \"{}\"\n", o.owner);
        for (const RunOption* needed : options_of(OptionPart::proposer, o.owner))
            if (!needed->required.empty() && needed->name != o.name)
                text += fmt::format("{} = {}\n", needed->name, needed->type == OptionType::text ? "\"https://h/v1\"" : "\"x\"");
        text += set;
    }
    return parse_study(text, "test.toml");
}

// The cases of one option: its bounds and one beyond each (numbers), each word and a wrong one
// (words), "none" where it is accepted; each with whether it must be accepted.
std::vector<std::pair<std::string, bool>> cases_of(const RunOption& o) {
    std::vector<std::pair<std::string, bool>> cases;
    if (o.type == OptionType::integer || o.type == OptionType::integer_or_none) {
        const auto lo = static_cast<long long>(o.lo), hi = static_cast<long long>(o.hi);
        cases = {{std::to_string(lo), true}, {std::to_string(hi), true}, {std::to_string(lo - 1), false},
                 {std::to_string(hi + 1), false}};
        if (o.type == OptionType::integer_or_none) cases.push_back({"none", true});
    } else if (o.type == OptionType::number || o.type == OptionType::number_or_none) {
        const double step = std::max(1.0, o.hi / 100);
        cases = {{fmt::format("{}", o.lo), true}, {fmt::format("{}", o.hi), true}, {fmt::format("{}", o.lo - step), false},
                 {fmt::format("{}", o.hi + step), false}};
        if (o.type == OptionType::number_or_none) cases.push_back({"none", true});
    } else if (o.type == OptionType::word) {
        for (const auto& w : o.words) cases.push_back({w, true});
        cases.push_back({"no-such-word", false});
    }
    return cases;
}

TEST(OptionSchema, KevoRunAndTheStudyFileAcceptTheSameValuesOfEveryOption) {
    int compared_with_study = 0, compared = 0;
    for (const RunOption& o : run_option_table()) {
        for (const auto& [text, accepted] : cases_of(o)) {
            ++compared;
            if (!o.flag.empty()) {
                const Parsed p = parse_flags({o.flag + "=" + text});
                EXPECT_EQ(p.ok, accepted) << o.flag << " " << text << ": " << p.error;
            }
            if (o.study == StudyPlace::none) continue;
            const std::string toml = o.type == OptionType::word || text == "none" ? "\"" + text + "\"" : text;
            const auto study = study_with(o, toml);
            EXPECT_EQ(study.has_value(), accepted) << o.name << " = " << toml << ": "
                                                   << (study ? std::string("accepted") : study.error().message);
            ++compared_with_study;
        }
    }
    // The positive control of the bug this schema ends: a study's gate_top = 100 is refused as kevo run refuses it.
    const auto gate_top = study_with(*find_run_option("gate_top"), "100");
    ASSERT_FALSE(gate_top.has_value());
    EXPECT_NE(gate_top.error().message.find("gate_top must be an integer from 1 to 99"), std::string::npos)
        << gate_top.error().message;
    EXPECT_FALSE(parse_flags({"--gate-top", "100"}).ok);
    EXPECT_GT(compared_with_study, 60);
    EXPECT_GT(compared, compared_with_study);
}

TEST(OptionSchema, AStudySetsTheStrategiesOptionsForTheirOwnCellsOnly) {
    const auto study = parse_study("name = \"t\"\ntasks = [\"saxpy\"]\nstrategies = [\"islands\", \"one-plus-one\"]\n"
                                   "[run]\nislands = 6\nmigration_every = 2\n[[models]]\nname = \"m\"\nproposer = \"tune\"\n",
                                   "test.toml");
    ASSERT_TRUE(study) << study.error().message;
    for (const auto& cell : study_cells(*study)) {
        const auto args = run_arguments(*study, cell, CellTarget{"k.db", "out", "s", "r", ""});
        const bool has = std::find(args.begin(), args.end(), "--islands") != args.end();
        EXPECT_EQ(has, cell.strategy == "islands") << cell.key;
        if (cell.strategy == "islands") {
            const auto at = std::find(args.begin(), args.end(), "--islands");
            EXPECT_EQ(*(at + 1), "6");
        }
    }
}

// ---- The resume rule ----

RunOptions stored_run(const std::vector<std::string>& args) {
    const Parsed p = parse_flags(args);
    EXPECT_TRUE(p.ok) << p.error;
    auto options = apply_option_values(RunOptions{}, p.values);
    EXPECT_TRUE(options) << options.error().message;
    options->task = "saxpy";
    return *options;
}

TEST(OptionSchema, AResumeMayExtendTheBudgetsAndReconnectTheProposerButChangeNothingElse) {
    const RunOptions stored = stored_run({"--proposer", "llm", "--base-url", "http://a/v1", "--model", "m1", "--strategy",
                                          "islands", "--islands", "5", "--gate-top", "3", "--seed", "7"});
    // Unchanged values may be given again; changed ones are refused with both values.
    const Parsed same = parse_flags({"--gate-top", "3", "--islands", "5", "--seed", "7"});
    EXPECT_TRUE(check_resume_options("r1", same.given, same.values, stored));
    for (const auto& [args, refused] : std::vector<std::pair<std::vector<std::string>, std::string>>{
             {{"--gate-top", "4"}, "--gate-top cannot change there (stored: 3, given: 4)"},
             {{"--islands", "6"}, "--islands cannot change there (stored: 5, given: 6)"},
             {{"--price-in", "2"}, "--price-in cannot change there (stored: 0, given: 2)"},
             {{"--strategy", "map-elites"}, "--strategy cannot change there (stored: islands, given: map-elites)"}}) {
        const Parsed p = parse_flags(args);
        const auto check = check_resume_options("r1", p.given, p.values, stored);
        ASSERT_FALSE(check) << args[0];
        EXPECT_NE(check.error().message.find(refused), std::string::npos) << check.error().message;
    }
    // Budgets extend.
    const Parsed longer = parse_flags({"--iterations", "50", "--max-wall", "9"});
    EXPECT_TRUE(check_resume_options("r1", longer.given, longer.values, stored));
    const RunExtension e = extended_budgets(longer.given, longer.values);
    EXPECT_EQ(e.iterations, 50);
    EXPECT_EQ(e.max_wall_s, 9.0);
    EXPECT_FALSE(e.max_cost_usd.has_value());
    // The connection reconnects, recorded as a segment; --max-completion-tokens takes --max-tokens' place.
    const Parsed moved = parse_flags({"--model", "m2", "--max-completion-tokens", "100"});
    EXPECT_TRUE(check_resume_options("r1", moved.given, moved.values, stored));
    const auto settings = reconnected_settings(stored, moved.given, moved.values, 4);
    ASSERT_TRUE(settings) << settings.error().message;
    EXPECT_EQ((*settings)["model"], "m2");
    EXPECT_TRUE((*settings)["max_tokens"].is_null());
    EXPECT_EQ((*settings)["max_completion_tokens"], 100);
    ASSERT_EQ((*settings)["segments"].size(), 1u);
    EXPECT_EQ((*settings)["segments"][0]["from_iteration"], 4);
    EXPECT_EQ((*settings)["segments"][0]["changed"]["model"], (nlohmann::json{{"from", "m1"}, {"to", "m2"}}));
    // Only the budgets extend and only a proposer's options reconnect.
    for (const RunOption& o : run_option_table()) {
        if (o.resume == ResumeRule::extends) EXPECT_EQ(o.part, OptionPart::budget) << o.name;
        if (o.resume == ResumeRule::reconnects) EXPECT_EQ(o.part, OptionPart::proposer) << o.name;
    }
}

// ---- The reproduce line ----

TEST(OptionSchema, TheReproduceLineParsesBackToTheSameSettings) {
    for (const auto& args : std::vector<std::vector<std::string>>{
             {"--proposer", "llm", "--base-url", "http://a/v1", "--model", "m", "--temperature", "none", "--stream",
              "--strategy", "islands", "--islands", "6", "--gate-top", "7", "--noise-cv", "0.25", "--seed", "11",
              "--roofline", "workload", "--max-wall", "30"},
             {"--proposer", "cmd", "--command", "echo hi", "--strategy", "map-elites", "--timeout", "2.5", "--seed", "0"},
             {"--proposer", "test-silent", "--silent-rounds", "4", "--strategy", "test-patient", "--patience", "8",
              "--seed", "5", "--out", "somewhere"}}) {
        const RunOptions first = stored_run(args);
        const auto words = rerun_words(first);
        const RunOptions again = stored_run(words);
        EXPECT_EQ(nlohmann::json(again).dump(1), nlohmann::json(first).dump(1)) << fmt::format("{}", fmt::join(words, " "));
    }
    // Every option of the run's own part is on the line, defaults included.
    const auto words = rerun_words(stored_run({"--seed", "1"}));
    for (const char* flag : {"--gate-top", "--gate-rounds", "--warmup", "--repeat", "--stagnation", "--iterations"})
        EXPECT_NE(std::find(words.begin(), words.end(), flag), words.end()) << flag;
    EXPECT_EQ(std::find(words.begin(), words.end(), "--islands"), words.end()) << "one-plus-one has no --islands";
}

// ---- A new proposer and strategy: their own file, one registration line ----

TEST(OptionSchema, AProposerAndAStrategyDefinedHereAreUsableFromFlagsAndFromAStudy) {
    ASSERT_TRUE(silent_registered && patient_registered);
    const auto proposers = proposer_names();
    EXPECT_NE(std::find(proposers.begin(), proposers.end(), "test-silent"), proposers.end());
    const auto strategies = strategy_names();
    EXPECT_NE(std::find(strategies.begin(), strategies.end(), "test-patient"), strategies.end());

    // From flags: parsed and checked by kevo run's parser, handed to the factories.
    EXPECT_FALSE(parse_flags({"--silent-rounds", "8"}).ok) << "beyond its own range";
    const RunOptions options = stored_run({"--proposer", "test-silent", "--silent-rounds", "5", "--strategy",
                                           "test-patient", "--patience", "9"});
    auto proposer = make_proposer(options.proposer, {options.settings, 0, language_named("opencl")});
    ASSERT_TRUE(proposer) << proposer.error().message;
    ASSERT_NE(dynamic_cast<Silent*>(proposer->get()), nullptr);
    EXPECT_EQ(dynamic_cast<Silent*>(proposer->get())->rounds, 5);
    auto strategy = make_strategy(options.strategy, strategy_settings(options));
    ASSERT_TRUE(strategy) << strategy.error().message;
    ASSERT_NE(dynamic_cast<Patient*>(strategy->get()), nullptr);
    EXPECT_EQ(dynamic_cast<Patient*>(strategy->get())->patience, 9);
    // Its default, when not given.
    const RunOptions plain = stored_run({"--strategy", "test-patient"});
    auto default_strategy = make_strategy(plain.strategy, strategy_settings(plain));
    ASSERT_TRUE(default_strategy);
    EXPECT_EQ(dynamic_cast<Patient*>(default_strategy->get())->patience, 3);

    // From a study: checked against the same ranges, passed to the cell's kevo run.
    const auto study = parse_study("name = \"t\"\ntasks = [\"saxpy\"]\nstrategies = [\"test-patient\"]\n[run]\npatience = 4\n"
                                   "[[models]]\nname = \"s\"\nproposer = \"test-silent\"\nsilent_rounds = 6\n",
                                   "test.toml");
    ASSERT_TRUE(study) << study.error().message;
    const auto cells = study_cells(*study);
    ASSERT_EQ(cells.size(), 1u);
    const auto args = run_arguments(*study, cells[0], CellTarget{"k.db", "out", "s", "r", ""});
    for (const auto& [flag, value] : {std::pair{"--patience", "4"}, {"--silent-rounds", "6"}, {"--proposer", "test-silent"}}) {
        const auto at = std::find(args.begin(), args.end(), flag);
        ASSERT_NE(at, args.end()) << flag;
        EXPECT_EQ(*(at + 1), value) << flag;
    }
    const auto wrong = parse_study("name = \"t\"\ntasks = [\"saxpy\"]\n[[models]]\nname = \"s\"\nproposer = \"test-silent\"\n"
                                   "silent_rounds = 8\n",
                                   "test.toml");
    ASSERT_FALSE(wrong);
    EXPECT_NE(wrong.error().message.find("silent_rounds must be an integer from 1 to 7"), std::string::npos)
        << wrong.error().message;
}

TEST(OptionSchema, AnUnknownProposerIsRefusedWithTheRegisteredOnes) {
    const nlohmann::json none = nlohmann::json::object();
    auto made = make_proposer("oracle", {none, 0, language_named("opencl")});
    ASSERT_FALSE(made);
    EXPECT_EQ(made.error().message.rfind("unknown proposer 'oracle'; expected one of: tune, llm, cmd, replay", 0), 0u)
        << made.error().message;
    EXPECT_NE(made.error().message.find("test-silent"), std::string::npos) << made.error().message;
    // A cost cap is refused for a proposer whose spending is not counted, named by the registry.
    auto capped = make_proposer("tune", {none, 2.5, language_named("opencl")});
    ASSERT_FALSE(capped);
    EXPECT_NE(capped.error().message.find("a cost cap applies to --proposer llm"), std::string::npos)
        << capped.error().message;
}

}  // namespace
