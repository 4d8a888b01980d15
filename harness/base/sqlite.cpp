#include "gauntlet/base/sqlite.h"

#include <sqlite3.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <limits>

namespace gauntlet::sqlite {

int exit_code_of(int sqlite_rc) {
  switch (sqlite_rc & 0xff) {  // the primary code of an extended one
    case SQLITE_FULL:
    case SQLITE_IOERR:
    case SQLITE_BUSY:
    case SQLITE_LOCKED:
    case SQLITE_READONLY:
    case SQLITE_NOMEM:
    case SQLITE_PROTOCOL:
      return kExitEnvironment;
    default:
      return kExitBadInput;
  }
}

void fail(Fail raise, const std::string& path, const std::string& what, int exit_code) {
  std::string message = path + ": " + what;
  std::replace_if(
      message.begin(), message.end(), [](char c) { return c == '\n' || c == '\r'; }, ' ');
  raise(message, exit_code);
  std::abort();  // a Fail never returns
}

// Note [Damage named as damage]: whatever a command was doing when SQLite found the file damaged
// (a page that does not parse, a header that is not SQLite's), the user reads that the database is
// damaged and how to recover, never "not a Gauntlet database" or the step it failed in alone.
constexpr const char* kRecover = "restore it from a copy, or recover what it holds with sqlite3's .recover";
constexpr const char* kNotSqlite = "not a SQLite database";
constexpr const char* kHeader = ", or one whose header is damaged (if it held data, restore it from a copy)";

void fail(Fail f, sqlite3* db, const std::string& path, const std::string& what) {
  const int rc = sqlite3_extended_errcode(db);
  if ((rc & 0xff) == SQLITE_CORRUPT) {
    fail(f, path, "damaged database (" + what + ": " + sqlite3_errmsg(db) + "); " + kRecover);
  }
  if ((rc & 0xff) == SQLITE_NOTADB) fail(f, path, std::string(kNotSqlite) + kHeader);
  fail(f, path, what + ": " + sqlite3_errmsg(db), exit_code_of(rc));
}

// The first read of the schema is where SQLite notices a file is not a database, or a damaged one.
void check_readable(Fail f, sqlite3* db, const std::string& path, const std::string& not_sqlite) {
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) == SQLITE_OK) return;
  if ((sqlite3_extended_errcode(db) & 0xff) == SQLITE_NOTADB) fail(f, path, not_sqlite + kHeader);
  fail(f, db, path, "cannot read the schema");
}

void exec(Fail f, sqlite3* db, const std::string& path, const std::string& sql) {
  if (sqlite3_exec(db, sql.c_str(), nullptr, nullptr, nullptr) != SQLITE_OK) {
    const auto begin = std::min(sql.find_first_not_of(" \n"), sql.size());
    const std::string verb = sql.substr(begin, sql.find_first_of(" (\n", begin) - begin);
    fail(f, db, path, "cannot run " + verb);
  }
}

Stmt::Stmt(Fail f, sqlite3* db, const std::string& path, std::string_view sql) : fail_(f), db_(db), path_(path) {
  if (sqlite3_prepare_v2(db, sql.data(), static_cast<int>(sql.size()), &stmt_, nullptr) != SQLITE_OK) {
    fail(fail_, db, path, "cannot prepare statement");
  }
}

Stmt::~Stmt() { sqlite3_finalize(stmt_); }

bool Stmt::step() {
  const int rc = sqlite3_step(stmt_);
  if (rc == SQLITE_ROW) {
    column_ = 0;
    return true;
  }
  if (rc != SQLITE_DONE) fail(fail_, db_, path_, "statement failed");
  return false;
}

void Stmt::exec() {
  while (step()) {
  }
  reset();
}

void Stmt::reset() {
  sqlite3_reset(stmt_);
  sqlite3_clear_bindings(stmt_);
  param_ = 0;
}

std::int64_t Stmt::int64() { return sqlite3_column_int64(stmt_, column_++); }

double Stmt::real() {
  const int c = column_++;
  if (sqlite3_column_type(stmt_, c) == SQLITE_NULL) return std::numeric_limits<double>::quiet_NaN();
  return sqlite3_column_double(stmt_, c);
}

std::string Stmt::text() {
  const int c = column_++;
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c))) : "";
}

std::string Stmt::blob() {
  const int c = column_++;
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, c));
  return p ? std::string(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c))) : "";
}

std::string_view Stmt::text_view() {
  const int c = column_++;
  const auto* p = reinterpret_cast<const char*>(sqlite3_column_text(stmt_, c));
  return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c))) : std::string_view();
}

std::string_view Stmt::blob_view() {
  const int c = column_++;
  const auto* p = static_cast<const char*>(sqlite3_column_blob(stmt_, c));
  return p ? std::string_view(p, static_cast<std::size_t>(sqlite3_column_bytes(stmt_, c))) : std::string_view();
}

void Stmt::bind_one(int v) { check(sqlite3_bind_int(stmt_, ++param_, v)); }
void Stmt::bind_one(std::int64_t v) { check(sqlite3_bind_int64(stmt_, ++param_, v)); }
void Stmt::bind_one(double v) { check(sqlite3_bind_double(stmt_, ++param_, v)); }
void Stmt::bind_one(std::string_view v) {
  check(sqlite3_bind_text64(stmt_, ++param_, v.data(), v.size(), SQLITE_TRANSIENT, SQLITE_UTF8));
}
void Stmt::bind_one(const Blob& v) {
  check(sqlite3_bind_blob64(stmt_, ++param_, v.bytes.data(), v.bytes.size(), SQLITE_TRANSIENT));
}
void Stmt::bind_one(const Static& v) {
  check(sqlite3_bind_text64(stmt_, ++param_, v.text.data(), v.text.size(), SQLITE_STATIC, SQLITE_UTF8));
}
void Stmt::check(int rc) const {
  if (rc != SQLITE_OK) fail(fail_, db_, path_, "cannot bind parameter " + std::to_string(param_));
}

Transaction::Transaction(Fail f, sqlite3* db, const std::string& path) : fail_(f), db_(db), path_(path) {
  exec(f, db, path, "BEGIN IMMEDIATE");
}
Transaction::~Transaction() {
  if (open_) sqlite3_exec(db_, "ROLLBACK", nullptr, nullptr, nullptr);
}
void Transaction::commit() {
  exec(fail_, db_, path_, "COMMIT");
  open_ = false;
}

int user_version(Fail f, sqlite3* db, const std::string& path) {
  Stmt query(f, db, path, "PRAGMA user_version");
  return query.step() ? static_cast<int>(query.int64()) : 0;
}

sqlite3* open_results_readonly(Fail fail_with, const std::string& path) {
  std::error_code ec;
  if (const auto st = std::filesystem::status(path, ec); !std::filesystem::exists(st)) {
    fail(fail_with, path, "no such database");
  } else if (!std::filesystem::is_regular_file(st)) {
    fail(fail_with, path,
         std::filesystem::is_directory(st) ? "a folder, not a database file"
                                           : "not a regular file (a FIFO or a device)");
  }
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READONLY | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    fail(fail_with, path, "cannot open database: " + why);
  }
  sqlite3_busy_timeout(db, 10000);
  // Reading every row of many runs through read() spends a third of the time copying pages.
  sqlite3_exec(db, "PRAGMA mmap_size = 4294967296", nullptr, nullptr, nullptr);
  if (sqlite3_exec(db, "SELECT count(*) FROM sqlite_master", nullptr, nullptr, nullptr) != SQLITE_OK) {
    const int rc = sqlite3_extended_errcode(db);
    const std::string why = sqlite3_errmsg(db);
    sqlite3_close(db);
    if ((rc & 0xff) == SQLITE_NOTADB) fail(fail_with, path, std::string(kNotSqlite) + kHeader);
    if ((rc & 0xff) == SQLITE_CORRUPT) fail(fail_with, path, "damaged database (" + why + "); " + kRecover);
    fail(fail_with, path, "cannot read the schema: " + why, exit_code_of(rc));
  }
  if (application_of(db) != "gauntlet") {
    sqlite3_close(db);
    fail(fail_with, path, "not a Gauntlet database");
  }
  int version = -1;
  if (sqlite3_stmt* q = nullptr; sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, nullptr) == SQLITE_OK) {
    if (sqlite3_step(q) == SQLITE_ROW) version = sqlite3_column_int(q, 0);
    sqlite3_finalize(q);
  }
  if (version != kResultsSchemaVersion) {
    sqlite3_close(db);
    fail(fail_with, path,
         "database schema version " + std::to_string(version) +
             (version > kResultsSchemaVersion ? " is newer than this gauntlet (" : " is older than this gauntlet (") +
             std::to_string(kResultsSchemaVersion) + ")" +
             (version > kResultsSchemaVersion ? "" : "; open it for writing to migrate (gauntlet run)"));
  }
  return db;
}

std::string application_of(sqlite3* db) {
  // Prepared by hand: in a foreign database, meta or its columns may not exist ("not ours").
  sqlite3_stmt* app = nullptr;
  std::string application;
  if (sqlite3_prepare_v2(db, "SELECT value FROM meta WHERE key = 'application'", -1, &app, nullptr) == SQLITE_OK &&
      sqlite3_step(app) == SQLITE_ROW && sqlite3_column_text(app, 0)) {
    application = reinterpret_cast<const char*>(sqlite3_column_text(app, 0));
  }
  sqlite3_finalize(app);
  return application;
}

void check_not_newer(Fail f, const std::string& path, int version, int target, const std::string& what) {
  if (version > target) {
    fail(
        f, path,
        what + " version " + std::to_string(version) + " is newer than this gauntlet (" + std::to_string(target) + ")");
  }
}

bool is_empty(Fail f, sqlite3* db, const std::string& path, const std::string& not_sqlite) {
  check_readable(f, db, path, not_sqlite);
  Stmt objects(f, db, path, "SELECT count(*) FROM sqlite_master");
  objects.step();
  return objects.int64() == 0 && user_version(f, db, path) == 0;
}

void migrate(Fail f, sqlite3* db, const std::string& path, const char* const* steps, int target,
             const std::string& version_key, const std::string& what) {
  if (user_version(f, db, path) == target) return;
  Transaction tx(f, db, path);
  const int version = user_version(f, db, path);  // again, under the write lock
  check_not_newer(f, path, version, target, what);
  if (version == target) return;
  for (int v = version; v < target; ++v) exec(f, db, path, steps[v]);
  exec(f, db, path, "PRAGMA user_version = " + std::to_string(target));
  Stmt(f, db, path, "INSERT OR REPLACE INTO meta(key, value) VALUES(?, ?)")
      .bind(version_key, std::to_string(target))
      .exec();
  tx.commit();
}

std::int64_t as_signed(std::uint64_t id) {
  std::int64_t s = 0;
  std::memcpy(&s, &id, sizeof s);
  return s;
}
std::uint64_t as_unsigned(std::int64_t id) {
  std::uint64_t u = 0;
  std::memcpy(&u, &id, sizeof u);
  return u;
}

}  // namespace gauntlet::sqlite
