// Small RAII helpers over the sqlite3 C API, shared by the results store and the golden store.
// Every error is one line that starts with the file's path, raised through the caller's `Fail`
// (so each store throws its own error type).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "gauntlet/base/error.h"

struct sqlite3;
struct sqlite3_stmt;

namespace gauntlet::sqlite {

// Throws the caller's error type with `message` and the exit code it carries (Note [Error
// family]); never returns.
using Fail = void (*)(const std::string& message, int exit_code);

// The exit code for a failed SQLite call: kExitEnvironment when the machine failed (disk full,
// I/O error, locked past the busy timeout, read-only file, out of memory), else kExitBadInput
// (a damaged or foreign file, a schema that is not ours).
int exit_code_of(int sqlite_rc);

// "path: what", through `fail`, with `exit_code`.
[[noreturn]] void fail(Fail fail, const std::string& path, const std::string& what, int exit_code = kExitBadInput);
// "PATH: WHAT: SQLite's message"; a damaged file is named damaged, with how to recover, whatever
// the step (Note [Damage named as damage] in sqlite.cpp); the exit code of the connection's last
// error.
[[noreturn]] void fail(Fail fail, sqlite3* db, const std::string& path, const std::string& what);
// Runs SQL that returns no rows (several statements allowed).
void exec(Fail fail, sqlite3* db, const std::string& path, const std::string& sql);

// Bytes bound as a BLOB (a plain string_view binds as TEXT).
struct Blob {
  std::string_view bytes;
};

// Text bound without a copy: it must stay alive and unchanged until the statement has run
// (exec() or reset()).
struct Static {
  std::string_view text;
};

// A prepared statement whose parameters are bound, and whose columns are read, in order.
class Stmt {
 public:
  Stmt(Fail fail, sqlite3* db, const std::string& path, std::string_view sql);
  ~Stmt();
  Stmt(const Stmt&) = delete;
  Stmt& operator=(const Stmt&) = delete;

  const std::string& path() const { return path_; }

  template <typename... Ts>
  Stmt& bind(const Ts&... values) {
    (bind_one(values), ...);
    return *this;
  }
  bool step();   // true while a row is ready to read
  void exec();   // runs a statement that returns no rows, then readies it for the next bind()
  void reset();  // readies a statement for the next bind() (and releases its read lock)

  std::int64_t int64();
  double real();  // SQLite has no NaN: NULL reads back as NaN (binding NaN stores NULL)
  std::string text();
  std::string blob();  // a BLOB's bytes ("" for NULL)
  // The same without a copy: valid until the next step() or reset().
  std::string_view text_view();
  std::string_view blob_view();
  void skip() { ++column_; }

 private:
  // No bool overload: a string literal would convert to bool before string_view. Bools bind as int.
  void bind_one(int v);
  void bind_one(std::int64_t v);
  void bind_one(double v);
  void bind_one(std::string_view v);
  void bind_one(const std::string& v) { bind_one(std::string_view(v)); }
  void bind_one(const char* v) { bind_one(std::string_view(v)); }
  void bind_one(const Blob& v);
  void bind_one(const Static& v);
  void check(int rc) const;

  Fail fail_;
  sqlite3* db_;
  std::string path_;
  sqlite3_stmt* stmt_ = nullptr;
  int param_ = 0;
  int column_ = 0;
};

// BEGIN IMMEDIATE takes the write lock up front, so a busy writer is waited for (busy_timeout)
// rather than failing on a lock upgrade halfway through. Rolls back unless committed.
class Transaction {
 public:
  Transaction(Fail fail, sqlite3* db, const std::string& path);
  ~Transaction();
  Transaction(const Transaction&) = delete;
  Transaction& operator=(const Transaction&) = delete;
  void commit();

 private:
  Fail fail_;
  sqlite3* db_;
  std::string path_;
  bool open_ = true;
};

int user_version(Fail fail, sqlite3* db, const std::string& path);
// meta.application of a database, read only; "" when the file has no such table, column or row.
std::string application_of(sqlite3* db);

// Note [Versioned files]: steps[v] takes a file from version v to v + 1. migrate() runs the
// missing steps in one transaction, sets PRAGMA user_version and meta.<version_key>, and raises
// `newer` (a message) for a file newer than `target`. Checked before taking the write lock, so
// opening an up-to-date file never waits on a writer; checked again under the lock, where another
// process may have migrated it meanwhile.
// `what` names the version in messages: "database schema", "golden store layout".
void migrate(Fail fail, sqlite3* db, const std::string& path, const char* const* steps, int target,
             const std::string& version_key, const std::string& what);
// Raises "<what> version N is newer than this gauntlet (target)" for a file newer than `target`.
void check_not_newer(Fail fail, const std::string& path, int version, int target, const std::string& what);
// Reads the schema, raising `not_sqlite` (and that its header may be damaged) for a file that is
// not a SQLite database, "damaged database" for one SQLite finds damaged; true for an
// empty one (no objects, user_version 0). Reads only: never writes into a file that is not ours.
bool is_empty(Fail fail, sqlite3* db, const std::string& path, const std::string& not_sqlite);

// Opens a results database read-only for tools that read whole runs (compare, report, dashboard):
// a 10 s busy timeout and pages mapped rather than copied in. One-line errors through `fail`:
// "PATH: no such database", "PATH: cannot open database: WHY", "PATH: not a Gauntlet database".
// The caller owns the handle (sqlite3_close).
// The schema of results databases (store.h's kSchemaVersion, which store.cpp asserts equal): the
// read-only readers accept this version only, as `show` does (Store::open), so that every command
// refuses a newer file, and an older one until `run` has migrated it.
inline constexpr int kResultsSchemaVersion = 12;
sqlite3* open_results_readonly(Fail fail, const std::string& path);

// Case ids are XXH64 values; SQLite integers are signed, so ids are stored bit-cast.
std::int64_t as_signed(std::uint64_t id);
std::uint64_t as_unsigned(std::int64_t id);

}  // namespace gauntlet::sqlite
