// The system's SQLite (Debian/Ubuntu: libsqlite3-dev; macOS: in the SDK), used by the server's
// own thin wrapper (Sources/LinkRelayServer/Storage/SQLiteDatabase.swift).
#include <sqlite3.h>
