// The store's schema as numbered migrations, tracked in PRAGMA user_version: version N's
// migration brings a version N-1 database to N, so later versions can add tables and columns
// without losing the runs already recorded.
#pragma once

#include <string>

#include "core/expected.hpp"

struct sqlite3;

namespace kevo {

int latest_schema_version();

// Applies every migration the database lacks, in one write transaction (concurrent openers
// wait for it and then find nothing left to do). Refuses a database newer than this build.
Expected<void> migrate_schema(sqlite3* db, const std::string& path);

// For a read-only connection: the schema must already be this build's (nothing is written).
Expected<void> require_current_schema(sqlite3* db, const std::string& path);

}  // namespace kevo
