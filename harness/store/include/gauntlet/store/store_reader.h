// Read-only access to a results database for the commands that analyse stored runs: compare,
// report --weekly and dashboard (merge and show read through Store). The SQL on `results` lives in
// the store target only (Note [One reader of results] in harness/store/store_reader.cpp). No torch.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gauntlet/base/outcome.h"
#include "gauntlet/base/sqlite.h"

struct sqlite3;

namespace gauntlet {

// A run as the analysis commands name it: what a release history is made of.
struct RunRef {
  std::int64_t id = 0;
  std::string release, backend, backend_version, suite, started_at;
  std::optional<double> price_per_device_hour;  // runs.price_per_device_hour (schema 7)
};

// A row of the cases table (the key's parts as stored).
struct CaseRow {
  std::uint64_t id = 0;
  std::string key, kind, target, dtype, mode;
};

// One result of a scan: its run, its case, then the columns the scan named, read in that order.
// Texts and blobs are valid until the next row.
class ResultRow {
 public:
  std::int64_t run_id() const { return run_; }
  std::uint64_t case_id() const { return case_; }
  Status status();          // a status column; an unknown name is a one-line error naming the run
  double real();            // NULL reads as NaN
  std::int64_t int64();     // NULL reads as 0
  std::string_view text();  // NULL reads as ""
  std::string_view blob();  // NULL reads as ""

 private:
  friend class StoreReader;
  ResultRow(sqlite::Stmt& stmt, sqlite::Fail fail) : stmt_(stmt), fail_(fail) {}
  sqlite::Stmt& stmt_;
  sqlite::Fail fail_;
  std::int64_t run_ = 0;
  std::uint64_t case_ = 0;
};

// What a scan reads: the results of `runs`, in the order they lie in the file, each with the
// `columns` named (columns of `results`: the field table's, gauntlet/base/outcome_fields.h).
struct ResultScan {
  std::vector<std::int64_t> runs;
  std::vector<std::string_view> columns;
  // Told how many rows are coming before the first (to reserve), when set.
  std::function<void(std::int64_t rows)> on_size;
};

// Note [Result facts]: one stored result as compare and the dashboard judge it, its fields read by
// name inside the store, so that no analysis code holds a column list or reads columns by
// position. Numbers the database holds as NULL read as NaN (peak_mem_bytes as 0); texts are ""
// when NULL and valid until the next result.
struct ResultFacts {
  std::int64_t run_id = 0;
  std::uint64_t case_id = 0;
  Status status = Status::Pass;
  double max_abs_err = 0, max_rel_err = 0, atol = 0;
  double first_us = 0, median_us = 0, sim_time_us = 0, compile_ms = 0, backend_ms = 0;
  double graph_breaks = 0, recompiles = 0, work_items = 0;
  double cache_hits = 0;  // NaN: no compiler cache consulted (Note [Compiler cache])
  std::int64_t peak_mem_bytes = 0;
  std::string_view fallback_ops;     // a JSON list of op names ("[]" for none)
  std::string_view compile_reasons;  // the `reason` of a result with graph breaks or recompiles, "" otherwise
  std::string_view samples;          // with FactScan::samples (gauntlet/base/samples.h)
  std::string_view error;            // with FactScan::errors
  std::string_view stage;            // with FactScan::errors (Note [Failing stage])
};

// What scan_facts reads: the results of `runs`, in the order they lie in the file; the samples and
// the error texts (the large fields) only when asked.
struct FactScan {
  std::vector<std::int64_t> runs;
  bool samples = false, errors = false;
  // Told how many results are coming before the first (to reserve), when set.
  std::function<void(std::int64_t rows)> on_size;
};

// Results per status of a run, and how many of them fell back to the CPU on some op.
struct StatusTally {
  std::int64_t results = 0, with_fallbacks = 0;
};

class StoreReader {
 public:
  // Opens `path` read-only (sqlite::open_results_readonly: a Gauntlet database of this schema
  // version); errors are one line naming the file, thrown through `fail` (the caller's type).
  StoreReader(const std::string& path, sqlite::Fail fail);
  ~StoreReader();
  StoreReader(const StoreReader&) = delete;
  StoreReader& operator=(const StoreReader&) = delete;

  const std::string& path() const { return path_; }

  std::vector<RunRef> runs();                                  // every run, oldest (lowest id) first
  std::vector<CaseRow> cases();                                // every case, in no particular order
  std::vector<std::uint64_t> case_ids(std::string_view kind);  // the cases of one kind ("model")
  std::optional<std::string> key(std::uint64_t case_id);
  std::string error(std::int64_t run, std::uint64_t case_id);  // "" when none
  // The same for many cases at once, by case id (one statement, the ids looked up in order):
  // compare names its findings and known failures, thousands of them, this way.
  std::unordered_map<std::uint64_t, std::string> keys(std::vector<std::uint64_t> case_ids);
  std::unordered_map<std::uint64_t, std::string> errors(std::int64_t run, std::vector<std::uint64_t> case_ids);
  // Calls `on_case(case_id, key)` for each case with a result in `run`, in no particular order:
  // compare counts the cases of each group it names this way (gauntlet/analysis/rollup.h).
  void run_keys(std::int64_t run, const std::function<void(std::uint64_t, std::string_view)>& on_case);
  std::map<Status, StatusTally> status_tally(std::int64_t run);
  // How many results of `run` have each of `columns` set (not NULL), in order.
  std::vector<std::int64_t> counts_set(std::int64_t run, const std::vector<std::string_view>& columns);
  // How many results of `run` have a simulated time, and how many a host time.
  struct TimedCounts {
    std::int64_t sim = 0, host = 0;
  };
  TimedCounts timed_counts(std::int64_t run);

  // Calls `on_row` for each result the scan selects, in storage order (Note [One reader of
  // results]). A column name the field table does not have is an internal error.
  void scan(const ResultScan& scan, const std::function<void(ResultRow&)>& on_row);
  // The same as ResultFacts (Note [Result facts]): what compare and the dashboard read.
  void scan_facts(const FactScan& scan, const std::function<void(const ResultFacts&)>& on_result);

 private:
  std::string path_;
  sqlite::Fail fail_;
  sqlite3* db_ = nullptr;
};

// The columns of `results`, in table order: run_id, case_id, then each stored field of the field
// table (Note [One field table]).
const std::vector<std::string_view>& result_column_names();

}  // namespace gauntlet
