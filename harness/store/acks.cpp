#include "gauntlet/store/acks.h"

#include <sqlite3.h>

#include <memory>

namespace gauntlet {

// Note [Acknowledgements]: `gauntlet triage ack` records that a regression was looked at, by
// whom, when and why, in the table `acks` of the results database, so that it travels with the
// runs it is about (a CI artifact, a shared file) and survives every restart. The table is made
// by the first ack, not by a schema migration: a database nobody triaged has none, reads as "no
// acks", and older gauntlets open a triaged database unchanged (they ignore the table). An unack
// marks the row removed (who, when) instead of deleting it: the record of decisions stays. What an
// ack does to a comparison is gauntlet/analysis/triage.h's.

namespace {

constexpr const char* kCreate = R"(CREATE TABLE IF NOT EXISTS acks(
  id INTEGER PRIMARY KEY,
  subject TEXT NOT NULL,
  change TEXT NOT NULL,
  signature TEXT NOT NULL DEFAULT '',
  backend TEXT NOT NULL,
  note TEXT NOT NULL,
  by TEXT NOT NULL,
  at TEXT NOT NULL,
  until TEXT NOT NULL DEFAULT '',
  run_id INTEGER NOT NULL,
  moved INTEGER NOT NULL,
  worst REAL,
  removed_at TEXT NOT NULL DEFAULT '',
  removed_by TEXT NOT NULL DEFAULT ''
))";

struct Close {
  void operator()(sqlite3* db) const { sqlite3_close(db); }
};
using Db = std::unique_ptr<sqlite3, Close>;

// A Gauntlet database of this schema, checked as every reader checks it, then opened for writing.
Db open_writable(const std::string& path, sqlite::Fail fail) {
  sqlite3_close(sqlite::open_results_readonly(fail, path));
  sqlite3* db = nullptr;
  if (sqlite3_open_v2(path.c_str(), &db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, nullptr) != SQLITE_OK) {
    const std::string why = db ? sqlite3_errmsg(db) : "out of memory";
    sqlite3_close(db);
    sqlite::fail(fail, path, "cannot open database for writing: " + why);
  }
  sqlite3_busy_timeout(db, 10000);
  Db out(db);
  sqlite::exec(fail, db, path, kCreate);
  return out;
}

}  // namespace

std::vector<Ack> read_acks(const std::string& path, sqlite::Fail fail) {
  const Db db(sqlite::open_results_readonly(fail, path));
  std::vector<Ack> out;
  {
    sqlite::Stmt has(fail, db.get(), path, "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'acks'");
    if (!has.step()) return out;
  }
  sqlite::Stmt q(
      fail, db.get(), path,
      "SELECT id, subject, change, signature, backend, note, by, at, until, run_id, moved, worst, removed_at, "
      "removed_by FROM acks ORDER BY id");
  while (q.step()) {
    Ack a;
    a.id = q.int64();
    a.subject = q.text();
    a.change = q.text();
    a.signature = q.text();
    a.backend = q.text();
    a.note = q.text();
    a.by = q.text();
    a.at = q.text();
    a.until = q.text();
    a.run_id = q.int64();
    a.moved = q.int64();
    a.worst = q.real();
    a.removed_at = q.text();
    a.removed_by = q.text();
    out.push_back(std::move(a));
  }
  return out;
}

std::int64_t add_ack(const std::string& path, const Ack& a, sqlite::Fail fail) {
  const Db db = open_writable(path, fail);
  sqlite::Stmt q(fail, db.get(), path,
                 "INSERT INTO acks(subject, change, signature, backend, note, by, at, until, run_id, moved, worst) "
                 "VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)");
  q.bind(a.subject, a.change, a.signature, a.backend, a.note, a.by, a.at, a.until, a.run_id, a.moved, a.worst);
  q.exec();
  return sqlite3_last_insert_rowid(db.get());
}

bool remove_ack(const std::string& path, std::int64_t id, const std::string& by, const std::string& at,
                sqlite::Fail fail) {
  const Db db = open_writable(path, fail);
  sqlite::Stmt q(fail, db.get(), path,
                 "UPDATE acks SET removed_at = ?, removed_by = ? WHERE id = ? AND removed_at = ''");
  q.bind(at, by, id);
  q.exec();
  return sqlite3_changes(db.get()) > 0;
}

}  // namespace gauntlet
