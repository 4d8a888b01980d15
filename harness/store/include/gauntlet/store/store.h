// The SQLite store (docs/database.md). One writer; WAL; batched transactions; schema versioned
// with PRAGMA user_version and migrated forward on open. No torch here.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <stdexcept>
#include <string>
#include <unordered_set>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/error.h"
#include "gauntlet/base/outcome.h"

struct sqlite3;

namespace gauntlet {

// A store problem a user can act on (unreadable file, not a Gauntlet database, newer schema).
class StoreError : public Error {
 public:
  using Error::Error;
};

inline constexpr int kSchemaVersion = 12;

// What a run records about itself and its environment.
struct RunInfo {
  std::int64_t id = 0;  // assigned by the store
  std::string release, build_id, backend, backend_version, torch_version;
  std::string host, cpu, blas, build_config;
  int threads = 0;
  std::string suite, filter, shard;
  std::string started_at, finished_at;  // ISO 8601 UTC
  std::string config_json;
  std::string gauntlet_version;
  // What an hour of one device costs (USD, say), for cost per million samples: `--price-per-
  // device-hour` of run and bench. None when not given.
  std::optional<double> price_per_device_hour;
};

struct StoredResult {
  std::int64_t run_id = 0;
  std::uint64_t case_id = 0;
  Outcome outcome;  // outcome.key filled from the cases table
};

class Store {
 public:
  // ReadWrite verifies an existing file first (Note [Verified on open] in store.cpp);
  // ReadWriteUnverified skips that check (--skip-db-check).
  enum class OpenMode { ReadOnly, ReadWrite, ReadWriteUnverified };
  // Opens (ReadWrite: creates) the database; throws StoreError with a one-line message naming
  // the file when it cannot be read, is not SQLite, is not a Gauntlet database, is newer, or
  // (ReadWrite) fails SQLite's quick_check.
  static std::unique_ptr<Store> open(const std::string& path, OpenMode mode);
  // How a writing command opens an existing database: verified unless --skip-db-check.
  static OpenMode write_mode(bool skip_db_check) {
    return skip_db_check ? OpenMode::ReadWriteUnverified : OpenMode::ReadWrite;
  }
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  std::int64_t begin_run(RunInfo info);  // inserts, returns the id
  void finish_run(std::int64_t run_id, const std::string& finished_at);

  // Buffers results and writes them in one transaction per `batch` results (and on flush()).
  void add_result(std::int64_t run_id, const CaseKey& key, const Outcome& outcome);
  // The same, given the key's text (key.str(), which the catalog keeps with each case).
  void add_result(std::int64_t run_id, const CaseKey& key, std::string text, Outcome outcome);
  // Inserts the cases a run is about to store results for, in one transaction, so that storing a
  // result is then one insert, not two (what the orchestrator does before a run).
  void add_cases(const std::vector<const CaseKey*>& keys);
  void flush();
  // Drops the results not yet written (after flush() failed for good: Note [Stopped by the
  // environment] in core/session/session.cpp) and returns how many there were.
  std::size_t discard_pending();

  // The keys of the cases that have a (final) result in the run: what a resume skips.
  std::set<std::string> finished_keys(std::int64_t run_id) const;
  void reopen_run(std::int64_t run_id);  // a resumed run is unfinished again until it ends
  void update_run(const RunInfo& info);  // every field of run info.id (merge)
  std::vector<RunInfo> runs() const;
  std::optional<RunInfo> run(std::int64_t id) const;
  std::optional<std::int64_t> latest_run() const;
  std::vector<StoredResult> results(std::int64_t run_id) const;
  std::optional<StoredResult> result(std::int64_t run_id, const std::string& key) const;
  std::map<Status, std::int64_t> status_counts(std::int64_t run_id) const;
  int schema_version() const;

  void set_batch_size(int n) { batch_ = n; }

 private:
  explicit Store(sqlite3* db, std::string path);
  void migrate();
  sqlite3* db_;
  std::string path_;
  int batch_ = 4096;
  struct Pending {
    std::int64_t run_id;
    std::int64_t case_id;
    std::string text;              // the case key
    std::unique_ptr<CaseKey> key;  // only for a case this connection has not written yet
    Outcome outcome;
  };
  std::vector<Pending> pending_;
  std::unordered_set<std::int64_t> known_cases_;  // case rows this connection has written
  std::unordered_set<std::int64_t> known_runs_;   // runs this connection has seen exist
};

}  // namespace gauntlet
