// A run resumed across an optimisation dropout continues exactly like the uninterrupted run: kevo's
// run command on scripted evaluations (kevo_scripted) runs a replay search (window 6) and stops after
// iteration 10, when its worker "dies" (the 12th evaluation fails); the run is resumed through the
// real loop in this process, and an uninterrupted run of the same candidates runs beside it. Both drop out at iterations 7 and 13 (the dropout is a column of the
// iteration rows) and show the proposer the same history, previous attempt and incumbent.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>

#include <fmt/format.h>

#include "kevo_process.hpp"
#include "run_support.hpp"
#include "scripted_evaluator.hpp"
#include "search/loop.hpp"
#include "search/proposers/replay.hpp"
#include "store/store.hpp"

using kevo::test::slurp;

namespace {

namespace fs = std::filesystem;

constexpr int kIterations = 16, kKilledAfter = 10, kWindow = 6;

std::string temp_path(const std::string& name) { return kevo::test::temp_path("kevo_resume", name); }

// Replay files 01..16: distinct saxpy kernels that do not compile (evaluated, never better).
std::string replay_dir(const std::string& name) {
    const std::string dir = temp_path(name);
    fs::remove_all(dir);
    fs::create_directories(dir);
    const std::string seed(kevo::task_file("saxpy", "seed.cl"));
    for (int i = 1; i <= kIterations; ++i)  // code, not a comment: not a duplicate
        std::ofstream(fmt::format("{}/{:02}.cl", dir, i))
            << kevo::test::scripted(fmt::format("#define KEVO_VARIANT_{}\n{}", i, seed), "verdict=compile_error");
    return dir;
}

// What the proposer was shown at one iteration.
struct Shown {
    bool fresh_approach = false;
    std::vector<int> history;
    int previous = -1, incumbent = -1;
    bool operator==(const Shown&) const = default;
};

// Forwards to the replay proposer and writes down every context it is given.
class RecordingProposer final : public kevo::Proposer {
public:
    explicit RecordingProposer(std::unique_ptr<kevo::Proposer> inner) : inner_(std::move(inner)) {}
    std::string name() const override { return inner_->name(); }
    kevo::Proposal propose(const kevo::ProposalContext& c) override {
        Shown s{c.fresh_approach, {}, c.previous ? c.previous->iteration : -1, c.incumbent.iteration};
        for (const auto& a : c.history) s.history.push_back(a.iteration);
        shown[c.iteration] = s;
        return inner_->propose(c);
    }
    void observe(const kevo::Attempt& a) override { inner_->observe(a); }
    void skip(int count) override { inner_->skip(count); }
    std::map<int, Shown> shown;

private:
    std::unique_ptr<kevo::Proposer> inner_;
};

kevo::RunOptions options(const std::string& out) {
    kevo::RunOptions o;
    o.task = "saxpy";
    o.backend = "opencl";
    o.profile = "small";
    o.proposer = "replay";
    o.iterations = kIterations;
    o.stagnation_window = kWindow;
    o.warmup = 1;
    o.repeat = 3;
    o.timeout_s = 30;
    o.gate_rounds = 1;
    o.seed = 5;
    o.output_dir = out;
    return o;
}

std::vector<int> dropout_iterations(kevo::Store& store, const std::string& run_id) {
    std::vector<int> out;
    auto rows = store.load_iterations(run_id);
    EXPECT_TRUE(rows.has_value());
    if (rows)
        for (const auto& r : *rows)
            if (r.dropout) out.push_back(r.iteration);
    return out;
}

TEST(RunResume, ResumedAcrossADropoutBehavesLikeTheLiveRun) {
    const std::string killed_db = temp_path("killed.db"), replay = replay_dir("replay");
    fs::remove(killed_db);
    // The seed and iterations 1..10 are evaluated; the 12th evaluation (iteration 11's) fails.
    kevo::test::ProcessResult stopped;
    {
        kevo::test::ScopedEnv dies("KEVO_SCRIPTED_FAIL_AFTER", std::to_string(kKilledAfter + 1));
        stopped = kevo::test::run_scripted_kevo(
            {"run", "saxpy", "--backend", "opencl", "--profile", "small", "--proposer", "replay", "--replay", replay,
             "--iterations", std::to_string(kIterations), "--stagnation", std::to_string(kWindow), "--warmup", "1", "--repeat",
             "3", "--timeout", "30", "--gate-rounds", "1", "--seed", "5", "--db", killed_db, "--out", temp_path("killed-out")});
    }
    ASSERT_EQ(stopped.exit_code, 2) << stopped.err;
    std::string run_id;
    {
        auto store = kevo::Store::open(killed_db);
        ASSERT_TRUE(store.has_value());
        auto runs = (*store)->list_runs();
        ASSERT_TRUE(runs.has_value() && runs->size() == 1u);
        run_id = runs->front().run_id;
        EXPECT_EQ(runs->front().status, kevo::RunStatus::interrupted);
    }
    auto killed_store = kevo::Store::open(killed_db);
    ASSERT_TRUE(killed_store.has_value());
    ASSERT_EQ((*killed_store)->load_run(run_id)->iterations_done, kKilledAfter) << stopped.err;
    EXPECT_EQ(dropout_iterations(**killed_store, run_id), std::vector<int>{7}) << stopped.err;

    kevo::test::ScriptedEvaluator evaluator;
    std::vector<std::string> resumed_lines;

    // Resumed in this process: iterations 11..16.
    auto resumed_replay = kevo::make_replay_proposer(replay);
    ASSERT_TRUE(resumed_replay.has_value());
    RecordingProposer resumed_proposer(std::move(*resumed_replay));
    kevo::SearchLoop resumed_loop(evaluator, **killed_store, resumed_proposer,
                                  [&](const std::string& l) { resumed_lines.push_back(l); });
    auto resumed = resumed_loop.resume(run_id);
    ASSERT_TRUE(resumed.has_value()) << resumed.error().message;

    // The same search, never interrupted.
    fs::remove(temp_path("live.db"));
    auto live_store = kevo::Store::open(temp_path("live.db"));
    ASSERT_TRUE(live_store.has_value());
    auto live_replay = kevo::make_replay_proposer(replay);
    ASSERT_TRUE(live_replay.has_value());
    RecordingProposer live_proposer(std::move(*live_replay));
    kevo::test::ScriptedEvaluator live_evaluator;
    kevo::SearchLoop live_loop(live_evaluator, **live_store, live_proposer, nullptr);
    auto live = live_loop.start(options(temp_path("live-out")));
    ASSERT_TRUE(live.has_value()) << live.error().message;

    // The same dropouts, recorded in the rows: the next one 6 iterations after the last, not at once.
    EXPECT_EQ(dropout_iterations(**live_store, live->run_id), (std::vector<int>{7, 13}));
    EXPECT_EQ(dropout_iterations(**killed_store, run_id), (std::vector<int>{7, 13}));
    bool said_dropout_at_13 = false;
    for (const auto& l : resumed_lines) {
        EXPECT_EQ(l.find("[ 11/16] no improvement"), std::string::npos) << l;
        said_dropout_at_13 = said_dropout_at_13 || l.find("[ 13/16] no improvement for 6 iterations") != std::string::npos;
    }
    EXPECT_TRUE(said_dropout_at_13);
    // The proposer saw the same at every iteration after the kill.
    for (int it = kKilledAfter + 1; it <= kIterations; ++it) {
        ASSERT_TRUE(resumed_proposer.shown.count(it) && live_proposer.shown.count(it)) << it;
        const Shown &r = resumed_proposer.shown[it], &l = live_proposer.shown[it];
        EXPECT_EQ(r, l) << "iteration " << it;
        EXPECT_EQ(r.fresh_approach, it == 13) << it;
    }
    EXPECT_EQ(resumed_proposer.shown[11].history, (std::vector<int>{7, 8, 9, 10}));
    EXPECT_EQ(resumed_proposer.shown[13].history, std::vector<int>{}) << "the dropout withholds the history";
    EXPECT_EQ(resumed_proposer.shown[14].history, std::vector<int>{13});
    EXPECT_EQ(resumed_proposer.shown[11].previous, 10);
    EXPECT_EQ(resumed_proposer.shown[11].incumbent, 0);
    EXPECT_EQ(resumed->outcome, kevo::RunOutcome::no_gain);
    EXPECT_EQ(resumed->iterations, kIterations);
}

// The hint kevo prints is a command a shell runs as it stands: --db and --out only where they are not
// the defaults, and a word with a space or a quote quoted.
TEST(RunResume, TheResumeHintIsACompleteCommand) {
    EXPECT_EQ(kevo::resume_command("r1", "kevo.db", "kevo-runs"), "kevo run --resume r1");
    EXPECT_EQ(kevo::resume_command("r1", "/tmp/s.db", "kevo-runs"), "kevo run --resume r1 --db /tmp/s.db");
    EXPECT_EQ(kevo::resume_command("r1", "kevo.db", "out dir"), "kevo run --resume r1 --out 'out dir'");
    EXPECT_EQ(kevo::resume_command("r1", "it's.db", ""), "kevo run --resume r1 --db 'it'\\''s.db'");
}

}  // namespace
