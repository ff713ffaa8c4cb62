// The SQLite store behind `kevo run` and `kevo report` (see store.hpp). Each write is a single
// statement in autocommit mode, i.e. its own transaction, so a process killed at any point
// leaves every earlier write intact; WAL lets readers (reports) run beside a writing run.
#include "store/store.hpp"

#include <signal.h>
#include <sqlite3.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <filesystem>
#include <string_view>
#include <system_error>

#include <fmt/format.h>

#include "core/clock.hpp"
#include "store/migrations.hpp"
#include "store/run_lock.hpp"
#include "store/sqlite_statement.hpp"
#include "store/store_internal.hpp"

namespace kevo {
namespace {

using nlohmann::json;
using store_internal::ConnectionLock;
using store_internal::json_text;
using store_internal::parse_json_column;

// A "running" run whose process is gone was interrupted (killed, crashed, machine rebooted).
bool process_alive(int pid) {
    if (pid <= 0) return false;
    // EPERM means the process exists but belongs to someone else.
    return ::kill(static_cast<pid_t>(pid), 0) == 0 || errno != ESRCH;
}

// A run stored as running is running only while its lock is held; a run of an older kevo (no lock
// file) while its process lives.
RunStatus effective_status(RunStatus status, int pid, const std::string& db_path, const std::string& run_id) {
    if (status != RunStatus::running) return status;
    switch (RunLock::probe(db_path, run_id)) {
        case RunLock::State::held: return RunStatus::running;
        case RunLock::State::free: return RunStatus::interrupted;
        case RunLock::State::absent: return process_alive(pid) ? RunStatus::running : RunStatus::interrupted;
    }
    return status;
}

constexpr const char* kRunColumns =
    "run_id, task, backend, device, profile, proposer, strategy, settings, status, created_at, "
    "updated_at, iterations_done, seed_score, best_score, best_candidate_id, summary, pid";

Expected<RunRecord> read_run(const Statement& stmt, const std::string& path) {
    RunRecord run;
    run.run_id = stmt.text(0);
    run.task = stmt.text(1);
    run.backend = stmt.text(2);
    run.device = stmt.text(3);
    run.profile = stmt.text(4);
    run.proposer = stmt.text(5);
    run.strategy = stmt.text(6);
    auto settings = parse_json_column(stmt, 7, path, fmt::format("the settings of run '{}'", run.run_id));
    if (!settings) return settings.error();
    run.settings = std::move(*settings);
    run.pid = static_cast<int>(stmt.int64(16));
    const auto status = parse_run_status(stmt.text(8));
    if (!status) return make_error(fmt::format("{}: run '{}' has an unknown status '{}'", path, run.run_id, stmt.text(8)));
    run.status = effective_status(*status, run.pid, path, run.run_id);
    run.created_at = stmt.text(9);
    run.updated_at = stmt.text(10);
    run.iterations_done = static_cast<int>(stmt.int64(11));
    run.seed_score = stmt.opt_real(12);
    run.best_score = stmt.opt_real(13);
    run.best_candidate_id = stmt.opt_int(14);
    auto summary = parse_json_column(stmt, 15, path, fmt::format("the summary of run '{}'", run.run_id));
    if (!summary) return summary.error();
    run.summary = std::move(*summary);
    return run;
}

Expected<CandidateRecord> read_candidate(const Statement& stmt, const std::string& path) {
    CandidateRecord candidate;
    candidate.id = stmt.int64(0);
    candidate.run_id = stmt.text(1);
    candidate.hash = stmt.text(2);
    candidate.parent_id = stmt.opt_int(3);
    candidate.proposer = stmt.text(4);
    candidate.source = stmt.text(5);
    const std::string what = fmt::format("the defines of candidate {}", candidate.id);
    auto defines = parse_json_column(stmt, 6, path, what);
    if (!defines) return defines.error();
    if (!defines->is_object()) return make_error(fmt::format("{}: {} are not a JSON object", path, what));
    for (const auto& [name, value] : defines->items()) {
        if (!value.is_string()) return make_error(fmt::format("{}: {}: '{}' is not a string", path, what, name));
        candidate.defines.emplace(name, value.get<std::string>());
    }
    return candidate;
}

Error no_run(const std::string& run_id, const std::string& path) {
    return make_error(fmt::format("no run '{}' in {}", run_id, path));
}

// How long a connection waits for another one's lock before it reports "database is locked".
constexpr int kBusyTimeoutMs = 5000;

// Runs a setting statement, retrying while another connection holds the lock it needs. Switching
// a new file to WAL takes an exclusive lock without calling the busy handler, so processes that
// create the same database at once would otherwise fail with "database is locked". It waits as
// long as the busy timeout would.
int exec_setting(sqlite3* db, const char* sql) {
    constexpr int kPauseMs = 10;
    int rc = SQLITE_OK;
    for (int waited = 0; waited < kBusyTimeoutMs; waited += kPauseMs) {
        rc = sqlite3_exec(db, sql, nullptr, nullptr, nullptr);
        if ((rc & 0xff) != SQLITE_BUSY && (rc & 0xff) != SQLITE_LOCKED) return rc;
        sqlite3_sleep(kPauseMs);
    }
    return rc;
}

// `path` as an SQLite URI ("file:" and the path, percent-encoded) that opens the file immutable:
// SQLite then neither locks it nor creates the -wal and -shm files beside it.
std::string immutable_uri(const std::string& path) {
    std::string uri = "file:";
    for (const unsigned char c : std::filesystem::absolute(path).string()) {
        if (std::isalnum(c) || std::string_view("/-._~").find(static_cast<char>(c)) != std::string_view::npos)
            uri += static_cast<char>(c);
        else uri += fmt::format("%{:02X}", c);
    }
    return uri + "?immutable=1";
}

// A reader of a WAL store needs a -shm file beside it; in a folder it cannot write (an archived or
// shared store) it cannot create one, and SQLite answers "attempt to write a readonly database".
// With neither -wal nor -shm there, no writer has the file open and everything is in the file
// itself, so reading it as immutable reads exactly what is stored.
bool read_as_immutable(const std::string& path) {
    std::error_code ec;
    const auto parent = std::filesystem::absolute(path, ec).parent_path();
    return !std::filesystem::exists(path + "-wal", ec) && !std::filesystem::exists(path + "-shm", ec) &&
           ::access(parent.c_str(), W_OK) != 0;
}

// Opens the connection and applies the settings every kevo connection uses.
Expected<sqlite3*> open_connection(const std::string& path, Store::Access access) {
    std::error_code ec;
    if (std::filesystem::is_directory(path, ec))
        return make_error(fmt::format("cannot open database '{}': it is a directory", path));
    const bool read_only = access == Store::Access::read_only;
    if (read_only && !std::filesystem::exists(path, ec))
        return make_error(fmt::format("{}: no such store (give --db PATH)", path));

    sqlite3* db = nullptr;
    const bool immutable = read_only && read_as_immutable(path);
    const int flags = (read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE) | SQLITE_OPEN_FULLMUTEX |
                      (immutable ? SQLITE_OPEN_URI : 0);
    if (sqlite3_open_v2(immutable ? immutable_uri(path).c_str() : path.c_str(), &db, flags, nullptr) != SQLITE_OK) {
        std::string message = db ? sqlite3_errmsg(db) : "out of memory";
        // SQLite's "unable to open database file" does not say why; the usual reasons do.
        const std::filesystem::path parent = std::filesystem::absolute(path, ec).parent_path();
        if (!std::filesystem::is_directory(parent, ec))
            message += fmt::format(" (folder '{}' does not exist)", parent.string());
        else if (::access(parent.c_str(), W_OK) != 0)
            message += fmt::format(" (folder '{}' is not writable)", parent.string());
        sqlite3_close_v2(db);
        return make_error(fmt::format("cannot open database '{}': {}", path, message));
    }
    auto fail = [&](std::string message) -> Expected<sqlite3*> {
        sqlite3_close_v2(db);
        return make_error(fmt::format("cannot open database '{}': {}", path, message));
    };
    sqlite3_extended_result_codes(db, 1);
    sqlite3_busy_timeout(db, kBusyTimeoutMs);
    if (read_only) {
        if (auto ok = require_current_schema(db, path); !ok) {
            sqlite3_close_v2(db);
            return ok.error();
        }
        return db;
    }
    // SQLite quietly falls back to read-only when the file is not writable; a store must write.
    if (sqlite3_db_readonly(db, "main") == 1) return fail("the file is read-only (check its permissions)");

    // The first statement reads the file, so this is where "file is not a database" shows up.
    for (const char* pragma : {"PRAGMA journal_mode=WAL", "PRAGMA synchronous=NORMAL", "PRAGMA foreign_keys=ON"}) {
        // journal_mode answers with a row that is not checked: some file systems cannot do WAL
        // and keep a rollback journal, which is still correct, only slower beside readers.
        if (exec_setting(db, pragma) != SQLITE_OK) return fail(sqlite3_errmsg(db));
    }
    if (auto ok = migrate_schema(db, path); !ok) {
        sqlite3_close_v2(db);
        return ok.error();
    }
    return db;
}

}  // namespace

Expected<std::unique_ptr<Store>> Store::open(const std::string& path, Access access) {
    if (path.empty()) return make_error("cannot open database '': the path is empty");
    auto db = open_connection(path, access);
    if (!db) return db.error();
    return std::unique_ptr<Store>(new Store(*db, path));
}

Store::~Store() { sqlite3_close_v2(db_); }

// Binds every column of a run in kRunColumns order (?1..?17). ?10 (created_at) is the caller's or
// now; ?11 (updated_at) is now. UPDATE binds the same set and simply never names ?10.
static void bind_run(Statement& stmt, const RunRecord& run, const std::string& now) {
    stmt.bind_text(1, run.run_id)
        .bind_text(2, run.task)
        .bind_text(3, run.backend)
        .bind_text(4, run.device)
        .bind_text(5, run.profile)
        .bind_text(6, run.proposer)
        .bind_text(7, run.strategy)
        .bind_opt_text(8, json_text(run.settings))
        .bind_text(9, run_status_name(run.status))
        .bind_text(10, run.created_at.empty() ? now : run.created_at)
        .bind_text(11, now)
        .bind_int(12, run.iterations_done)
        .bind_opt_real(13, run.seed_score)
        .bind_opt_real(14, run.best_score)
        .bind_opt_int(15, run.best_candidate_id)
        .bind_opt_text(16, json_text(run.summary))
        .bind_int(17, run.pid);
}

Expected<void> Store::create_run(const RunRecord& run) {
    // A taken id is the user's choice of --run-id, not a database fault: say what to do instead.
    if (load_run(run.run_id))
        return make_error(fmt::format("run '{}' exists already in {}; continue it with kevo run --resume {} --db {}, or "
                                      "give another --run-id", run.run_id, path_, run.run_id, path_));
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(
        db_,
        fmt::format("INSERT INTO runs ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
                    "?12, ?13, ?14, ?15, ?16, ?17)",
                    kRunColumns),
        path_);
    if (!stmt) return stmt.error();
    bind_run(*stmt, run, utc_now_iso8601());
    return stmt->run(fmt::format("cannot create run '{}'", run.run_id));
}

Expected<void> Store::update_run(const RunRecord& run) {
    ConnectionLock lock(db_);
    // created_at is the run's identity in time (and its place in list_runs): never rewritten.
    auto stmt = Statement::prepare(db_,
                                   "UPDATE runs SET task = ?2, backend = ?3, device = ?4, profile = ?5, "
                                   "proposer = ?6, strategy = ?7, settings = ?8, status = ?9, updated_at = ?11, "
                                   "iterations_done = ?12, seed_score = ?13, best_score = ?14, "
                                   "best_candidate_id = ?15, summary = ?16, pid = ?17 WHERE run_id = ?1",
                                   path_);
    if (!stmt) return stmt.error();
    bind_run(*stmt, run, utc_now_iso8601());
    if (auto ok = stmt->run(fmt::format("cannot update run '{}'", run.run_id)); !ok) return ok;
    if (sqlite3_changes(db_) == 0) return no_run(run.run_id, path_);
    return {};
}

Expected<RunRecord> Store::load_run(const std::string& run_id) {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(db_, fmt::format("SELECT {} FROM runs WHERE run_id = ?1", kRunColumns), path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, run_id);
    auto row = stmt->step(fmt::format("cannot load run '{}'", run_id));
    if (!row) return row.error();
    if (!*row) return no_run(run_id, path_);
    return read_run(*stmt, path_);
}

Expected<std::vector<RunRecord>> Store::list_runs() {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(
        db_, fmt::format("SELECT {} FROM runs ORDER BY created_at DESC, rowid DESC", kRunColumns), path_);
    if (!stmt) return stmt.error();
    std::vector<RunRecord> runs;
    for (;;) {
        auto row = stmt->step("cannot list runs");
        if (!row) return row.error();
        if (!*row) break;
        auto run = read_run(*stmt, path_);
        if (!run) return run.error();
        runs.push_back(std::move(*run));
    }
    return runs;
}

Expected<int64_t> Store::add_candidate(const CandidateRecord& candidate) {
    ConnectionLock lock(db_);
    json defines = json::object();
    for (const auto& [name, value] : candidate.defines) defines[name] = value;
    auto insert = Statement::prepare(db_,
                                     "INSERT INTO candidates (run_id, hash, parent_id, proposer, source, defines) "
                                     "VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT (run_id, hash) DO NOTHING",
                                     path_);
    if (!insert) return insert.error();
    insert->bind_text(1, candidate.run_id)
        .bind_text(2, candidate.hash)
        .bind_opt_int(3, candidate.parent_id)
        .bind_text(4, candidate.proposer)
        .bind_text(5, candidate.source)
        .bind_text(6, *json_text(defines));
    const std::string what = fmt::format("cannot add candidate {} of run '{}'", candidate.hash, candidate.run_id);
    if (auto ok = insert->run(what); !ok) return ok.error();

    // Whether it was just inserted or already there, the row now exists; candidates are never
    // deleted, so a separate read is race-free.
    auto select = Statement::prepare(db_, "SELECT id FROM candidates WHERE run_id = ?1 AND hash = ?2", path_);
    if (!select) return select.error();
    select->bind_text(1, candidate.run_id).bind_text(2, candidate.hash);
    auto row = select->step(what);
    if (!row) return row.error();
    assert(*row && "a candidate row vanished right after its insert");
    return select->int64(0);
}

Expected<CandidateRecord> Store::load_candidate(int64_t id) {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(
        db_, "SELECT id, run_id, hash, parent_id, proposer, source, defines FROM candidates WHERE id = ?1", path_);
    if (!stmt) return stmt.error();
    stmt->bind_int(1, id);
    auto row = stmt->step(fmt::format("cannot load candidate {}", id));
    if (!row) return row.error();
    if (!*row) return make_error(fmt::format("no candidate {} in {}", id, path_));
    return read_candidate(*stmt, path_);
}

Expected<void> Store::add_iteration(const IterationRecord& it) {
    ConnectionLock lock(db_);
    // REPLACE: an iteration that was interrupted and is re-run overwrites its earlier row.
    auto stmt = Statement::prepare(
        db_,
        "INSERT OR REPLACE INTO iterations (run_id, iteration, candidate_id, status, verdict, score, "
        "diagnostics, accepted, prompt, answer, prompt_tokens, completion_tokens, cost_usd, seconds, result, note, "
        "dropout, strategy, failure, http_status, knowledge, gain, gain_spread) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, "
        "?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, ?20, ?21, ?22, ?23)",
        path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, it.run_id)
        .bind_int(2, it.iteration)
        .bind_opt_int(3, it.candidate_id)
        .bind_text(4, iteration_status_name(it.status))
        .bind_text(5, it.verdict)
        .bind_opt_real(6, it.score)
        .bind_text(7, it.diagnostics)
        .bind_int(8, it.accepted ? 1 : 0)
        .bind_text(9, it.prompt)
        .bind_text(10, it.answer)
        .bind_int(11, it.prompt_tokens)
        .bind_int(12, it.completion_tokens)
        .bind_real(13, it.cost_usd)
        .bind_real(14, it.seconds)
        .bind_opt_text(15, json_text(it.result))
        .bind_text(16, it.note)
        .bind_int(17, it.dropout ? 1 : 0)
        .bind_opt_text(18, json_text(it.strategy))
        .bind_text(19, it.failure)
        .bind_int(20, it.http_status)
        .bind_opt_text(21, it.knowledge.empty() ? std::nullopt : json_text(nlohmann::json(it.knowledge)))
        .bind_opt_real(22, it.gain)
        .bind_opt_real(23, it.gain_spread);
    return stmt->run(fmt::format("cannot add iteration {} of run '{}'", it.iteration, it.run_id));
}

Expected<std::vector<IterationRecord>> Store::load_iterations(const std::string& run_id) {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(
        db_,
        "SELECT run_id, iteration, candidate_id, status, verdict, score, diagnostics, accepted, prompt, "
        "answer, prompt_tokens, completion_tokens, cost_usd, seconds, result, note, dropout, strategy, failure, "
        "http_status, knowledge, gain, gain_spread FROM iterations WHERE run_id = ?1 ORDER BY iteration",
        path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, run_id);
    std::vector<IterationRecord> iterations;
    for (;;) {
        auto row = stmt->step(fmt::format("cannot load the iterations of run '{}'", run_id));
        if (!row) return row.error();
        if (!*row) break;
        IterationRecord it;
        it.run_id = stmt->text(0);
        it.iteration = static_cast<int>(stmt->int64(1));
        it.candidate_id = stmt->opt_int(2);
        const auto status = parse_iteration_status(stmt->text(3));
        if (!status)
            return make_error(fmt::format("{}: iteration {} of run '{}' has an unknown status '{}'", path_, it.iteration,
                                          run_id, stmt->text(3)));
        it.status = *status;
        it.verdict = stmt->text(4);
        it.score = stmt->opt_real(5);
        it.diagnostics = stmt->text(6);
        it.accepted = stmt->int64(7) != 0;
        it.prompt = stmt->text(8);
        it.answer = stmt->text(9);
        it.prompt_tokens = static_cast<int>(stmt->int64(10));
        it.completion_tokens = static_cast<int>(stmt->int64(11));
        it.cost_usd = stmt->real(12);
        it.seconds = stmt->real(13);
        auto result = parse_json_column(*stmt, 14, path_,
                                        fmt::format("the result of iteration {} of run '{}'", it.iteration, run_id));
        if (!result) return result.error();
        it.result = std::move(*result);
        it.note = stmt->text(15);
        it.dropout = stmt->int64(16) != 0;
        auto strategy = parse_json_column(*stmt, 17, path_,
                                          fmt::format("the strategy record of iteration {} of run '{}'", it.iteration,
                                                      run_id));
        if (!strategy) return strategy.error();
        it.strategy = std::move(*strategy);
        it.failure = stmt->text(18);
        it.http_status = static_cast<int>(stmt->int64(19));
        auto knowledge = parse_json_column(*stmt, 20, path_,
                                           fmt::format("the knowledge notes of iteration {} of run '{}'", it.iteration, run_id));
        if (!knowledge) return knowledge.error();
        if (!knowledge->is_null() && !knowledge->is_array())
            return make_error(fmt::format("{}: the knowledge notes of iteration {} of run '{}' are not a list", path_,
                                          it.iteration, run_id));
        for (const auto& id : *knowledge)
            if (id.is_string()) it.knowledge.push_back(id.get<std::string>());
        it.gain = stmt->opt_real(21);
        it.gain_spread = stmt->opt_real(22);
        iterations.push_back(std::move(it));
    }
    return iterations;
}

Expected<void> Store::add_heldout(const HeldoutRecord& heldout) {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(db_,
                                   "INSERT OR REPLACE INTO heldout (run_id, role, candidate_id, verdict, fraction, "
                                   "seconds, result, iteration, passed, reason, speedup, speedup_spread, "
                                   "heldout_speedup, heldout_speedup_spread, rounds) "
                                   "VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                                   path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, heldout.run_id)
        .bind_text(2, heldout.role)
        .bind_int(3, heldout.candidate_id)
        .bind_text(4, heldout.verdict)
        .bind_opt_real(5, heldout.fraction)
        .bind_real(6, heldout.seconds)
        .bind_opt_text(7, json_text(heldout.result))
        .bind_opt_int(8, heldout.iteration)
        .bind_int(9, heldout.passed ? 1 : 0)
        .bind_text(10, heldout.reason)
        .bind_opt_real(11, heldout.speedup)
        .bind_opt_real(12, heldout.speedup_spread)
        .bind_opt_real(13, heldout.heldout_speedup)
        .bind_opt_real(14, heldout.heldout_speedup_spread)
        .bind_opt_text(15, json_text(heldout.rounds));
    return stmt->run(fmt::format("cannot add the held-out result '{}' of run '{}'", heldout.role, heldout.run_id));
}

Expected<void> Store::clear_heldout(const std::string& run_id) {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(db_, "DELETE FROM heldout WHERE run_id = ?1", path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, run_id);
    return stmt->run(fmt::format("cannot clear the gate of run '{}'", run_id));
}

Expected<void> Store::delete_run(const std::string& run_id) {
    ConnectionLock lock(db_);
    if (auto ok = exec_sql(db_, "BEGIN IMMEDIATE", path_, "cannot start deleting a run"); !ok) return ok;
    auto rollback = [&](Error e) -> Expected<void> {
        (void)exec_sql(db_, "ROLLBACK", path_, "cannot roll back");
        return e;
    };
    // References first: the run names its best candidate, held-out rows and iterations name
    // candidates, candidates name their parents and the run.
    for (const char* sql : {"UPDATE study_cells SET run_id = NULL WHERE run_id = ?1",
                            "UPDATE runs SET best_candidate_id = NULL WHERE run_id = ?1",
                            "DELETE FROM heldout WHERE run_id = ?1", "DELETE FROM iterations WHERE run_id = ?1",
                            "UPDATE candidates SET parent_id = NULL WHERE run_id = ?1",
                            "DELETE FROM candidates WHERE run_id = ?1", "DELETE FROM runs WHERE run_id = ?1"}) {
        auto stmt = Statement::prepare(db_, sql, path_);
        if (!stmt) return rollback(stmt.error());
        stmt->bind_text(1, run_id);
        if (auto ok = stmt->run(fmt::format("cannot delete run '{}'", run_id)); !ok) return rollback(ok.error());
        if (std::string_view(sql).find("FROM runs") != std::string_view::npos && sqlite3_changes(db_) == 0)
            return rollback(no_run(run_id, path_));
    }
    return exec_sql(db_, "COMMIT", path_, "cannot finish deleting a run");
}

Expected<std::vector<HeldoutRecord>> Store::load_heldout(const std::string& run_id) {
    ConnectionLock lock(db_);
    // "seed" before "best" reads naturally in reports; any other role follows by name.
    auto stmt = Statement::prepare(db_,
                                   "SELECT run_id, role, candidate_id, verdict, fraction, seconds, result, iteration, "
                                   "passed, reason, speedup, speedup_spread, heldout_speedup, heldout_speedup_spread, "
                                   "rounds FROM heldout WHERE run_id = ?1 "
                                   "ORDER BY CASE role WHEN 'seed' THEN 0 WHEN 'best' THEN 1 ELSE 2 END, role",
                                   path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, run_id);
    std::vector<HeldoutRecord> rows;
    for (;;) {
        auto row = stmt->step(fmt::format("cannot load the held-out results of run '{}'", run_id));
        if (!row) return row.error();
        if (!*row) break;
        HeldoutRecord h;
        h.run_id = stmt->text(0);
        h.role = stmt->text(1);
        h.candidate_id = stmt->int64(2);
        h.verdict = stmt->text(3);
        h.fraction = stmt->opt_real(4);
        h.seconds = stmt->real(5);
        auto result = parse_json_column(*stmt, 6, path_,
                                        fmt::format("the held-out result '{}' of run '{}'", h.role, run_id));
        if (!result) return result.error();
        h.result = std::move(*result);
        h.iteration = stmt->opt_int(7);
        h.passed = stmt->int64(8) != 0;
        h.reason = stmt->text(9);
        h.speedup = stmt->opt_real(10);
        h.speedup_spread = stmt->opt_real(11);
        h.heldout_speedup = stmt->opt_real(12);
        h.heldout_speedup_spread = stmt->opt_real(13);
        auto rounds = parse_json_column(*stmt, 14, path_,
                                        fmt::format("the gate rounds '{}' of run '{}'", h.role, run_id));
        if (!rounds) return rounds.error();
        h.rounds = std::move(*rounds);
        rows.push_back(std::move(h));
    }
    return rows;
}

}  // namespace kevo
