// Tests of the SQLite store against real database files in a temporary folder: round trips of
// every record field, candidate deduplication, iteration replacement, the "interrupted" rule,
// reopening and sharing a file, clear errors for bad paths, and a writer killed with SIGKILL.
#include <gtest/gtest.h>

#include <signal.h>
#include <sqlite3.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <regex>
#include <string>
#include <vector>

#include "core/clock.hpp"
#include "store/migrations.hpp"
#include "store/store.hpp"

namespace kevo {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// A fresh folder under the system temp directory, removed when the test ends.
class TempDir {
public:
    TempDir() {
        path_ = fs::temp_directory_path() /
                ("kevo-store-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
        fs::remove_all(path_);
        fs::create_directories(path_);
    }
    ~TempDir() {
        std::error_code ec;
        fs::remove_all(path_, ec);
    }
    std::string file(const std::string& name) const { return (path_ / name).string(); }
    const fs::path& path() const { return path_; }

private:
    fs::path path_;
    static inline int counter_ = 0;
};

std::unique_ptr<Store> open_store(const std::string& path) {
    auto store = Store::open(path);
    EXPECT_TRUE(store.has_value()) << (store ? "" : store.error().message);
    return store ? std::move(*store) : nullptr;
}

// Reads one value with a separate raw SQLite connection, to see what is really in the file.
std::string raw_query(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    std::string value = "<error>";
    if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK) {
        sqlite3_stmt* stmt = nullptr;
        if (sqlite3_prepare_v2(db, sql.c_str(), -1, &stmt, nullptr) == SQLITE_OK && sqlite3_step(stmt) == SQLITE_ROW)
            value = reinterpret_cast<const char*>(sqlite3_column_text(stmt, 0));
        sqlite3_finalize(stmt);
    }
    sqlite3_close_v2(db);
    return value;
}

bool raw_exec(const std::string& path, const std::string& sql) {
    sqlite3* db = nullptr;
    bool ok = sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE, nullptr) == SQLITE_OK &&
              sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) == SQLITE_OK;
    sqlite3_close_v2(db);
    return ok;
}

// A pid that no process has: a child that has exited and been reaped.
int dead_pid() {
    const pid_t child = ::fork();
    if (child == 0) ::_exit(0);
    int status = 0;
    ::waitpid(child, &status, 0);
    return static_cast<int>(child);
}

RunRecord make_run(const std::string& id, const std::string& created_at = {}) {
    RunRecord run;
    run.run_id = id;
    run.task = "heat2d";
    run.backend = "opencl";
    run.device = "cpu-pthread (PoCL)";
    run.profile = "small";
    run.proposer = "tune";
    run.strategy = "one-plus-one";
    run.settings = {{"iterations", 20}, {"seed", 7}};
    run.created_at = created_at;
    run.pid = static_cast<int>(::getpid());
    return run;
}

CandidateRecord make_candidate(const std::string& run_id, const std::string& hash) {
    CandidateRecord c;
    c.run_id = run_id;
    c.hash = hash;
    c.proposer = "tune";
    c.source = "__kernel void heat_step() { /* " + hash + " */ }\n";
    c.defines = {{"BX", "32"}, {"BY", "8"}};
    return c;
}

IterationRecord make_iteration(const std::string& run_id, int n) {
    IterationRecord it;
    it.run_id = run_id;
    it.iteration = n;
    it.status = kevo::IterationStatus::evaluated;
    it.verdict = "ok";
    it.score = 0.25 + n;
    it.diagnostics = "all sizes correct";
    it.prompt = "prompt of iteration " + std::to_string(n);
    it.answer = "answer of iteration " + std::to_string(n);
    it.result = {{"verdict", "ok"}, {"iteration", n}};
    return it;
}

// ---- runs ----

TEST(StoreRuns, CreateLoadUpdateEveryField) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);

    RunRecord run = make_run("r20261130T041238Z-ab12");
    run.settings = {{"iterations", 20},
                    {"model", "gpt-x"},
                    {"max_cost", 1.5},
                    {"nested", {{"list", {1, 2, 3}}, {"text", "quote \" and ünïcode"}}}};
    ASSERT_TRUE(store->create_run(run));

    // Optionals absent; created_at and updated_at filled in.
    auto loaded = store->load_run(run.run_id);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->run_id, run.run_id);
    EXPECT_EQ(loaded->task, "heat2d");
    EXPECT_EQ(loaded->backend, "opencl");
    EXPECT_EQ(loaded->device, "cpu-pthread (PoCL)");
    EXPECT_EQ(loaded->profile, "small");
    EXPECT_EQ(loaded->proposer, "tune");
    EXPECT_EQ(loaded->strategy, "one-plus-one");
    EXPECT_EQ(loaded->settings, run.settings);
    EXPECT_EQ(loaded->status, RunStatus::running);
    EXPECT_EQ(loaded->iterations_done, 0);
    EXPECT_FALSE(loaded->seed_score.has_value());
    EXPECT_FALSE(loaded->best_score.has_value());
    EXPECT_FALSE(loaded->best_candidate_id.has_value());
    EXPECT_TRUE(loaded->summary.is_null());
    EXPECT_EQ(loaded->pid, run.pid);
    const std::regex iso(R"(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ)");
    EXPECT_TRUE(std::regex_match(loaded->created_at, iso)) << loaded->created_at;
    EXPECT_TRUE(std::regex_match(loaded->updated_at, iso)) << loaded->updated_at;
    EXPECT_EQ(raw_query(dir.file("kevo.db"), "SELECT typeof(summary) FROM runs"), "null");

    // Every optional present.
    auto best = store->add_candidate(make_candidate(run.run_id, "00000000000000aa"));
    ASSERT_TRUE(best) << best.error().message;
    RunRecord updated = *loaded;
    updated.created_at = "1999-01-01T00:00:00Z";  // must not be rewritten by update_run
    updated.status = RunStatus::finished;
    updated.iterations_done = 12;
    updated.seed_score = 0.125;
    updated.best_score = 0.875;
    updated.best_candidate_id = *best;
    updated.summary = {{"heldout", {{"fraction", 0.5}, {"speedup", 2.25}}}, {"best_path", "/tmp/best.cl"}};
    ASSERT_TRUE(store->update_run(updated));

    auto reloaded = store->load_run(run.run_id);
    ASSERT_TRUE(reloaded) << reloaded.error().message;
    EXPECT_EQ(reloaded->status, RunStatus::finished);
    EXPECT_EQ(reloaded->iterations_done, 12);
    ASSERT_TRUE(reloaded->seed_score.has_value());
    EXPECT_DOUBLE_EQ(*reloaded->seed_score, 0.125);
    ASSERT_TRUE(reloaded->best_score.has_value());
    EXPECT_DOUBLE_EQ(*reloaded->best_score, 0.875);
    ASSERT_TRUE(reloaded->best_candidate_id.has_value());
    EXPECT_EQ(*reloaded->best_candidate_id, *best);
    EXPECT_EQ(reloaded->summary, updated.summary);
    EXPECT_EQ(reloaded->settings, run.settings);
    EXPECT_EQ(reloaded->created_at, loaded->created_at);
    EXPECT_TRUE(std::regex_match(reloaded->updated_at, iso));

    // And back to absent: optionals are cleared, not kept.
    updated.seed_score.reset();
    updated.best_candidate_id.reset();
    updated.summary = json();
    ASSERT_TRUE(store->update_run(updated));
    auto cleared = store->load_run(run.run_id);
    ASSERT_TRUE(cleared);
    EXPECT_FALSE(cleared->seed_score.has_value());
    EXPECT_FALSE(cleared->best_candidate_id.has_value());
    EXPECT_TRUE(cleared->summary.is_null());
}

TEST(StoreRuns, CreatedAtGivenByCallerIsKept) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1", "2026-11-30T04:12:38Z")));
    auto run = store->load_run("r1");
    ASSERT_TRUE(run);
    EXPECT_EQ(run->created_at, "2026-11-30T04:12:38Z");
}

TEST(StoreRuns, UnknownRunIsAnErrorNamingIdAndPath) {
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    auto store = open_store(path);
    ASSERT_TRUE(store);
    auto missing = store->load_run("r-nope");
    ASSERT_FALSE(missing);
    EXPECT_EQ(missing.error().message, "no run 'r-nope' in " + path);

    auto update = store->update_run(make_run("r-nope"));
    ASSERT_FALSE(update);
    EXPECT_EQ(update.error().message, "no run 'r-nope' in " + path);
}

TEST(StoreRuns, DuplicateRunIdIsAnError) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    auto again = store->create_run(make_run("r1"));
    ASSERT_FALSE(again);
    EXPECT_NE(again.error().message.find("run 'r1' exists already"), std::string::npos) << again.error().message;
    EXPECT_NE(again.error().message.find("--resume r1"), std::string::npos) << again.error().message;
}

TEST(StoreRuns, ListNewestFirstWithInterruptedRule) {
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    auto store = open_store(path);
    ASSERT_TRUE(store);
    const int gone = dead_pid();

    RunRecord old_finished = make_run("r-old", "2026-01-01T00:00:00Z");
    old_finished.status = RunStatus::finished;
    old_finished.pid = gone;  // a finished run stays finished whatever its pid
    RunRecord alive = make_run("r-alive", "2026-03-01T00:00:00Z");  // our own pid: running
    RunRecord killed = make_run("r-killed", "2026-02-01T00:00:00Z");
    killed.pid = gone;
    RunRecord no_pid = make_run("r-nopid", "2026-02-01T00:00:00Z");  // same second, inserted later
    no_pid.pid = 0;
    for (const RunRecord& r : {old_finished, alive, killed, no_pid}) ASSERT_TRUE(store->create_run(r));

    auto runs = store->list_runs();
    ASSERT_TRUE(runs) << runs.error().message;
    ASSERT_EQ(runs->size(), 4u);
    EXPECT_EQ((*runs)[0].run_id, "r-alive");
    EXPECT_EQ((*runs)[1].run_id, "r-nopid");  // ties broken by insertion order, newest first
    EXPECT_EQ((*runs)[2].run_id, "r-killed");
    EXPECT_EQ((*runs)[3].run_id, "r-old");
    EXPECT_EQ((*runs)[0].status, RunStatus::running);
    EXPECT_EQ((*runs)[1].status, RunStatus::interrupted);
    EXPECT_EQ((*runs)[2].status, RunStatus::interrupted);
    EXPECT_EQ((*runs)[3].status, RunStatus::finished);

    // load_run applies the same rule; the file itself is not rewritten.
    auto one = store->load_run("r-killed");
    ASSERT_TRUE(one);
    EXPECT_EQ(one->status, RunStatus::interrupted);
    EXPECT_EQ(raw_query(path, "SELECT status FROM runs WHERE run_id = 'r-killed'"), "running");
}

TEST(StoreRuns, ListOfAnEmptyStoreIsEmpty) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    auto runs = store->list_runs();
    ASSERT_TRUE(runs);
    EXPECT_TRUE(runs->empty());
}

TEST(StoreRuns, UtcNowIsIso8601) {
    const std::string now = utc_now_iso8601();
    EXPECT_TRUE(std::regex_match(now, std::regex(R"(20\d\d-[01]\d-[0-3]\dT[0-2]\d:[0-5]\d:[0-6]\dZ)"))) << now;
}

// ---- candidates ----

TEST(StoreCandidates, DeduplicatedByHashWithinARun) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    ASSERT_TRUE(store->create_run(make_run("r2")));

    CandidateRecord seed = make_candidate("r1", "1111111111111111");
    seed.defines.clear();
    auto seed_id = store->add_candidate(seed);
    ASSERT_TRUE(seed_id) << seed_id.error().message;

    CandidateRecord child = make_candidate("r1", "2222222222222222");
    child.parent_id = *seed_id;
    child.source = std::string("line one\nline \"two\"\t\\ ünï\n") + std::string(1, '\0') + "after NUL";
    auto child_id = store->add_candidate(child);
    ASSERT_TRUE(child_id) << child_id.error().message;
    EXPECT_NE(*child_id, *seed_id);

    // Same hash again, even with other fields: the existing id, the row untouched.
    CandidateRecord again = child;
    again.source = "something else";
    again.proposer = "llm";
    auto again_id = store->add_candidate(again);
    ASSERT_TRUE(again_id);
    EXPECT_EQ(*again_id, *child_id);

    // The same hash in another run is another candidate.
    auto other_run = store->add_candidate(make_candidate("r2", "2222222222222222"));
    ASSERT_TRUE(other_run);
    EXPECT_NE(*other_run, *child_id);

    auto loaded = store->load_candidate(*child_id);
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->id, *child_id);
    EXPECT_EQ(loaded->run_id, "r1");
    EXPECT_EQ(loaded->hash, "2222222222222222");
    ASSERT_TRUE(loaded->parent_id.has_value());
    EXPECT_EQ(*loaded->parent_id, *seed_id);
    EXPECT_EQ(loaded->proposer, "tune");
    EXPECT_EQ(loaded->source, child.source);
    EXPECT_EQ(loaded->defines, child.defines);

    auto loaded_seed = store->load_candidate(*seed_id);
    ASSERT_TRUE(loaded_seed);
    EXPECT_FALSE(loaded_seed->parent_id.has_value());
    EXPECT_TRUE(loaded_seed->defines.empty());

    EXPECT_EQ(raw_query(dir.file("kevo.db"), "SELECT count(*) FROM candidates"), "3");
    auto missing = store->load_candidate(999999);
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("999999"), std::string::npos);
}

TEST(StoreCandidates, UnknownRunIsRefusedByForeignKey) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    auto id = store->add_candidate(make_candidate("r-none", "3333333333333333"));
    ASSERT_FALSE(id);
    EXPECT_NE(id.error().message.find("FOREIGN KEY"), std::string::npos) << id.error().message;
    EXPECT_NE(id.error().message.find(dir.file("kevo.db")), std::string::npos) << id.error().message;
}

// ---- iterations ----

TEST(StoreIterations, ReplacedOnSameNumberAndLoadedInOrder) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    ASSERT_TRUE(store->create_run(make_run("r2")));
    auto cand = store->add_candidate(make_candidate("r1", "aaaaaaaaaaaaaaaa"));
    ASSERT_TRUE(cand);

    // Written out of order; iteration 1 has every optional present, 2 has none.
    IterationRecord it2 = make_iteration("r1", 2);
    it2.status = kevo::IterationStatus::no_code;
    it2.verdict = "";
    it2.score.reset();
    it2.result = json();
    it2.note = "HTTP 429, retried 3x";
    ASSERT_TRUE(store->add_iteration(it2));

    IterationRecord it0 = make_iteration("r1", 0);
    it0.candidate_id = *cand;
    it0.accepted = true;
    ASSERT_TRUE(store->add_iteration(it0));

    IterationRecord it1 = make_iteration("r1", 1);
    it1.candidate_id = *cand;
    it1.status = kevo::IterationStatus::proposer_error;
    ASSERT_TRUE(store->add_iteration(it1));

    // An iteration of another run does not leak in.
    ASSERT_TRUE(store->add_iteration(make_iteration("r2", 1)));

    // Iteration 1 re-run after an interruption: the row is replaced.
    IterationRecord rerun = make_iteration("r1", 1);
    rerun.candidate_id = *cand;
    rerun.verdict = "incorrect";
    rerun.score = 0.0;
    rerun.diagnostics = "size 64x64x10: max_abs 3.5 at index 17 > 1e-4";
    rerun.accepted = false;
    rerun.prompt = "```c\n__kernel void f() {\n  x = \"q\"; // ünïcode ✓\n}\n```\n" + std::string(100000, 'p');
    rerun.answer = std::string("with NUL ") + std::string(1, '\0') + " inside";
    rerun.prompt_tokens = 12345;
    rerun.completion_tokens = 678;
    rerun.cost_usd = 0.0425;
    rerun.seconds = 3.75;
    rerun.result = {{"verdict", "incorrect"},
                    {"score", nullptr},
                    {"sizes", json::array({{{"label", "64x64x10"}, {"correct", false}, {"error", 3.5}}})}};
    rerun.note = "BX=32 BY=8";
    rerun.dropout = true;
    ASSERT_TRUE(store->add_iteration(rerun));

    auto its = store->load_iterations("r1");
    ASSERT_TRUE(its) << its.error().message;
    ASSERT_EQ(its->size(), 3u);
    EXPECT_EQ((*its)[0].iteration, 0);
    EXPECT_EQ((*its)[1].iteration, 1);
    EXPECT_EQ((*its)[2].iteration, 2);

    const IterationRecord& a = (*its)[0];
    EXPECT_TRUE(a.accepted);
    ASSERT_TRUE(a.candidate_id.has_value());
    EXPECT_EQ(*a.candidate_id, *cand);

    const IterationRecord& b = (*its)[1];
    EXPECT_EQ(b.run_id, "r1");
    EXPECT_EQ(b.status, kevo::IterationStatus::evaluated);
    EXPECT_EQ(b.verdict, "incorrect");
    ASSERT_TRUE(b.score.has_value());
    EXPECT_EQ(*b.score, 0.0);
    EXPECT_EQ(b.diagnostics, rerun.diagnostics);
    EXPECT_FALSE(b.accepted);
    EXPECT_EQ(b.prompt, rerun.prompt);
    EXPECT_EQ(b.answer, rerun.answer);
    EXPECT_EQ(b.answer.size(), rerun.answer.size());
    EXPECT_EQ(b.prompt_tokens, 12345);
    EXPECT_EQ(b.completion_tokens, 678);
    EXPECT_DOUBLE_EQ(b.cost_usd, 0.0425);
    EXPECT_DOUBLE_EQ(b.seconds, 3.75);
    EXPECT_EQ(b.result, rerun.result);
    EXPECT_EQ(b.note, "BX=32 BY=8");
    EXPECT_TRUE(b.dropout);
    EXPECT_FALSE(a.dropout);

    const IterationRecord& c = (*its)[2];
    EXPECT_EQ(c.status, kevo::IterationStatus::no_code);
    EXPECT_FALSE(c.candidate_id.has_value());
    EXPECT_FALSE(c.score.has_value());
    EXPECT_TRUE(c.result.is_null());
    EXPECT_EQ(c.note, "HTTP 429, retried 3x");

    auto other = store->load_iterations("r2");
    ASSERT_TRUE(other);
    EXPECT_EQ(other->size(), 1u);
    auto none = store->load_iterations("r-none");
    ASSERT_TRUE(none);
    EXPECT_TRUE(none->empty());
}

// Every status round-trips by its spelling; a row whose status no version of kevo wrote is an
// error naming the run, the iteration and the text, not an iteration of some default status.
TEST(StoreIterations, StatusesRoundTripAndAnUnknownOneIsNamed) {
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    auto store = open_store(path);
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    const std::vector<kevo::IterationStatus> all = {
        kevo::IterationStatus::evaluated, kevo::IterationStatus::from,           kevo::IterationStatus::no_code,
        kevo::IterationStatus::edit_failed, kevo::IterationStatus::duplicate,    kevo::IterationStatus::proposer_error,
        kevo::IterationStatus::permanent_error};
    for (size_t i = 0; i < all.size(); ++i) {
        IterationRecord it = make_iteration("r1", static_cast<int>(i));
        it.status = all[i];
        ASSERT_TRUE(store->add_iteration(it));
    }
    auto loaded = store->load_iterations("r1");
    ASSERT_TRUE(loaded) << loaded.error().message;
    ASSERT_EQ(loaded->size(), all.size());
    for (size_t i = 0; i < all.size(); ++i) {
        EXPECT_EQ((*loaded)[i].status, all[i]) << i;
        EXPECT_EQ(kevo::parse_iteration_status(kevo::iteration_status_name(all[i])), all[i]);
    }
    EXPECT_EQ(raw_query(path, "SELECT status FROM iterations WHERE iteration = 2"), "no_code");
    ASSERT_TRUE(raw_exec(path, "UPDATE iterations SET status = 'pondered' WHERE iteration = 3"));
    auto broken = store->load_iterations("r1");
    ASSERT_FALSE(broken);
    EXPECT_NE(broken.error().message.find("iteration 3 of run 'r1' has an unknown status 'pondered'"), std::string::npos)
        << broken.error().message;
}

TEST(StoreIterations, NonFiniteNumbersSurvive) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    IterationRecord it = make_iteration("r1", 0);
    it.seconds = std::numeric_limits<double>::quiet_NaN();  // SQLite keeps NaN as NULL
    it.cost_usd = std::numeric_limits<double>::infinity();
    it.score = std::numeric_limits<double>::quiet_NaN();    // reads back as "no score"
    ASSERT_TRUE(store->add_iteration(it));
    auto its = store->load_iterations("r1");
    ASSERT_TRUE(its) << its.error().message;
    ASSERT_EQ(its->size(), 1u);
    EXPECT_TRUE(std::isnan((*its)[0].seconds));
    EXPECT_TRUE(std::isinf((*its)[0].cost_usd));
    EXPECT_FALSE((*its)[0].score.has_value());
}

// ---- held-out ----

TEST(StoreHeldout, RoundTripSeedBeforeBestAndReplace) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    auto seed = store->add_candidate(make_candidate("r1", "5555555555555555"));
    auto best = store->add_candidate(make_candidate("r1", "6666666666666666"));
    ASSERT_TRUE(seed && best);

    HeldoutRecord b{"r1", "best", *best, "incorrect", std::nullopt, 0.0, json()};
    ASSERT_TRUE(store->add_heldout(b));
    HeldoutRecord s{"r1", "seed", *seed, "ok", 0.25, 0.004, {{"verdict", "ok"}, {"fraction", 0.25}}};
    ASSERT_TRUE(store->add_heldout(s));

    auto rows = store->load_heldout("r1");
    ASSERT_TRUE(rows) << rows.error().message;
    ASSERT_EQ(rows->size(), 2u);
    EXPECT_EQ((*rows)[0].role, "seed");
    EXPECT_EQ((*rows)[0].candidate_id, *seed);
    EXPECT_EQ((*rows)[0].verdict, "ok");
    ASSERT_TRUE((*rows)[0].fraction.has_value());
    EXPECT_DOUBLE_EQ(*(*rows)[0].fraction, 0.25);
    EXPECT_DOUBLE_EQ((*rows)[0].seconds, 0.004);
    EXPECT_EQ((*rows)[0].result, s.result);
    EXPECT_EQ((*rows)[1].role, "best");
    EXPECT_FALSE((*rows)[1].fraction.has_value());
    EXPECT_TRUE((*rows)[1].result.is_null());

    // The gate re-run (after --resume) replaces the row for that role.
    b.verdict = "ok";
    b.fraction = 0.5;
    b.seconds = 0.002;
    ASSERT_TRUE(store->add_heldout(b));
    rows = store->load_heldout("r1");
    ASSERT_TRUE(rows);
    ASSERT_EQ(rows->size(), 2u);
    EXPECT_EQ((*rows)[1].verdict, "ok");
    ASSERT_TRUE((*rows)[1].fraction.has_value());
    EXPECT_DOUBLE_EQ(*(*rows)[1].fraction, 0.5);
}

TEST(StoreHeldout, GateFieldsRoundTrip) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    auto bad = store->add_candidate(make_candidate("r1", "7777777777777777"));
    ASSERT_TRUE(bad);
    HeldoutRecord h{"r1", "rejected-7", *bad, "incorrect", 0.0, 0.0, {{"verdict", "incorrect"}}};
    h.iteration = 7;
    h.passed = false;
    h.reason = "heldout-incorrect";
    h.speedup = 1.8;
    h.speedup_spread = 0.04;
    h.rounds = json::array({{{"verdict", "incorrect"}, {"seed_verdict", "ok"}, {"seed_seconds", {{"384", 0.01}}}}});
    ASSERT_TRUE(store->add_heldout(h));
    HeldoutRecord best{"r1", "best", *bad, "ok", 0.3, 0.001, json()};
    ASSERT_TRUE(store->add_heldout(best));
    auto rows = store->load_heldout("r1");
    ASSERT_TRUE(rows) << rows.error().message;
    ASSERT_EQ(rows->size(), 2u);
    EXPECT_EQ((*rows)[0].role, "best");  // "best" first, other roles by name
    EXPECT_TRUE((*rows)[0].passed);
    EXPECT_FALSE((*rows)[0].iteration.has_value());
    EXPECT_FALSE((*rows)[0].speedup.has_value());
    const HeldoutRecord& r = (*rows)[1];
    EXPECT_EQ(r.role, "rejected-7");
    ASSERT_TRUE(r.iteration.has_value());
    EXPECT_EQ(*r.iteration, 7);
    EXPECT_FALSE(r.passed);
    EXPECT_EQ(r.reason, "heldout-incorrect");
    EXPECT_EQ(r.speedup, 1.8);
    EXPECT_EQ(r.speedup_spread, 0.04);
    EXPECT_FALSE(r.heldout_speedup.has_value());
    EXPECT_EQ(r.rounds, h.rounds);
}

// ---- the file ----

TEST(StoreFile, VersionOneDatabaseIsMigratedAndItsRowsStillRead) {
    // A database as schema 1 left it: the columns of schemas 2 and 3 dropped, version 1, rows written then.
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    {
        auto store = open_store(path);
        ASSERT_TRUE(store);
        ASSERT_TRUE(store->create_run(make_run("r1")));
        auto cand = store->add_candidate(make_candidate("r1", "8888888888888888"));
        ASSERT_TRUE(cand);
    }
    ASSERT_TRUE(raw_exec(path,
                         "DROP TABLE study_cells; DROP TABLE studies; ALTER TABLE iterations DROP COLUMN strategy; "
                         "ALTER TABLE iterations DROP COLUMN failure; ALTER TABLE iterations DROP COLUMN http_status; "
                         "ALTER TABLE iterations DROP COLUMN dropout; ALTER TABLE iterations DROP COLUMN knowledge; "
                         "ALTER TABLE iterations DROP COLUMN gain; ALTER TABLE iterations DROP COLUMN gain_spread; "
                         "ALTER TABLE heldout DROP COLUMN iteration; "
                         "ALTER TABLE heldout DROP COLUMN passed; ALTER TABLE heldout DROP COLUMN reason; "
                         "ALTER TABLE heldout DROP COLUMN speedup; ALTER TABLE heldout DROP COLUMN speedup_spread; "
                         "ALTER TABLE heldout DROP COLUMN heldout_speedup; "
                         "ALTER TABLE heldout DROP COLUMN heldout_speedup_spread; ALTER TABLE heldout DROP COLUMN rounds; "
                         "PRAGMA user_version = 1;"
                         "INSERT INTO iterations (run_id, iteration, candidate_id, status, verdict, score, diagnostics, "
                         "accepted, prompt, answer, prompt_tokens, completion_tokens, cost_usd, seconds, result, note) "
                         "VALUES ('r1', 0, 1, 'evaluated', 'ok', 0.5, '', 1, '', '', 0, 0, 0, 1.5, NULL, 'seed');"
                         "INSERT INTO heldout (run_id, role, candidate_id, verdict, fraction, seconds, result) "
                         "VALUES ('r1', 'best', 1, 'ok', 0.4, 0.002, NULL);"));
    ASSERT_EQ(raw_query(path, "PRAGMA user_version"), "1");
    auto store = open_store(path);
    ASSERT_TRUE(store);
    EXPECT_EQ(raw_query(path, "PRAGMA user_version"), std::to_string(latest_schema_version()));
    auto its = store->load_iterations("r1");
    ASSERT_TRUE(its) << its.error().message;
    ASSERT_EQ(its->size(), 1u);
    EXPECT_FALSE((*its)[0].dropout);
    EXPECT_TRUE((*its)[0].strategy.is_null());
    EXPECT_EQ((*its)[0].failure, "");
    EXPECT_EQ((*its)[0].http_status, 0);
    EXPECT_EQ((*its)[0].note, "seed");
    auto rows = store->load_heldout("r1");
    ASSERT_TRUE(rows) << rows.error().message;
    ASSERT_EQ(rows->size(), 1u);
    EXPECT_TRUE((*rows)[0].passed);
    EXPECT_TRUE((*rows)[0].reason.empty());
    EXPECT_FALSE((*rows)[0].iteration.has_value());
    EXPECT_EQ((*rows)[0].fraction, 0.4);
}

// ---- studies ----

StudyRecord make_study(const std::string& id, const std::string& created_at) {
    StudyRecord study;
    study.study_id = id;
    study.name = "matched";
    study.file_path = "/studies/matched.toml";
    study.file_text = "tasks = [\"saxpy\"]\n";
    study.settings = {{"tasks", {"saxpy"}}, {"seeds", {1, 2}}};
    study.created_at = created_at;
    return study;
}

TEST(StoreStudies, StudyAndCellsRoundTripAndDeletingARunFreesItsCell) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_study(make_study("s1", "2026-01-01T00:00:00Z")));
    ASSERT_TRUE(store->create_study(make_study("s2", "2026-02-01T00:00:00Z")));
    EXPECT_FALSE(store->create_study(make_study("s1", "2026-03-01T00:00:00Z")));

    auto loaded = store->load_study("s1");
    ASSERT_TRUE(loaded) << loaded.error().message;
    EXPECT_EQ(loaded->name, "matched");
    EXPECT_EQ(loaded->file_path, "/studies/matched.toml");
    EXPECT_EQ(loaded->file_text, "tasks = [\"saxpy\"]\n");
    EXPECT_EQ(loaded->settings["seeds"], json({1, 2}));
    EXPECT_EQ(loaded->created_at, "2026-01-01T00:00:00Z");
    auto listed = store->list_studies();
    ASSERT_TRUE(listed);
    ASSERT_EQ(listed->size(), 2u);
    EXPECT_EQ((*listed)[0].study_id, "s2");

    ASSERT_TRUE(store->create_run(make_run("r1")));
    StudyCellRecord cell{"s1", "saxpy/tune/islands/2", "saxpy", "tune", "islands", 2, std::nullopt};
    ASSERT_TRUE(store->set_study_cell(cell));
    StudyCellRecord first{"s1", "saxpy/tune/islands/1", "saxpy", "tune", "islands", 1, std::string("r1")};
    ASSERT_TRUE(store->set_study_cell(first));
    auto cells = store->load_study_cells("s1");
    ASSERT_TRUE(cells);
    ASSERT_EQ(cells->size(), 2u);
    EXPECT_EQ((*cells)[0].cell, "saxpy/tune/islands/1");
    EXPECT_EQ((*cells)[0].run_id, std::optional<std::string>("r1"));
    EXPECT_EQ((*cells)[1].seed, 2);
    EXPECT_FALSE((*cells)[1].run_id.has_value());

    ASSERT_TRUE(store->delete_run("r1"));
    cells = store->load_study_cells("s1");
    ASSERT_TRUE(cells);
    EXPECT_FALSE((*cells)[0].run_id.has_value());
}

TEST(StoreStudies, UnknownStudyIsAnErrorNamingIt) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    auto missing = store->load_study("s-none");
    ASSERT_FALSE(missing);
    EXPECT_NE(missing.error().message.find("s-none"), std::string::npos);
    EXPECT_FALSE(store->set_study_cell({"s-none", "c", "saxpy", "tune", "islands", 1, std::nullopt}));
}

TEST(StoreIterations, StrategyRecordRoundTrips) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    IterationRecord it = make_iteration("r1", 3);
    it.strategy = {{"island", 2}, {"parent_iteration", 1}, {"migrated", false}};
    ASSERT_TRUE(store->add_iteration(it));
    auto its = store->load_iterations("r1");
    ASSERT_TRUE(its);
    ASSERT_EQ(its->size(), 1u);
    EXPECT_EQ((*its)[0].strategy, it.strategy);
}

// Since schema 4 a failed proposal keeps its class and HTTP status (what --resume counts streaks by).
TEST(StoreIterations, FailureClassAndHttpStatusRoundTrip) {
    TempDir dir;
    auto store = open_store(dir.file("kevo.db"));
    ASSERT_TRUE(store);
    ASSERT_TRUE(store->create_run(make_run("r1")));
    IterationRecord failed = make_iteration("r1", 2);
    failed.status = kevo::IterationStatus::permanent_error;
    failed.failure = "auth";
    failed.http_status = 401;
    ASSERT_TRUE(store->add_iteration(failed));
    ASSERT_TRUE(store->add_iteration(make_iteration("r1", 3)));
    auto its = store->load_iterations("r1");
    ASSERT_TRUE(its);
    ASSERT_EQ(its->size(), 2u);
    EXPECT_EQ((*its)[0].failure, "auth");
    EXPECT_EQ((*its)[0].http_status, 401);
    EXPECT_EQ((*its)[1].failure, "");
    EXPECT_EQ((*its)[1].http_status, 0);
}

TEST(StoreFile, ReopeningSeesEverythingInWalMode) {
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    {
        auto store = open_store(path);
        ASSERT_TRUE(store);
        EXPECT_EQ(store->path(), path);
        ASSERT_TRUE(store->create_run(make_run("r1")));
        auto cand = store->add_candidate(make_candidate("r1", "7777777777777777"));
        ASSERT_TRUE(cand);
        IterationRecord it = make_iteration("r1", 0);
        it.candidate_id = *cand;
        ASSERT_TRUE(store->add_iteration(it));
        ASSERT_TRUE(store->add_heldout({"r1", "seed", *cand, "ok", 1.0, 0.5, json::object()}));
        EXPECT_EQ(raw_query(path, "PRAGMA journal_mode"), "wal");
        EXPECT_EQ(raw_query(path, "PRAGMA user_version"), std::to_string(latest_schema_version()));
    }
    auto store = open_store(path);
    ASSERT_TRUE(store);
    auto run = store->load_run("r1");
    ASSERT_TRUE(run);
    EXPECT_EQ(run->settings, make_run("r1").settings);
    auto its = store->load_iterations("r1");
    ASSERT_TRUE(its);
    ASSERT_EQ(its->size(), 1u);
    EXPECT_EQ((*its)[0].prompt, "prompt of iteration 0");
    auto held = store->load_heldout("r1");
    ASSERT_TRUE(held);
    ASSERT_EQ(held->size(), 1u);
    EXPECT_EQ((*held)[0].result, json::object());
    auto cand = store->load_candidate(*(*its)[0].candidate_id);
    ASSERT_TRUE(cand);
    EXPECT_EQ(cand->hash, "7777777777777777");
}

TEST(StoreFile, TwoHandlesSeeEachOthersCommittedWrites) {
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    auto writer = open_store(path);
    auto reader = open_store(path);
    ASSERT_TRUE(writer && reader);

    ASSERT_TRUE(writer->create_run(make_run("r1")));
    auto seen = reader->load_run("r1");
    ASSERT_TRUE(seen) << seen.error().message;

    ASSERT_TRUE(writer->add_iteration(make_iteration("r1", 0)));
    auto its = reader->load_iterations("r1");
    ASSERT_TRUE(its);
    EXPECT_EQ(its->size(), 1u);

    // The other way round, and a candidate deduplicated across handles.
    auto id_reader = reader->add_candidate(make_candidate("r1", "8888888888888888"));
    auto id_writer = writer->add_candidate(make_candidate("r1", "8888888888888888"));
    ASSERT_TRUE(id_reader && id_writer);
    EXPECT_EQ(*id_reader, *id_writer);
    RunRecord run = *seen;
    run.iterations_done = 1;
    ASSERT_TRUE(reader->update_run(run));
    auto back = writer->load_run("r1");
    ASSERT_TRUE(back);
    EXPECT_EQ(back->iterations_done, 1);
}

TEST(StoreFile, DirectoryIsAClearError) {
    TempDir dir;
    auto store = Store::open(dir.path().string());
    ASSERT_FALSE(store);
    EXPECT_NE(store.error().message.find(dir.path().string()), std::string::npos) << store.error().message;
    EXPECT_NE(store.error().message.find("directory"), std::string::npos) << store.error().message;
}

TEST(StoreFile, TextFileIsAClearError) {
    TempDir dir;
    const std::string path = dir.file("notes.txt");
    std::ofstream(path) << "these are notes, not a database\nsecond line of text to fill a page\n";
    auto store = Store::open(path);
    ASSERT_FALSE(store);
    EXPECT_NE(store.error().message.find(path), std::string::npos) << store.error().message;
    EXPECT_NE(store.error().message.find("not a database"), std::string::npos) << store.error().message;
    // Opening it must not have damaged the file.
    std::ifstream in(path);
    std::string first;
    std::getline(in, first);
    EXPECT_EQ(first, "these are notes, not a database");
}

TEST(StoreFile, MissingFolderIsAClearError) {
    TempDir dir;
    const std::string path = dir.file("no/such/folder/kevo.db");
    auto store = Store::open(path);
    ASSERT_FALSE(store);
    EXPECT_NE(store.error().message.find(path), std::string::npos) << store.error().message;
    EXPECT_NE(store.error().message.find("unable to open"), std::string::npos) << store.error().message;
}

TEST(StoreFile, ReadOnlyLocationIsAClearError) {
    // /proc refuses new files even to root, unlike a chmod'ed folder.
    if (!fs::is_directory("/proc/self")) GTEST_SKIP() << "no /proc on this system";
    auto store = Store::open("/proc/kevo-store-test.db");
    ASSERT_FALSE(store);
    EXPECT_NE(store.error().message.find("/proc/kevo-store-test.db"), std::string::npos) << store.error().message;
}

TEST(StoreFile, NewerSchemaIsRefused) {
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    { ASSERT_TRUE(open_store(path)); }
    ASSERT_TRUE(raw_exec(path, "PRAGMA user_version = 99"));
    EXPECT_EQ(raw_query(path, "PRAGMA user_version"), "99");
    auto store = Store::open(path);
    ASSERT_FALSE(store);
    EXPECT_NE(store.error().message.find("schema version 99"), std::string::npos) << store.error().message;
    EXPECT_NE(store.error().message.find(path), std::string::npos) << store.error().message;
}

TEST(StoreFile, EmptyPathIsAnError) {
    auto store = Store::open("");
    ASSERT_FALSE(store);
    EXPECT_NE(store.error().message.find("empty"), std::string::npos);
}

TEST(StoreFile, ConcurrentProcessesCreateAndWriteOneFile) {
    // Several processes opening a file that does not exist yet race through creation and the
    // migration, then write side by side: the busy timeout and IMMEDIATE migration serialise them.
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    constexpr int kProcesses = 3, kIterations = 40;
    std::vector<pid_t> children;
    for (int p = 0; p < kProcesses; ++p) {
        const pid_t child = ::fork();
        ASSERT_GE(child, 0);
        if (child == 0) {
            ::alarm(20);
            auto store = Store::open(path);
            if (!store) {
                // The parent sees only the status; the reason goes to the test's output.
                std::fprintf(stderr, "process %d: %s\n", p, store.error().message.c_str());
                ::_exit(2);
            }
            const std::string id = "r-proc" + std::to_string(p);
            if (!(*store)->create_run(make_run(id))) ::_exit(3);
            for (int i = 0; i < kIterations; ++i) {
                auto cand = (*store)->add_candidate(make_candidate(id, "shared-" + std::to_string(i)));
                if (!cand) ::_exit(4);
                if (!(*store)->add_iteration(make_iteration(id, i))) ::_exit(5);
            }
            ::_exit(0);
        }
        children.push_back(child);
    }
    for (pid_t child : children) {
        int status = 0;
        ::waitpid(child, &status, 0);
        EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "child status " << status;
    }
    auto store = open_store(path);
    ASSERT_TRUE(store);
    auto runs = store->list_runs();
    ASSERT_TRUE(runs);
    EXPECT_EQ(runs->size(), static_cast<size_t>(kProcesses));
    for (int p = 0; p < kProcesses; ++p) {
        auto its = store->load_iterations("r-proc" + std::to_string(p));
        ASSERT_TRUE(its);
        EXPECT_EQ(its->size(), static_cast<size_t>(kIterations));
    }
    EXPECT_EQ(raw_query(path, "SELECT count(*) FROM candidates"), std::to_string(kProcesses * kIterations));
}

// ---- crash safety ----

TEST(StoreCrash, WriterKilledMidRunKeepsEveryCommittedIteration) {
    TempDir dir;
    const std::string path = dir.file("kevo.db");
    const std::string big(20000, 'x');
    constexpr int kWait = 25;

    int fds[2];
    ASSERT_EQ(::pipe(fds), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        // The child: a run that records iterations until it is killed. It never returns into
        // the test framework; alarm() ends it should the parent fail to.
        ::close(fds[0]);
        ::alarm(20);
        auto store = Store::open(path);
        if (!store) ::_exit(2);
        RunRecord run = make_run("r-crash");
        run.pid = static_cast<int>(::getpid());
        if (!(*store)->create_run(run)) ::_exit(3);
        for (int i = 0; i < 1000000; ++i) {
            auto cand = (*store)->add_candidate(make_candidate("r-crash", "hash-" + std::to_string(i)));
            if (!cand) ::_exit(4);
            IterationRecord it = make_iteration("r-crash", i);
            it.candidate_id = *cand;
            it.prompt = std::to_string(i) + big;
            if (!(*store)->add_iteration(it)) ::_exit(5);
            run.iterations_done = i + 1;
            if (!(*store)->update_run(run)) ::_exit(6);
            if (::write(fds[1], "x", 1) != 1) ::_exit(7);
        }
        ::_exit(0);
    }
    ::close(fds[1]);
    int acknowledged = 0;
    char byte;
    while (acknowledged < kWait && ::read(fds[0], &byte, 1) == 1) ++acknowledged;
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    ::close(fds[0]);
    ASSERT_EQ(acknowledged, kWait) << "the writer stopped early, status " << status;
    ASSERT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL) << "status " << status;

    auto store = open_store(path);
    ASSERT_TRUE(store);
    auto run = store->load_run("r-crash");
    ASSERT_TRUE(run) << run.error().message;
    EXPECT_EQ(run->status, RunStatus::interrupted);  // "running" on disk, its process gone
    EXPECT_GE(run->iterations_done, kWait);

    auto its = store->load_iterations("r-crash");
    ASSERT_TRUE(its) << its.error().message;
    // Each iteration is written before iterations_done counts it.
    ASSERT_GE(static_cast<int>(its->size()), run->iterations_done);
    for (size_t i = 0; i < its->size(); ++i) {
        const IterationRecord& it = (*its)[i];
        ASSERT_EQ(it.iteration, static_cast<int>(i));
        EXPECT_EQ(it.prompt, std::to_string(i) + big);
        EXPECT_EQ(it.result, make_iteration("r-crash", static_cast<int>(i)).result);
        ASSERT_TRUE(it.candidate_id.has_value());
        auto cand = store->load_candidate(*it.candidate_id);
        ASSERT_TRUE(cand) << cand.error().message;
        EXPECT_EQ(cand->hash, "hash-" + std::to_string(i));
    }
    EXPECT_EQ(raw_query(path, "PRAGMA integrity_check"), "ok");

    // The run can go on (what --resume does): the next iteration is written normally.
    ASSERT_TRUE(store->add_iteration(make_iteration("r-crash", static_cast<int>(its->size()))));
}

}  // namespace
}  // namespace kevo
