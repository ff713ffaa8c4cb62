// The store's studies (see store.hpp): a study's file and settings, and a row per cell of its
// matrix naming the run that fills it. Each write is one statement, its own transaction, so a
// sweep killed at any point finds every cell it had recorded.
#include <fmt/format.h>

#include "core/clock.hpp"
#include "store/sqlite_statement.hpp"
#include "store/store.hpp"
#include "store/store_internal.hpp"

namespace kevo {
namespace {

using store_internal::ConnectionLock;
using store_internal::json_text;
using store_internal::parse_json_column;

constexpr const char* kStudyColumns = "study_id, name, file_path, file_text, settings, created_at, updated_at";

Expected<StudyRecord> read_study(const Statement& stmt, const std::string& path) {
    StudyRecord study;
    study.study_id = stmt.text(0);
    study.name = stmt.text(1);
    study.file_path = stmt.text(2);
    study.file_text = stmt.text(3);
    auto settings = parse_json_column(stmt, 4, path, fmt::format("the settings of study '{}'", study.study_id));
    if (!settings) return settings.error();
    study.settings = std::move(*settings);
    study.created_at = stmt.text(5);
    study.updated_at = stmt.text(6);
    return study;
}

}  // namespace

Expected<void> Store::create_study(const StudyRecord& study) {
    ConnectionLock lock(db_);
    const std::string now = utc_now_iso8601();
    auto stmt = Statement::prepare(db_, fmt::format("INSERT INTO studies ({}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                                    kStudyColumns),
                                   path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, study.study_id)
        .bind_text(2, study.name)
        .bind_text(3, study.file_path)
        .bind_text(4, study.file_text)
        .bind_opt_text(5, json_text(study.settings))
        .bind_text(6, study.created_at.empty() ? now : study.created_at)
        .bind_text(7, now);
    return stmt->run(fmt::format("cannot create study '{}' (does it exist already?)", study.study_id));
}

Expected<StudyRecord> Store::load_study(const std::string& study_id) {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(db_, fmt::format("SELECT {} FROM studies WHERE study_id = ?1", kStudyColumns), path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, study_id);
    auto row = stmt->step(fmt::format("cannot load study '{}'", study_id));
    if (!row) return row.error();
    if (!*row) return make_error(fmt::format("no study '{}' in {}", study_id, path_));
    return read_study(*stmt, path_);
}

Expected<std::vector<StudyRecord>> Store::list_studies() {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(
        db_, fmt::format("SELECT {} FROM studies ORDER BY created_at DESC, study_id DESC", kStudyColumns), path_);
    if (!stmt) return stmt.error();
    std::vector<StudyRecord> studies;
    for (;;) {
        auto row = stmt->step("cannot list the studies");
        if (!row) return row.error();
        if (!*row) break;
        auto study = read_study(*stmt, path_);
        if (!study) return study.error();
        studies.push_back(std::move(*study));
    }
    return studies;
}

Expected<void> Store::set_study_cell(const StudyCellRecord& cell) {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(db_,
                                   "INSERT OR REPLACE INTO study_cells (study_id, cell, task, model, strategy, seed, "
                                   "run_id) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                                   path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, cell.study_id)
        .bind_text(2, cell.cell)
        .bind_text(3, cell.task)
        .bind_text(4, cell.model)
        .bind_text(5, cell.strategy)
        .bind_int(6, cell.seed)
        .bind_opt_text(7, cell.run_id);
    const std::string what = fmt::format("cannot record cell '{}' of study '{}'", cell.cell, cell.study_id);
    if (auto ok = stmt->run(what); !ok) return ok;
    auto touch = Statement::prepare(db_, "UPDATE studies SET updated_at = ?2 WHERE study_id = ?1", path_);
    if (!touch) return touch.error();
    touch->bind_text(1, cell.study_id).bind_text(2, utc_now_iso8601());
    return touch->run(what);
}

Expected<std::vector<StudyCellRecord>> Store::load_study_cells(const std::string& study_id) {
    ConnectionLock lock(db_);
    auto stmt = Statement::prepare(db_,
                                   "SELECT study_id, cell, task, model, strategy, seed, run_id FROM study_cells "
                                   "WHERE study_id = ?1 ORDER BY cell",
                                   path_);
    if (!stmt) return stmt.error();
    stmt->bind_text(1, study_id);
    std::vector<StudyCellRecord> cells;
    for (;;) {
        auto row = stmt->step(fmt::format("cannot load the cells of study '{}'", study_id));
        if (!row) return row.error();
        if (!*row) break;
        StudyCellRecord cell;
        cell.study_id = stmt->text(0);
        cell.cell = stmt->text(1);
        cell.task = stmt->text(2);
        cell.model = stmt->text(3);
        cell.strategy = stmt->text(4);
        cell.seed = stmt->int64(5);
        cell.run_id = stmt->opt_text(6);
        cells.push_back(std::move(cell));
    }
    return cells;
}

}  // namespace kevo
