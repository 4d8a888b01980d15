#include "gauntlet/store/store_reader.h"

#include <fmt/format.h>
#include <sqlite3.h>

#include <algorithm>

#include "gauntlet/base/outcome_fields.h"

namespace gauntlet {

// Note [One reader of results]: the commands that analyse stored runs (compare, report --weekly,
// dashboard) read the database through StoreReader, and merge and show through Store, so the SQL
// on `results` and `runs` lives in this target only (ci/test.sh greps for strays: Note [No stray
// SQL] in ci/test.sh). A scan reads the columns it names, validated against the field table, in
// the order the rows lie in the file:
//  - one run: its rowid range (min and max rowid of the run, through the primary key's index),
//    then the rows in that range whose run_id matches: the run's rows were written together, so
//    the range is one sequential stretch of pages, where reading in case-id order through the
//    index seeks the b-tree once a row (2.7 s against ~1 s for 1,000,000 rows). `+run_id` keeps
//    the planner off the index; rows of other runs inside the range (runs written at the same
//    time) are skipped by the filter;
//  - several runs: one pass over the table with `+run_id IN (...)`: runs are stored one after
//    another, so this reads the file sequentially, where a lookup per run through the (run_id,
//    case_id) index jumps to a random page for every row.
// Pages are read through SQLite's page cache, not a map of the file: each page is read once, and
// a mapped file's pages count in the process's memory (compare of two runs of 1,000,000 results:
// 1,106 MiB with the map against 570 MiB, no faster; Note [Reading a million results] in
// analysis/regress.cpp).

const std::vector<std::string_view>& result_column_names() {
  static const std::vector<std::string_view> names = [] {
    std::vector<std::string_view> out = {"run_id", "case_id"};
    const Outcome o;
    fields::visit_fields(o, [&](const fields::Field& f, const auto&) {
      if (!f.has(fields::kJsonOnly)) out.push_back(f.column);
    });
    return out;
  }();
  return names;
}

Status ResultRow::status() {
  const std::string_view name = stmt_.text_view();
  const auto parsed = parse_status(name);
  if (!parsed) {
    sqlite::fail(fail_, stmt_.path(), fmt::format("unknown status '{}' in results of run {}", name, run_));
  }
  return *parsed;
}
double ResultRow::real() { return stmt_.real(); }
std::int64_t ResultRow::int64() { return stmt_.int64(); }
std::string_view ResultRow::text() { return stmt_.text_view(); }
std::string_view ResultRow::blob() { return stmt_.blob_view(); }

StoreReader::StoreReader(const std::string& path, sqlite::Fail fail)
    : path_(path), fail_(fail), db_(sqlite::open_results_readonly(fail, path)) {
  sqlite3_exec(db_, "PRAGMA mmap_size = 0", nullptr, nullptr, nullptr);
}

StoreReader::~StoreReader() { sqlite3_close(db_); }

std::vector<RunRef> StoreReader::runs() {
  sqlite::Stmt q(fail_, db_, path_,
                 "SELECT id, release, backend, backend_version, suite, started_at, price_per_device_hour FROM runs "
                 "ORDER BY id");
  std::vector<RunRef> out;
  while (q.step()) {
    RunRef r;
    r.id = q.int64();
    r.release = q.text();
    r.backend = q.text();
    r.backend_version = q.text();
    r.suite = q.text();
    r.started_at = q.text();
    if (const double price = q.real(); price > 0) r.price_per_device_hour = price;
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<CaseRow> StoreReader::cases() {
  sqlite::Stmt q(fail_, db_, path_, "SELECT id, key, kind, target, dtype, mode FROM cases");
  std::vector<CaseRow> out;
  while (q.step()) {
    CaseRow c;
    c.id = sqlite::as_unsigned(q.int64());
    c.key = q.text();
    c.kind = q.text();
    c.target = q.text();
    c.dtype = q.text();
    c.mode = q.text();
    out.push_back(std::move(c));
  }
  return out;
}

std::vector<std::uint64_t> StoreReader::case_ids(std::string_view kind) {
  sqlite::Stmt q(fail_, db_, path_, "SELECT id FROM cases WHERE kind = ?");
  q.bind(kind);
  std::vector<std::uint64_t> out;
  while (q.step()) out.push_back(sqlite::as_unsigned(q.int64()));
  return out;
}

std::optional<std::string> StoreReader::key(std::uint64_t case_id) {
  sqlite::Stmt q(fail_, db_, path_, "SELECT key FROM cases WHERE id = ?");
  q.bind(sqlite::as_signed(case_id));
  if (!q.step()) return std::nullopt;
  return q.text();
}

std::string StoreReader::error(std::int64_t run, std::uint64_t case_id) {
  sqlite::Stmt q(fail_, db_, path_, "SELECT error FROM results WHERE run_id = ? AND case_id = ?");
  q.bind(run, sqlite::as_signed(case_id));
  return q.step() ? q.text() : "";
}

namespace {

void sort_unique(std::vector<std::uint64_t>& ids) {
  std::sort(ids.begin(), ids.end(),
            [](std::uint64_t a, std::uint64_t b) { return sqlite::as_signed(a) < sqlite::as_signed(b); });
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
}

}  // namespace

std::unordered_map<std::uint64_t, std::string> StoreReader::keys(std::vector<std::uint64_t> case_ids) {
  sort_unique(case_ids);  // in the index's order: each lookup starts near the last
  std::unordered_map<std::uint64_t, std::string> out;
  out.reserve(case_ids.size());
  sqlite::Stmt q(fail_, db_, path_, "SELECT key FROM cases WHERE id = ?");
  for (const std::uint64_t id : case_ids) {
    q.bind(sqlite::as_signed(id));
    if (q.step()) out.emplace(id, q.text());
    q.reset();
  }
  return out;
}

std::unordered_map<std::uint64_t, std::string> StoreReader::errors(std::int64_t run,
                                                                   std::vector<std::uint64_t> case_ids) {
  sort_unique(case_ids);
  std::unordered_map<std::uint64_t, std::string> out;
  out.reserve(case_ids.size());
  sqlite::Stmt q(fail_, db_, path_, "SELECT error FROM results WHERE run_id = ? AND case_id = ?");
  for (const std::uint64_t id : case_ids) {
    q.bind(run, sqlite::as_signed(id));
    if (q.step()) out.emplace(id, q.text());
    q.reset();
  }
  return out;
}

void StoreReader::run_keys(std::int64_t run, const std::function<void(std::uint64_t, std::string_view)>& on_case) {
  sqlite::Stmt q(fail_, db_, path_,
                 "SELECT c.id, c.key FROM results r JOIN cases c ON c.id = r.case_id WHERE r.run_id = ?");
  q.bind(run);
  while (q.step()) {
    const std::uint64_t id = sqlite::as_unsigned(q.int64());
    on_case(id, q.text_view());
  }
}

std::map<Status, StatusTally> StoreReader::status_tally(std::int64_t run) {
  sqlite::Stmt q(fail_, db_, path_,
                 "SELECT status, COUNT(*), SUM(fallback_ops NOT IN ('', '[]')) FROM results WHERE run_id = ? "
                 "GROUP BY status");
  q.bind(run);
  std::map<Status, StatusTally> out;
  while (q.step()) {
    const std::string name = q.text();
    const auto status = parse_status(name);
    if (!status) sqlite::fail(fail_, path_, fmt::format("unknown status '{}' in results of run {}", name, run));
    StatusTally& t = out[*status];
    t.results += q.int64();
    t.with_fallbacks += q.int64();
  }
  return out;
}

namespace {

// `name`, when it is a column of `results`; else an internal error (a caller's mistake).
// What scan_facts reads as ResultFacts::compile_reasons: SQLite reads the `reason` text only of
// the results with graph breaks or recompiles, so compare does not read every result's reason.
constexpr std::string_view kCompileReasons = "compile_reasons";

std::string_view column(std::string_view name, sqlite::Fail fail, const std::string& path) {
  if (name == kCompileReasons) return "CASE WHEN graph_breaks > 0 OR recompiles > 0 THEN reason END";
  const auto& names = result_column_names();
  if (std::find(names.begin(), names.end(), name) == names.end()) {
    sqlite::fail(fail, path, fmt::format("results has no column '{}'", name), kExitInternal);
  }
  return name;
}

}  // namespace

std::vector<std::int64_t> StoreReader::counts_set(std::int64_t run, const std::vector<std::string_view>& columns) {
  if (columns.empty()) return {};
  std::string sql = "SELECT ";
  for (std::size_t i = 0; i < columns.size(); ++i) {
    sql += fmt::format("{}COUNT({})", i ? ", " : "", column(columns[i], fail_, path_));
  }
  sql += " FROM results WHERE run_id = ?";
  sqlite::Stmt q(fail_, db_, path_, sql);
  q.bind(run);
  std::vector<std::int64_t> out(columns.size(), 0);
  if (q.step()) {
    for (auto& n : out) n = q.int64();
  }
  return out;
}

void StoreReader::scan(const ResultScan& scan, const std::function<void(ResultRow&)>& on_row) {
  if (scan.runs.empty()) return;
  std::string select = "SELECT run_id, case_id";
  for (const std::string_view c : scan.columns) {
    select += ", ";
    select += column(c, fail_, path_);
  }
  select += " FROM results WHERE ";
  std::string where;
  std::int64_t lo = 0, hi = 0;
  const bool one = scan.runs.size() == 1;
  if (one) {
    sqlite::Stmt range(fail_, db_, path_, "SELECT min(rowid), max(rowid), count(*) FROM results WHERE run_id = ?");
    range.bind(scan.runs[0]);
    range.step();
    lo = range.int64();
    hi = range.int64();
    const std::int64_t count = range.int64();
    if (scan.on_size) scan.on_size(count);
    if (count == 0) return;
    where = "rowid BETWEEN ? AND ? AND +run_id = ?";
  } else {
    std::string ids;
    for (const std::int64_t run : scan.runs) ids += (ids.empty() ? "" : ",") + std::to_string(run);
    if (scan.on_size) {
      sqlite::Stmt count(fail_, db_, path_, "SELECT count(*) FROM results WHERE run_id IN (" + ids + ")");
      count.step();
      scan.on_size(count.int64());
    }
    where = "+run_id IN (" + ids + ")";
  }
  sqlite::Stmt q(fail_, db_, path_, select + where);
  if (one) q.bind(lo, hi, scan.runs[0]);
  ResultRow row(q, fail_);
  while (q.step()) {
    row.run_ = q.int64();
    row.case_ = sqlite::as_unsigned(q.int64());
    on_row(row);
  }
}

StoreReader::TimedCounts StoreReader::timed_counts(std::int64_t run) {
  const std::vector<std::int64_t> n = counts_set(run, {"sim_time_us", "median_us"});
  return {n[0], n[1]};
}

void StoreReader::scan_facts(const FactScan& facts, const std::function<void(const ResultFacts&)>& on_result) {
  ResultScan scan;
  scan.runs = facts.runs;
  scan.on_size = facts.on_size;
  scan.columns = {"status",      "max_abs_err",    "max_rel_err",  "atol",         "first_us",   "median_us",
                  "sim_time_us", "compile_ms",     "backend_ms",   "graph_breaks", "recompiles", "work_items",
                  "cache_hits",  "peak_mem_bytes", "fallback_ops", kCompileReasons};
  if (facts.samples) scan.columns.emplace_back("samples");
  if (facts.errors) {
    scan.columns.emplace_back("error");
    scan.columns.emplace_back("stage");
  }
  ResultFacts f;
  this->scan(scan, [&](ResultRow& q) {
    f.run_id = q.run_id();
    f.case_id = q.case_id();
    f.status = q.status();
    f.max_abs_err = q.real();
    f.max_rel_err = q.real();
    f.atol = q.real();
    f.first_us = q.real();
    f.median_us = q.real();
    f.sim_time_us = q.real();
    f.compile_ms = q.real();
    f.backend_ms = q.real();
    f.graph_breaks = q.real();
    f.recompiles = q.real();
    f.work_items = q.real();
    f.cache_hits = q.real();
    f.peak_mem_bytes = q.int64();
    f.fallback_ops = q.text();
    f.compile_reasons = q.text();
    f.samples = facts.samples ? q.blob() : std::string_view();
    f.error = facts.errors ? q.text() : std::string_view();
    f.stage = facts.errors ? q.text() : std::string_view();
    on_result(f);
  });
}

}  // namespace gauntlet
