// A prepared SQLite statement (RAII) with typed bind and column helpers. It is the only way the
// store runs SQL that carries values, so values are always bound, never spliced into SQL text.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/expected.hpp"

struct sqlite3;
struct sqlite3_stmt;

namespace kevo {

class Statement {
public:
    // `path` only labels error messages ("<path>: <what>: <SQLite's message>").
    static Expected<Statement> prepare(sqlite3* db, std::string_view sql, const std::string& path);

    Statement(Statement&& other) noexcept;
    Statement& operator=(Statement&& other) noexcept;
    Statement(const Statement&) = delete;
    Statement& operator=(const Statement&) = delete;
    ~Statement();

    // Parameters are 1-based. A failed bind is remembered and reported by the next step(), so
    // call sites can bind a whole row without checking each value.
    Statement& bind_text(int index, std::string_view text);
    Statement& bind_int(int index, int64_t value);
    Statement& bind_real(int index, double value);  // SQLite stores NaN as NULL
    Statement& bind_null(int index);
    Statement& bind_opt_int(int index, const std::optional<int64_t>& value);
    Statement& bind_opt_real(int index, const std::optional<double>& value);
    // NULL for an empty optional, else the text.
    Statement& bind_opt_text(int index, const std::optional<std::string>& text);

    // One step: true when a row is ready, false when the statement is done. `what` describes
    // the operation for the error message.
    Expected<bool> step(std::string_view what);
    // Steps to the end, for statements that return no rows.
    Expected<void> run(std::string_view what);

    bool is_null(int column) const;
    std::string text(int column) const;  // "" for NULL; embedded NULs kept
    int64_t int64(int column) const;     // 0 for NULL
    double real(int column) const;       // NaN for NULL (how a NaN comes back)
    std::optional<int64_t> opt_int(int column) const;
    std::optional<double> opt_real(int column) const;
    std::optional<std::string> opt_text(int column) const;

private:
    Statement(sqlite3* db, sqlite3_stmt* stmt, const std::string& path)
        : db_(db), stmt_(stmt), path_(&path) {}
    void note_bind(int rc, int index);

    sqlite3* db_ = nullptr;
    sqlite3_stmt* stmt_ = nullptr;
    const std::string* path_ = nullptr;
    std::string bind_error_;
};

// Runs fixed SQL without values (DDL, BEGIN/COMMIT, pragmas with constant arguments).
Expected<void> exec_sql(sqlite3* db, const char* sql, const std::string& path, std::string_view what);

}  // namespace kevo
