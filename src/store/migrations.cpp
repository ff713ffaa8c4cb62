// Schema migrations of the store (see migrations.hpp). Append new versions; never edit one that
// has shipped, since databases in the field are already at it.
#include "store/migrations.hpp"

#include <sqlite3.h>

#include <array>

#include <fmt/format.h>

#include "store/sqlite_statement.hpp"

namespace kevo {
namespace {

// Index i holds the SQL that takes a database from version i to version i + 1. REAL columns are
// nullable even where the record field is not optional: SQLite stores NaN as NULL.
constexpr std::array kMigrations = {
    // 1: the initial schema.
    R"sql(
CREATE TABLE runs (
    run_id            TEXT PRIMARY KEY NOT NULL,
    task              TEXT NOT NULL,
    backend           TEXT NOT NULL,
    device            TEXT NOT NULL,
    profile           TEXT NOT NULL,
    proposer          TEXT NOT NULL,
    strategy          TEXT NOT NULL,
    settings          TEXT,
    status            TEXT NOT NULL,
    created_at        TEXT NOT NULL,
    updated_at        TEXT NOT NULL,
    iterations_done   INTEGER NOT NULL DEFAULT 0,
    seed_score        REAL,
    best_score        REAL,
    best_candidate_id INTEGER REFERENCES candidates(id),
    summary           TEXT,
    pid               INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX runs_by_created ON runs(created_at);

CREATE TABLE candidates (
    id        INTEGER PRIMARY KEY,
    run_id    TEXT NOT NULL REFERENCES runs(run_id),
    hash      TEXT NOT NULL,
    parent_id INTEGER REFERENCES candidates(id),
    proposer  TEXT NOT NULL,
    source    TEXT NOT NULL,
    defines   TEXT NOT NULL,
    UNIQUE (run_id, hash)
);

CREATE TABLE iterations (
    run_id            TEXT NOT NULL REFERENCES runs(run_id),
    iteration         INTEGER NOT NULL,
    candidate_id      INTEGER REFERENCES candidates(id),
    status            TEXT NOT NULL,
    verdict           TEXT NOT NULL,
    score             REAL,
    diagnostics       TEXT NOT NULL,
    accepted          INTEGER NOT NULL,
    prompt            TEXT NOT NULL,
    answer            TEXT NOT NULL,
    prompt_tokens     INTEGER NOT NULL,
    completion_tokens INTEGER NOT NULL,
    cost_usd          REAL,
    seconds           REAL,
    result            TEXT,
    note              TEXT NOT NULL,
    PRIMARY KEY (run_id, iteration)
);
CREATE INDEX iterations_by_candidate ON iterations(candidate_id);

CREATE TABLE heldout (
    run_id       TEXT NOT NULL REFERENCES runs(run_id),
    role         TEXT NOT NULL,
    candidate_id INTEGER NOT NULL REFERENCES candidates(id),
    verdict      TEXT NOT NULL,
    fraction     REAL,
    seconds      REAL,
    result       TEXT,
    PRIMARY KEY (run_id, role)
);
)sql",
    // 2: an iteration says whether it began with an optimisation dropout (so that --resume replays
    // it); the gate stores every kernel it examined, why one failed, its speed-ups and its rounds.
    R"sql(
ALTER TABLE iterations ADD COLUMN dropout INTEGER NOT NULL DEFAULT 0;
ALTER TABLE heldout ADD COLUMN iteration INTEGER;
ALTER TABLE heldout ADD COLUMN passed INTEGER NOT NULL DEFAULT 1;
ALTER TABLE heldout ADD COLUMN reason TEXT NOT NULL DEFAULT '';
ALTER TABLE heldout ADD COLUMN speedup REAL;
ALTER TABLE heldout ADD COLUMN speedup_spread REAL;
ALTER TABLE heldout ADD COLUMN heldout_speedup REAL;
ALTER TABLE heldout ADD COLUMN heldout_speedup_spread REAL;
ALTER TABLE heldout ADD COLUMN rounds TEXT;
)sql",
    // 3: an iteration carries what its search strategy recorded about it (island, parent, archive
    // cell, behaviour descriptors), so that --resume rebuilds a population by the same rule; a study
    // (`kevo sweep`) stores its file and a row per cell of its matrix, naming the run that fills it.
    R"sql(
ALTER TABLE iterations ADD COLUMN strategy TEXT;
CREATE TABLE studies (
    study_id   TEXT PRIMARY KEY NOT NULL,
    name       TEXT NOT NULL,
    file_path  TEXT NOT NULL,
    file_text  TEXT NOT NULL,
    settings   TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE TABLE study_cells (
    study_id TEXT NOT NULL REFERENCES studies(study_id),
    cell     TEXT NOT NULL,
    task     TEXT NOT NULL,
    model    TEXT NOT NULL,
    strategy TEXT NOT NULL,
    seed     INTEGER NOT NULL,
    run_id   TEXT REFERENCES runs(run_id),
    PRIMARY KEY (study_id, cell)
);
CREATE INDEX study_cells_by_run ON study_cells(run_id);
)sql",
    // 4: an iteration whose proposal failed names the failure's class ("auth", "unreachable", ...)
    // and the last HTTP status, so that --resume counts a streak of proposer failures by the same
    // rule as the live run, never by the wording of a message.
    R"sql(
ALTER TABLE iterations ADD COLUMN failure TEXT NOT NULL DEFAULT '';
ALTER TABLE iterations ADD COLUMN http_status INTEGER NOT NULL DEFAULT 0;
)sql",
    // 5: the knowledge notes an iteration's prompt carried (a JSON list of ids), and the promotion
    // rule's gain and spread, so that `kevo knowledge distil` reports the side-by-side figure.
    R"sql(
ALTER TABLE iterations ADD COLUMN knowledge TEXT;
ALTER TABLE iterations ADD COLUMN gain REAL;
ALTER TABLE iterations ADD COLUMN gain_spread REAL;
)sql",
};

Expected<int> read_user_version(sqlite3* db, const std::string& path) {
    auto stmt = Statement::prepare(db, "PRAGMA user_version", path);
    if (!stmt) return stmt.error();
    auto row = stmt->step("cannot read the schema version");
    if (!row) return row.error();
    return *row ? static_cast<int>(stmt->int64(0)) : 0;
}

Expected<void> check_not_newer(int version, const std::string& path) {
    if (version > latest_schema_version())
        return make_error(fmt::format(
            "{}: schema version {} is newer than this kevo understands ({}); use a newer kevo",
            path, version, latest_schema_version()));
    return {};
}

Expected<void> apply_pending(sqlite3* db, const std::string& path) {
    auto version = read_user_version(db, path);
    if (!version) return version.error();
    if (auto ok = check_not_newer(*version, path); !ok) return ok;
    for (int v = *version; v < latest_schema_version(); ++v) {
        if (auto ok = exec_sql(db, kMigrations[v], path, fmt::format("cannot migrate to schema version {}", v + 1));
            !ok)
            return ok;
        // PRAGMA takes no bound parameters; the number is ours, not a stored value.
        const std::string set_version = fmt::format("PRAGMA user_version = {}", v + 1);
        if (auto ok = exec_sql(db, set_version.c_str(), path, "cannot set the schema version"); !ok) return ok;
    }
    return {};
}

}  // namespace

int latest_schema_version() { return static_cast<int>(kMigrations.size()); }

Expected<void> require_current_schema(sqlite3* db, const std::string& path) {
    auto version = read_user_version(db, path);
    if (!version) return version.error();
    if (auto ok = check_not_newer(*version, path); !ok) return ok;
    if (*version == 0)
        return make_error(fmt::format("{}: not a kevo store (it holds no kevo tables); give the store a run wrote "
                                      "with --db", path));
    if (*version < latest_schema_version())
        return make_error(fmt::format("{}: written by an older kevo (schema {}, this one reads {}); any command that "
                                      "writes to it (kevo run --resume, with write access) migrates it first",
                                      path, *version, latest_schema_version()));
    return {};
}

Expected<void> migrate_schema(sqlite3* db, const std::string& path) {
    // Most opens find the schema current: check without taking the write lock.
    auto version = read_user_version(db, path);
    if (!version) return version.error();
    if (auto ok = check_not_newer(*version, path); !ok) return ok;
    if (*version == latest_schema_version()) return {};

    // IMMEDIATE takes the write lock up front, so two processes creating the same database
    // serialise here and the second re-reads the version the first committed.
    if (auto ok = exec_sql(db, "BEGIN IMMEDIATE", path, "cannot start the schema migration"); !ok) return ok;
    auto applied = apply_pending(db, path);
    if (!applied) {
        (void)exec_sql(db, "ROLLBACK", path, "cannot roll back the schema migration");
        return applied;
    }
    return exec_sql(db, "COMMIT", path, "cannot commit the schema migration");
}

}  // namespace kevo
