// Prepared-statement wrapper over the SQLite C API (see sqlite_statement.hpp).
#include "store/sqlite_statement.hpp"

#include <sqlite3.h>

#include <cmath>
#include <limits>
#include <utility>

#include <fmt/format.h>

namespace kevo {

Expected<Statement> Statement::prepare(sqlite3* db, std::string_view sql, const std::string& path) {
    sqlite3_stmt* stmt = nullptr;
    const int rc = sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt, nullptr);
    if (rc != SQLITE_OK) {
        sqlite3_finalize(stmt);
        return make_error(fmt::format("{}: cannot prepare SQL: {}", path, sqlite3_errmsg(db)));
    }
    assert(stmt != nullptr && "prepared an empty SQL string");
    return Statement(db, stmt, path);
}

Statement::Statement(Statement&& other) noexcept
    : db_(other.db_), stmt_(std::exchange(other.stmt_, nullptr)), path_(other.path_),
      bind_error_(std::move(other.bind_error_)) {}

Statement& Statement::operator=(Statement&& other) noexcept {
    if (this != &other) {
        sqlite3_finalize(stmt_);
        db_ = other.db_;
        stmt_ = std::exchange(other.stmt_, nullptr);
        path_ = other.path_;
        bind_error_ = std::move(other.bind_error_);
    }
    return *this;
}

Statement::~Statement() { sqlite3_finalize(stmt_); }

void Statement::note_bind(int rc, int index) {
    if (rc != SQLITE_OK && bind_error_.empty())
        bind_error_ = fmt::format("parameter {}: {}", index, sqlite3_errmsg(db_));
}

Statement& Statement::bind_text(int index, std::string_view text) {
    // SQLITE_TRANSIENT: SQLite copies the bytes, so temporaries are safe to pass.
    note_bind(sqlite3_bind_text64(stmt_, index, text.data(), text.size(), SQLITE_TRANSIENT, SQLITE_UTF8),
              index);
    return *this;
}

Statement& Statement::bind_int(int index, int64_t value) {
    note_bind(sqlite3_bind_int64(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind_real(int index, double value) {
    note_bind(sqlite3_bind_double(stmt_, index, value), index);
    return *this;
}

Statement& Statement::bind_null(int index) {
    note_bind(sqlite3_bind_null(stmt_, index), index);
    return *this;
}

Statement& Statement::bind_opt_int(int index, const std::optional<int64_t>& value) {
    return value ? bind_int(index, *value) : bind_null(index);
}

Statement& Statement::bind_opt_real(int index, const std::optional<double>& value) {
    return value ? bind_real(index, *value) : bind_null(index);
}

Statement& Statement::bind_opt_text(int index, const std::optional<std::string>& text) {
    return text ? bind_text(index, *text) : bind_null(index);
}

Expected<bool> Statement::step(std::string_view what) {
    if (!bind_error_.empty())
        return make_error(fmt::format("{}: {}: cannot bind {}", *path_, what, bind_error_));
    const int rc = sqlite3_step(stmt_);
    if (rc == SQLITE_ROW) return true;
    if (rc == SQLITE_DONE) return false;
    return make_error(fmt::format("{}: {}: {}", *path_, what, sqlite3_errmsg(db_)));
}

Expected<void> Statement::run(std::string_view what) {
    for (;;) {
        auto row = step(what);
        if (!row) return row.error();
        if (!*row) return {};
    }
}

bool Statement::is_null(int column) const { return sqlite3_column_type(stmt_, column) == SQLITE_NULL; }

std::string Statement::text(int column) const {
    const auto* data = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, column));
    // column_bytes must follow column_text: it reports the size of the text conversion.
    const int bytes = sqlite3_column_bytes(stmt_, column);
    return data ? std::string(data, static_cast<size_t>(bytes)) : std::string();
}

int64_t Statement::int64(int column) const { return sqlite3_column_int64(stmt_, column); }

double Statement::real(int column) const {
    return is_null(column) ? std::numeric_limits<double>::quiet_NaN() : sqlite3_column_double(stmt_, column);
}

std::optional<int64_t> Statement::opt_int(int column) const {
    if (is_null(column)) return std::nullopt;
    return int64(column);
}

std::optional<double> Statement::opt_real(int column) const {
    if (is_null(column)) return std::nullopt;
    return sqlite3_column_double(stmt_, column);
}

std::optional<std::string> Statement::opt_text(int column) const {
    if (is_null(column)) return std::nullopt;
    return text(column);
}

Expected<void> exec_sql(sqlite3* db, const char* sql, const std::string& path, std::string_view what) {
    char* message = nullptr;
    if (sqlite3_exec(db, sql, nullptr, nullptr, &message) != SQLITE_OK) {
        std::string text = message ? message : sqlite3_errmsg(db);
        sqlite3_free(message);
        return make_error(fmt::format("{}: {}: {}", path, what, text));
    }
    return {};
}

}  // namespace kevo
