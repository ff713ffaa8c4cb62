// What the store's source files share and nothing else sees: the per-call connection lock and the
// JSON-as-text column helpers.
#pragma once

#include <sqlite3.h>

#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "core/expected.hpp"
#include "store/sqlite_statement.hpp"

namespace kevo::store_internal {

// Holds the connection's own (recursive) mutex for a whole Store call, so that calls from
// several threads do not interleave their statements or read each other's error messages.
class ConnectionLock {
public:
    explicit ConnectionLock(sqlite3* db) : mutex_(sqlite3_db_mutex(db)) { sqlite3_mutex_enter(mutex_); }
    ~ConnectionLock() { sqlite3_mutex_leave(mutex_); }
    ConnectionLock(const ConnectionLock&) = delete;
    ConnectionLock& operator=(const ConnectionLock&) = delete;

private:
    sqlite3_mutex* mutex_;
};

// JSON is stored as text; a null document as SQL NULL. Invalid UTF-8 (compiler logs can hold
// any bytes) is replaced rather than thrown on.
std::optional<std::string> json_text(const nlohmann::json& value);

// The JSON document in `column` (null for SQL NULL); `what` names it in the error.
Expected<nlohmann::json> parse_json_column(const Statement& stmt, int column, const std::string& path,
                                           std::string_view what);

}  // namespace kevo::store_internal
