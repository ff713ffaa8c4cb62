// Copying a store and merging a shard into it (see store.hpp): the one-store-out step of a sweep
// spread over MPI ranks, each rank writing its runs into a shard copied from the study's store.
// Column lists are read from the schema, so a later migration's columns travel without an edit here.
#include <sqlite3.h>

#include <map>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "store/sqlite_statement.hpp"
#include "store/store.hpp"
#include "store/store_internal.hpp"

namespace kevo {
namespace {

using store_internal::ConnectionLock;

Expected<std::vector<std::string>> columns_of(sqlite3* db, const std::string& table, const std::string& path) {
    auto stmt = Statement::prepare(db, fmt::format("PRAGMA main.table_info({})", table), path);
    if (!stmt) return stmt.error();
    std::vector<std::string> names;
    for (;;) {
        auto row = stmt->step("cannot read the store's columns");
        if (!row) return row.error();
        if (!*row) break;
        names.push_back(stmt->text(1));
    }
    return names;
}

// "a, b, c" of `columns`, each through `as` (a column's expression in a SELECT).
template <class As>
std::string column_list(const std::vector<std::string>& columns, As as) {
    std::string out;
    for (const auto& c : columns) out += (out.empty() ? "" : ", ") + as(c);
    return out;
}

// One text per run row of table alias `t`, over every column but the best candidate's id (each store
// numbers its own candidates): equal texts, equal rows.
Expected<std::string> run_fingerprint(sqlite3* db, const std::string& t, const std::string& path) {
    auto columns = columns_of(db, "runs", path);
    if (!columns) return columns.error();
    std::string text;
    for (const auto& c : *columns)
        if (c != "best_candidate_id") text += fmt::format("{}quote({}.{})", text.empty() ? "" : " || '|' || ", t, c);
    return text;
}

Expected<void> run_sql(sqlite3* db, const std::string& sql, const std::string& path, std::string_view what) {
    auto stmt = Statement::prepare(db, sql, path);
    if (!stmt) return stmt.error();
    return stmt->run(what);
}

// The steps of one merge, inside one transaction of the store, with the shard attached as `shard`.
class Merge {
public:
    Merge(sqlite3* db, const std::string& path) : db_(db), path_(path) {}

    Expected<Store::MergeCounts> run() {
        if (auto r = check_schema(); !r) return r.error();
        if (auto r = choose_runs(); !r) return r.error();
        if (auto r = clear_replaced(); !r) return r.error();
        if (auto r = copy_runs(); !r) return r.error();
        if (auto r = copy_candidates(); !r) return r.error();
        for (const char* table : {"iterations", "heldout"})
            if (auto r = copy_rows_with_candidate(table); !r) return r.error();
        if (auto r = set_best_candidates(); !r) return r.error();
        if (auto r = copy_studies(); !r) return r.error();
        return counts_;
    }

private:
    sqlite3* db_;
    const std::string& path_;
    Store::MergeCounts counts_;

    Expected<void> sql(const std::string& text, std::string_view what) { return run_sql(db_, text, path_, what); }

    Expected<int> count(const std::string& text) {
        auto stmt = Statement::prepare(db_, text, path_);
        if (!stmt) return stmt.error();
        auto row = stmt->step("cannot count the shard's runs");
        if (!row) return row.error();
        return static_cast<int>(stmt->int64(0));
    }

    // Column lists are this store's: the shard must be at the same schema version.
    Expected<void> check_schema() {
        auto mine = count("PRAGMA main.user_version");
        auto theirs = count("PRAGMA shard.user_version");
        if (!mine) return mine.error();
        if (!theirs) return theirs.error();
        if (*mine != *theirs)
            return make_error(fmt::format("the shard is at schema version {}, this store at {}: both must come from "
                                          "the same kevo", *theirs, *mine));
        auto baseline = count("SELECT count(*) FROM shard.sqlite_master WHERE name = 'shard_baseline'");
        if (!baseline) return baseline.error();
        if (*baseline == 0) return make_error("it is not a shard (no baseline: make_shard writes one)");
        return {};
    }

    // The runs the shard changed: those whose row differs from the shard's baseline (the rows it was
    // copied with), or that it created. A shard holds every run of the store it was copied from, and
    // one rank alone runs a cell, so an unchanged copy must never be taken (it would put back a run
    // another rank has since finished); and updated_at cannot order two versions (whole seconds).
    Expected<void> choose_runs() {
        if (auto r = sql("CREATE TEMP TABLE merge_take (run_id TEXT PRIMARY KEY, replaced INTEGER NOT NULL)",
                         "cannot start the merge");
            !r)
            return r;
        auto fingerprint = run_fingerprint(db_, "s", path_);
        if (!fingerprint) return fingerprint.error();
        if (auto r = sql(fmt::format("INSERT INTO temp.merge_take SELECT s.run_id, m.run_id IS NOT NULL FROM shard.runs s "
                                     "LEFT JOIN main.runs m ON m.run_id = s.run_id LEFT JOIN shard.shard_baseline b ON "
                                     "b.run_id = s.run_id WHERE b.run_id IS NULL OR b.fingerprint IS NOT ({})",
                                     *fingerprint),
                         "cannot choose the shard's runs");
            !r)
            return r;
        auto replaced = count("SELECT count(*) FROM temp.merge_take WHERE replaced");
        auto all = count("SELECT count(*) FROM temp.merge_take");
        if (!replaced) return replaced.error();
        if (!all) return all.error();
        counts_.runs_replaced = *replaced;
        counts_.runs_added = *all - *replaced;
        return {};
    }

    // A replaced run's old rows go first (children before the candidates they name).
    Expected<void> clear_replaced() {
        const std::string taken = "run_id IN (SELECT run_id FROM temp.merge_take)";
        for (const std::string& step :
             {"UPDATE main.runs SET best_candidate_id = NULL WHERE " + taken, "DELETE FROM main.heldout WHERE " + taken,
              "DELETE FROM main.iterations WHERE " + taken, "UPDATE main.candidates SET parent_id = NULL WHERE " + taken,
              "DELETE FROM main.candidates WHERE " + taken})
            if (auto r = sql(step, "cannot clear a replaced run"); !r) return r;
        return {};
    }

    // The run rows, inserted or updated in place (cells name them), their best candidate set later.
    Expected<void> copy_runs() {
        auto columns = columns_of(db_, "runs", path_);
        if (!columns) return columns.error();
        const std::string select = column_list(*columns, [](const std::string& c) {
            return c == "best_candidate_id" ? std::string("NULL") : "s." + c;
        });
        std::string set;
        for (const auto& c : *columns)
            if (c != "run_id") set += (set.empty() ? "" : ", ") + fmt::format("{0} = excluded.{0}", c);
        return sql(fmt::format("INSERT INTO main.runs ({}) SELECT {} FROM shard.runs s WHERE s.run_id IN "
                               "(SELECT run_id FROM temp.merge_take) ON CONFLICT(run_id) DO UPDATE SET {}",
                               column_list(*columns, [](const std::string& c) { return c; }), select, set),
                   "cannot copy the shard's runs");
    }

    // Candidates get this store's ids; merge_ids maps the shard's to them by (run_id, hash), unique per run.
    Expected<void> copy_candidates() {
        auto columns = columns_of(db_, "candidates", path_);
        if (!columns) return columns.error();
        std::vector<std::string> copied;
        for (const auto& c : *columns)
            if (c != "id" && c != "parent_id") copied.push_back(c);
        const std::string names = column_list(copied, [](const std::string& c) { return c; });
        if (auto r = sql(fmt::format("INSERT INTO main.candidates ({0}) SELECT {0} FROM shard.candidates WHERE run_id IN "
                                     "(SELECT run_id FROM temp.merge_take) ORDER BY id",
                                     names),
                         "cannot copy the shard's candidates");
            !r)
            return r;
        if (auto r = sql("CREATE TEMP TABLE merge_ids AS SELECT s.id AS old_id, m.id AS new_id FROM shard.candidates s "
                         "JOIN main.candidates m ON m.run_id = s.run_id AND m.hash = s.hash WHERE s.run_id IN "
                         "(SELECT run_id FROM temp.merge_take)",
                         "cannot map the shard's candidates");
            !r)
            return r;
        return sql("UPDATE main.candidates SET parent_id = (SELECT p.new_id FROM shard.candidates s JOIN temp.merge_ids p "
                   "ON p.old_id = s.parent_id WHERE s.run_id = candidates.run_id AND s.hash = candidates.hash) "
                   "WHERE run_id IN (SELECT run_id FROM temp.merge_take)",
                   "cannot link the shard's candidates to their parents");
    }

    Expected<void> copy_rows_with_candidate(const std::string& table) {
        auto columns = columns_of(db_, table, path_);
        if (!columns) return columns.error();
        const std::string select = column_list(*columns, [](const std::string& c) {
            return c == "candidate_id" ? std::string("(SELECT new_id FROM temp.merge_ids WHERE old_id = s.candidate_id)")
                                       : "s." + c;
        });
        return sql(fmt::format("INSERT INTO main.{0} ({1}) SELECT {2} FROM shard.{0} s WHERE s.run_id IN "
                               "(SELECT run_id FROM temp.merge_take)",
                               table, column_list(*columns, [](const std::string& c) { return c; }), select),
                   fmt::format("cannot copy the shard's {}", table));
    }

    Expected<void> set_best_candidates() {
        return sql("UPDATE main.runs SET best_candidate_id = (SELECT i.new_id FROM temp.merge_ids i WHERE i.old_id = "
                   "(SELECT s.best_candidate_id FROM shard.runs s WHERE s.run_id = runs.run_id)) WHERE run_id IN "
                   "(SELECT run_id FROM temp.merge_take)",
                   "cannot set the shard's best candidates");
    }

    // Studies this store lacks; every cell whose shard row names a run (now here) that this store's does not.
    Expected<void> copy_studies() {
        auto study_columns = columns_of(db_, "studies", path_);
        if (!study_columns) return study_columns.error();
        const std::string names = column_list(*study_columns, [](const std::string& c) { return c; });
        if (auto r = sql(fmt::format("INSERT OR IGNORE INTO main.studies ({0}) SELECT {0} FROM shard.studies", names),
                         "cannot copy the shard's studies");
            !r)
            return r;
        const std::string differing = "FROM shard.study_cells s LEFT JOIN main.study_cells m ON m.study_id = s.study_id "
                                      "AND m.cell = s.cell WHERE s.run_id IS NOT NULL AND s.run_id IN (SELECT run_id FROM "
                                      "main.runs) AND m.run_id IS NOT s.run_id";
        auto cells = count("SELECT count(*) " + differing);
        if (!cells) return cells.error();
        counts_.cells_set = *cells;
        auto cell_columns = columns_of(db_, "study_cells", path_);
        if (!cell_columns) return cell_columns.error();
        return sql(fmt::format("INSERT OR REPLACE INTO main.study_cells ({}) SELECT {} {}",
                               column_list(*cell_columns, [](const std::string& c) { return c; }),
                               column_list(*cell_columns, [](const std::string& c) { return "s." + c; }), differing),
                   "cannot copy the shard's cells");
    }
};

}  // namespace

Expected<void> Store::make_shard(const std::string& path) {
    ConnectionLock lock(db_);
    {
        auto copy = Statement::prepare(db_, "VACUUM INTO ?1", path_);
        if (!copy) return copy.error();
        copy->bind_text(1, path);
        if (auto r = copy->run(fmt::format("cannot copy the store to {}", path)); !r) return r;
        auto attach = Statement::prepare(db_, "ATTACH DATABASE ?1 AS shard", path_);
        if (!attach) return attach.error();
        attach->bind_text(1, path);
        if (auto r = attach->run(fmt::format("cannot open the shard {}", path)); !r) return r;
    }
    auto fingerprint = run_fingerprint(db_, "r", path_);
    auto baseline = fingerprint ? run_sql(db_,
                                          fmt::format("CREATE TABLE shard.shard_baseline AS SELECT r.run_id AS run_id, "
                                                      "{} AS fingerprint FROM shard.runs r",
                                                      *fingerprint),
                                          path_, "cannot record the shard's baseline")
                                : Expected<void>(fingerprint.error());
    (void)exec_sql(db_, "DETACH DATABASE shard", path_, "cannot detach the shard");
    return baseline;
}

Expected<Store::MergeCounts> Store::merge_from(const std::string& shard_path) {
    ConnectionLock lock(db_);
    {
        auto attach = Statement::prepare(db_, "ATTACH DATABASE ?1 AS shard", path_);
        if (!attach) return attach.error();
        attach->bind_text(1, shard_path);
        if (auto r = attach->run(fmt::format("cannot open the shard {}", shard_path)); !r) return r.error();
    }
    auto merged = [&]() -> Expected<MergeCounts> {
        if (auto r = exec_sql(db_, "BEGIN IMMEDIATE", path_, "cannot start the merge"); !r) return r.error();
        auto counts = Merge(db_, path_).run();
        if (!counts) {
            (void)exec_sql(db_, "ROLLBACK", path_, "cannot roll the merge back");
            return counts;
        }
        if (auto r = exec_sql(db_, "COMMIT", path_, "cannot commit the merge"); !r) return r.error();
        return counts;
    }();
    for (const char* table : {"DROP TABLE IF EXISTS temp.merge_take", "DROP TABLE IF EXISTS temp.merge_ids"})
        (void)exec_sql(db_, table, path_, "cannot drop the merge's scratch");
    (void)exec_sql(db_, "DETACH DATABASE shard", path_, "cannot detach the shard");
    return merged;
}

}  // namespace kevo
