#include "gauntlet/store/store.h"

#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <iostream>
#include <iterator>
#include <limits>
#include <nlohmann/json.hpp>
#include <string_view>
#include <system_error>
#include <type_traits>
#include <utility>

#include "gauntlet/base/outcome_fields.h"
#include "gauntlet/base/samples.h"
#include "gauntlet/base/sqlite.h"
#include "gauntlet/store/store_reader.h"

namespace gauntlet {

namespace {

using nlohmann::json;

constexpr std::string_view kApplication = "gauntlet";
constexpr int kBusyTimeoutMs = 10000;  // a merge or a second reader may hold the lock briefly

// Note [Schema migrations]: kMigrations[v] takes a database from schema version v to v + 1, and
// migrate() runs the missing steps in one transaction. Never edit a step once released: append one
// (ALTER TABLE ... ADD COLUMN, new tables) and bump kSchemaVersion. docs/database.md lists them.
constexpr const char* kMigrations[] = {
    // 0 -> 1: the first schema.
    R"sql(
CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL);
INSERT INTO meta(key, value) VALUES('application', 'gauntlet');

CREATE TABLE runs(
  id INTEGER PRIMARY KEY,
  release TEXT NOT NULL DEFAULT '',
  build_id TEXT NOT NULL DEFAULT '',
  backend TEXT NOT NULL DEFAULT '',
  backend_version TEXT NOT NULL DEFAULT '',
  torch_version TEXT NOT NULL DEFAULT '',
  host TEXT NOT NULL DEFAULT '',
  cpu TEXT NOT NULL DEFAULT '',
  blas TEXT NOT NULL DEFAULT '',
  build_config TEXT NOT NULL DEFAULT '',
  threads INTEGER NOT NULL DEFAULT 0,
  suite TEXT NOT NULL DEFAULT '',
  filter TEXT NOT NULL DEFAULT '',
  shard TEXT NOT NULL DEFAULT '',
  started_at TEXT NOT NULL DEFAULT '',
  finished_at TEXT NOT NULL DEFAULT '',
  config_json TEXT NOT NULL DEFAULT '',
  gauntlet_version TEXT NOT NULL DEFAULT ''
);

CREATE TABLE cases(
  id INTEGER PRIMARY KEY,
  key TEXT NOT NULL,
  kind TEXT NOT NULL,
  target TEXT NOT NULL,
  dtype TEXT NOT NULL,
  mode TEXT NOT NULL,
  layout TEXT NOT NULL,
  shapes TEXT NOT NULL,
  args TEXT NOT NULL
);

CREATE TABLE results(
  run_id INTEGER NOT NULL REFERENCES runs(id),
  case_id INTEGER NOT NULL REFERENCES cases(id),
  status TEXT NOT NULL,
  attempt INTEGER NOT NULL DEFAULT 1,
  rtol REAL,
  atol REAL,
  tolerance_profile TEXT NOT NULL DEFAULT '',
  max_abs_err REAL,
  max_rel_err REAL,
  mismatches INTEGER NOT NULL DEFAULT 0,
  numel INTEGER NOT NULL DEFAULT 0,
  mismatch_frac REAL,
  max_ulp REAL,
  nan_inf_ok INTEGER NOT NULL DEFAULT 1,
  worst TEXT NOT NULL DEFAULT '',
  error TEXT NOT NULL DEFAULT '',
  reason TEXT NOT NULL DEFAULT '',
  first_us REAL,
  median_us REAL,
  p10_us REAL,
  p90_us REAL,
  reps INTEGER NOT NULL DEFAULT 0,
  peak_mem_bytes INTEGER NOT NULL DEFAULT 0,
  fallback_ops TEXT NOT NULL DEFAULT '[]',
  graph_breaks INTEGER,
  recompiles INTEGER,
  compile_ms REAL,
  sim_time_us REAL,
  PRIMARY KEY(run_id, case_id)
);
CREATE INDEX results_by_status ON results(run_id, status);
)sql",
    // 1 -> 2: where each result's golden came from (the golden store) and what it cost.
    R"sql(
ALTER TABLE results ADD COLUMN golden_source TEXT NOT NULL DEFAULT 'computed';
ALTER TABLE results ADD COLUMN golden_entry TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN golden_us REAL;
)sql",
    // 2 -> 3: worker processes: the device slot a case ran on, and retries that passed.
    R"sql(
ALTER TABLE results ADD COLUMN device_slot TEXT NOT NULL DEFAULT '';
ALTER TABLE results ADD COLUMN flaky INTEGER NOT NULL DEFAULT 0;
-- A TEXT index maintained on every insert halved ingestion (harness/bench BM_StoreIngest); the
-- primary key (run_id, case_id) already finds a run's rows for counting by status.
DROP INDEX IF EXISTS results_by_status;
)sql",
    // 3 -> 4: every steady-state repetition, for significance tests (Note [Stored samples]).
    // (A WITHOUT ROWID results table was measured slower: case ids are hashes, so each batch
    // scattered whole rows over the table's b-tree instead of appending them.)
    R"sql(
ALTER TABLE results ADD COLUMN samples BLOB;
)sql",
    // 4 -> 5: collectives' bandwidth, as nccl-tests reports it (Note [Collective timing]).
    R"sql(
ALTER TABLE results ADD COLUMN algbw_gbps REAL;
ALTER TABLE results ADD COLUMN busbw_gbps REAL;
)sql",
    // 5 -> 6: the compile path's regions (graph_breaks, recompiles, compile_ms exist since 1).
    R"sql(
ALTER TABLE results ADD COLUMN regions INTEGER;
)sql",
    // 6 -> 7: throughput and cost (Note [Throughput and cost] in regress.h): what a call
    // processes, and what a device-hour costs; and the repetitions' coefficient of variation.
    R"sql(
ALTER TABLE results ADD COLUMN work_items INTEGER;
ALTER TABLE results ADD COLUMN cv REAL;
ALTER TABLE runs ADD COLUMN price_per_device_hour REAL;
)sql",
    // 7 -> 8: the ops a model case executed (Note [Executed ops] in gauntlet/models/model_file.h).
    R"sql(
ALTER TABLE results ADD COLUMN executed_ops TEXT NOT NULL DEFAULT '[]';
)sql",
    // 8 -> 9: the stage of a case that failed (Note [Failing stage] in gauntlet/base/stage.h).
    R"sql(
ALTER TABLE results ADD COLUMN stage TEXT NOT NULL DEFAULT '';
)sql",
    // 9 -> 10: torch.compile's compile time split (Note [Compile path] in harness/python/compiled.cpp).
    R"sql(
ALTER TABLE results ADD COLUMN dynamo_ms REAL;
ALTER TABLE results ADD COLUMN backend_ms REAL;
)sql",
    // 10 -> 11: AOT autograd's part of it (Note [Compile path] in harness/python/compiled.cpp).
    R"sql(
ALTER TABLE results ADD COLUMN aot_ms REAL;
)sql",
    // 11 -> 12: graphs a compiler's cache served (Note [Compiler cache] in gauntlet_compile.py).
    R"sql(
ALTER TABLE results ADD COLUMN cache_hits INTEGER;
)sql",
};
static_assert(std::size(kMigrations) == static_cast<std::size_t>(kSchemaVersion),
              "one migration step per schema version");

// The run record's field table (Note [One field table]): every column of `runs` but the id, in
// the order of run_columns(), bind_run and read_run.
template <class R, class F>
void visit_run_fields(R& r, F&& f) {
  f("release", r.release);
  f("build_id", r.build_id);
  f("backend", r.backend);
  f("backend_version", r.backend_version);
  f("torch_version", r.torch_version);
  f("host", r.host);
  f("cpu", r.cpu);
  f("blas", r.blas);
  f("build_config", r.build_config);
  f("threads", r.threads);
  f("suite", r.suite);
  f("filter", r.filter);
  f("shard", r.shard);
  f("started_at", r.started_at);
  f("finished_at", r.finished_at);
  f("config_json", r.config_json);
  f("gauntlet_version", r.gauntlet_version);
  f("price_per_device_hour", r.price_per_device_hour);
}

// "release, build_id, ..." (sep ", ") or "release = ?, build_id = ?, ..." (sep " = ?, ").
std::string run_columns(std::string_view suffix = "") {
  std::string out;
  const RunInfo r;
  visit_run_fields(r, [&](std::string_view column, const auto&) {
    if (!out.empty()) out += ", ";
    out += column;
    out += suffix;
  });
  return out;
}

// Column lists shared by the INSERT and SELECT statements; the bind_* and read_* functions below
// follow the same order.
constexpr std::string_view kCaseColumns = "id, key, kind, target, dtype, mode, layout, shapes, args";
// The columns of `results`: the run and the case, then each stored field of the field table
// (Note [One field table] in gauntlet/base/outcome_fields.h; result_column_names in store_reader.cpp).
const std::string& result_columns() {
  static const std::string columns = [] {
    std::string out;
    for (const std::string_view c : result_column_names()) {
      if (!out.empty()) out += ", ";
      out += c;
    }
    return out;
  }();
  return columns;
}

// ---- Errors and SQLite helpers (gauntlet/base/sqlite.h), raising StoreError

void raise(const std::string& message, int exit_code = kExitBadInput) { throw StoreError(message, exit_code); }

// Every error is one line that starts with the file name.
[[noreturn]] void fail(const std::string& path, const std::string& what) { sqlite::fail(raise, path, what); }
[[noreturn]] void fail_sqlite(sqlite3* db, const std::string& path, const std::string& what) {
  sqlite::fail(raise, db, path, what);
}
void exec_sql(sqlite3* db, const std::string& path, const std::string& sql) { sqlite::exec(raise, db, path, sql); }

class Stmt : public sqlite::Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path, std::string_view sql) : sqlite::Stmt(raise, db, path, sql) {}
};

class Transaction : public sqlite::Transaction {
 public:
  Transaction(sqlite3* db, const std::string& path) : sqlite::Transaction(raise, db, path) {}
};

using sqlite::as_signed;
using sqlite::as_unsigned;

// "INSERT ... INTO table(columns) VALUES(?, ...)" with one placeholder per column.
std::string insert_sql(std::string_view verb, std::string_view table, std::string_view columns) {
  const auto n = std::count(columns.begin(), columns.end(), ',') + 1;
  std::string sql = std::string(verb) + " INTO " + std::string(table) + "(" + std::string(columns) + ") VALUES(?";
  for (int i = 1; i < n; ++i) {
    sql += ", ?";
  }
  return sql + ")";
}

// ---- Opening

int user_version(sqlite3* db, const std::string& path) { return sqlite::user_version(raise, db, path); }

static_assert(kSchemaVersion == sqlite::kResultsSchemaVersion,
              "one schema version: gauntlet/base/sqlite.h's is the readers'");

void check_not_newer(const std::string& path, int version) {
  sqlite::check_not_newer(raise, path, version, kSchemaVersion, "database schema");
}

enum class Contents { Empty, Gauntlet };

// What the file holds, found by reading only: open() must never write into a database that is not
// ours. Throws for a file that is not SQLite or a SQLite database of some other application.
Contents inspect(sqlite3* db, const std::string& path) {
  // The first read of the schema is where SQLite notices a file is not a database.
  if (sqlite::is_empty(raise, db, path, "not a SQLite database")) {
    return Contents::Empty;
  }

  Stmt meta(db, path, "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'meta'");
  meta.step();
  if (meta.int64() == 0) {
    fail(path, "not a Gauntlet database (no meta table)");
  }

  const std::string application = sqlite::application_of(db);
  if (application != kApplication) {
    fail(path, "not a Gauntlet database (meta has no application 'gauntlet')");
  }
  // A Gauntlet database missing one of its tables is damaged: refuse it before anything writes a
  // run row into it (a run would otherwise begin, then fail at its first result).
  for (const char* table : {"runs", "cases", "results"}) {
    Stmt q(db, path, std::string("SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '") + table + "'");
    q.step();
    if (q.int64() == 0) fail(path, std::string("damaged Gauntlet database: its table '") + table + "' is missing");
  }
  return Contents::Gauntlet;
}

void configure_writer(sqlite3* db, const std::string& path) {
  // WAL lets reports read while a run writes; NORMAL is durable across crashes of the process
  // (only an OS crash can lose the last transactions), which is what a test harness needs.
  exec_sql(db, path, "PRAGMA journal_mode = WAL");
  exec_sql(db, path, "PRAGMA synchronous = NORMAL");
  // Results arrive in hash order (case ids), so inserts touch the whole b-tree: a 64 MiB page
  // cache keeps it in memory instead of re-reading pages (BM_StoreIngest in harness/bench).
  exec_sql(db, path, "PRAGMA cache_size = -65536");
  // Note [Foreign keys]: the schema declares them (`PRAGMA foreign_key_check` verifies a file),
  // but the writer does not enforce them row by row: looking each result's case up at random in
  // the cases table cost a quarter of ingestion. The store keeps them by construction instead:
  // a batch inserts its cases before its results in one transaction, and flush() refuses a batch
  // whose run does not exist.
  exec_sql(db, path, "PRAGMA foreign_keys = OFF");
}

// ---- Rows

void bind_run(Stmt& s, const RunInfo& r) {
  visit_run_fields(r, [&](std::string_view, const auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::optional<double>>) {
      s.bind(v.value_or(std::numeric_limits<double>::quiet_NaN()));
    } else {
      s.bind(v);
    }
  });
}

// Reads "id, <run_columns()>".
RunInfo read_run(Stmt& s) {
  RunInfo r;
  r.id = s.int64();
  visit_run_fields(r, [&](std::string_view, auto& v) {
    using T = std::decay_t<decltype(v)>;
    if constexpr (std::is_same_v<T, std::optional<double>>) {
      if (const double d = s.real(); !std::isnan(d)) v = d;
    } else if constexpr (std::is_same_v<T, int>) {
      v = static_cast<int>(s.int64());
    } else {
      v = s.text();
    }
  });
  return r;
}

std::string shapes_str(const std::vector<Shape>& shapes) {
  std::string out;
  for (const Shape& s : shapes) {
    if (!out.empty()) {
      out += ',';
    }
    out += shape_str(s);
  }
  return out;
}

// JSON so that SQL can reach into it (json_extract(args, '$.alpha')). Invalid UTF-8 is replaced
// rather than thrown on: a stored result matters more than one odd byte in an op name.
std::string to_json(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

void bind_case(Stmt& s, std::int64_t id, const CaseKey& key, const std::string& text) {
  json args = json::object();
  for (const auto& [name, value] : key.args) {
    args[name] = value;
  }
  s.bind(id, text, key.kind, key.target, dtype_name(key.dtype), key.mode_text(), layout_name(key.layout),
         shapes_str(key.shapes), to_json(args));
}

// fallback_ops and executed_ops as a JSON array. Most results have none and most op names need no escaping, so
// those skip the JSON library (a third of the cost of ingesting a row).
std::string ops_json(const std::vector<std::string>& ops) {
  if (ops.empty()) return "[]";
  const bool plain = std::all_of(ops.begin(), ops.end(), [](const std::string& op) {
    return std::all_of(op.begin(), op.end(), [](char c) { return c >= 0x20 && c < 0x7f && c != '"' && c != '\\'; });
  });
  if (!plain) return to_json(json(ops));
  std::string out = "[";
  for (const std::string& op : ops) {
    if (out.size() > 1) out += ',';
    out += '"';
    out += op;
    out += '"';
  }
  return out + "]";
}

// Text that lives until the statement has run binds without a copy.
sqlite::Static fixed(const std::string& text) { return sqlite::Static{text}; }

// An optional count: NULL when absent (bound as a NaN real, which SQLite stores as NULL).
double opt_int(const std::optional<std::int64_t>& v) {
  return v ? static_cast<double>(*v) : std::numeric_limits<double>::quiet_NaN();
}

// One field of the table bound (Note [One field table]). `o` is pending until the batch commits,
// so its strings bind without copies.
void bind_field(Stmt& s, const fields::Field&, const std::string& v) { s.bind(fixed(v)); }
void bind_field(Stmt& s, const fields::Field&, Status v) { s.bind(sqlite::Static{status_name(v)}); }
void bind_field(Stmt& s, const fields::Field&, int v) { s.bind(v); }
void bind_field(Stmt& s, const fields::Field&, bool v) { s.bind(int{v}); }
void bind_field(Stmt& s, const fields::Field& f, std::int64_t v) {
  if (f.has(fields::kZeroIsNull)) {
    s.bind(v > 0 ? static_cast<double>(v) : std::numeric_limits<double>::quiet_NaN());
  } else {
    s.bind(v);
  }
}
void bind_field(Stmt& s, const fields::Field&, double v) { s.bind(v); }
void bind_field(Stmt& s, const fields::Field&, const std::optional<double>& v) {
  s.bind(v.value_or(std::numeric_limits<double>::quiet_NaN()));
}
void bind_field(Stmt& s, const fields::Field&, const std::optional<std::int64_t>& v) { s.bind(opt_int(v)); }
void bind_field(Stmt& s, const fields::Field&, const std::vector<std::string>& v) { s.bind(ops_json(v)); }
void bind_field(Stmt& s, const fields::Field&, const std::vector<double>& v) { s.bind(sqlite::Blob{pack_samples(v)}); }

void bind_result(Stmt& s, std::int64_t run_id, std::int64_t case_id, const Outcome& o) {
  s.bind(run_id, case_id);
  fields::visit_fields(o, [&](const fields::Field& f, const auto& v) {
    if (!f.has(fields::kJsonOnly)) bind_field(s, f, v);
  });
}

Status read_status(Stmt& s) {
  const std::string text = s.text();
  const auto status = parse_status(text);
  if (!status) {
    fail(s.path(), "unknown status '" + text + "' in results");
  }
  return *status;
}

std::vector<std::string> read_ops(Stmt& s, std::string_view column) {
  const json ops = json::parse(s.text(), nullptr, /*allow_exceptions=*/false);
  const bool ok = ops.is_array() && std::all_of(ops.begin(), ops.end(), [](const json& op) { return op.is_string(); });
  if (!ok) {
    fail(s.path(), std::string(column) + " in results is not a JSON array of strings");
  }
  return ops.get<std::vector<std::string>>();
}

// One field of the table read (Note [One field table]); NULL reads as NaN, or as the default
// for kNullIsDefault fields and optionals.
void read_field(Stmt& s, const fields::Field&, std::string& v) { v = s.text(); }
void read_field(Stmt& s, const fields::Field&, Status& v) { v = read_status(s); }
void read_field(Stmt& s, const fields::Field&, int& v) { v = static_cast<int>(s.int64()); }
void read_field(Stmt& s, const fields::Field&, bool& v) { v = s.int64() != 0; }
void read_field(Stmt& s, const fields::Field& f, std::int64_t& v) {
  if (!f.has(fields::kNullIsDefault)) {
    v = s.int64();
  } else if (const double d = s.real(); !std::isnan(d)) {
    v = static_cast<std::int64_t>(d);
  }
}
void read_field(Stmt& s, const fields::Field& f, double& v) {
  const double d = s.real();
  if (!(f.has(fields::kNullIsDefault) && std::isnan(d))) v = d;
}
void read_field(Stmt& s, const fields::Field&, std::optional<double>& v) {
  if (const double d = s.real(); !std::isnan(d)) v = d;
}
void read_field(Stmt& s, const fields::Field&, std::optional<std::int64_t>& v) {
  if (const double d = s.real(); !std::isnan(d)) v = static_cast<std::int64_t>(d);
}
void read_field(Stmt& s, const fields::Field& f, std::vector<std::string>& v) { v = read_ops(s, f.column); }
void read_field(Stmt& s, const fields::Field&, std::vector<double>& v) { v = unpack_samples(s.blob()); }

// Reads "cases.key, <result_columns()>".
StoredResult read_result(Stmt& s) {
  StoredResult r;
  Outcome& o = r.outcome;
  o.key = s.text();
  r.run_id = s.int64();
  r.case_id = as_unsigned(s.int64());
  fields::visit_fields(o, [&](const fields::Field& f, auto&& member) {
    if (f.has(fields::kJsonOnly)) return;
    if (f.has(fields::kDerived)) {
      s.skip();  // stored only for queries
      return;
    }
    read_field(s, f, member);
  });
  return r;
}

std::string select_results(std::string_view where) {
  return "SELECT cases.key, " + result_columns() + " FROM results JOIN cases ON cases.id = results.case_id WHERE " +
         std::string(where) + " ORDER BY cases.key";
}

}  // namespace

// ---- Store

Store::Store(sqlite3* db, std::string path) : db_(db), path_(std::move(path)) {}

Store::~Store() {
  try {
    flush();
  } catch (const std::exception& e) {
    // A destructor cannot throw; say what was lost rather than lose it silently.
    std::cerr << "gauntlet: " << e.what() << " (" << pending_.size() << " results not saved)\n";
  }
  sqlite3_close_v2(db_);
}

namespace {

// Note [Verified on open]: a command that writes into an existing database first runs SQLite's
// PRAGMA quick_check on it (every page, b-tree and record format; not the index contents that
// integrity_check also compares). A bit-flipped file is then refused with exit 2 before a run row
// is written into it, rather than taking results it may lose or mis-index. Measured on this
// machine: 0.52 s for a database of 1,000,000 results (138 MB), against 1.3 s for integrity_check;
// a fresh file costs nothing. --skip-db-check (run, merge, bench) opens ReadWriteUnverified for
// the user who knows the file is sound and cannot spend that time. Readers do not check: they
// write nothing, and a damaged page is reported by the query that reaches it.
void quick_check(sqlite3* db, const std::string& path) {
  // By hand: on some damage (a root page that is no b-tree page) the check itself fails with
  // SQLITE_CORRUPT rather than listing problems; that is its verdict too.
  sqlite3_stmt* check = nullptr;
  if (sqlite3_prepare_v2(db, "PRAGMA quick_check", -1, &check, nullptr) != SQLITE_OK) {
    fail_sqlite(db, path, "cannot check the database");
  }
  std::string problems;
  int count = 0, rc = 0;
  while ((rc = sqlite3_step(check)) == SQLITE_ROW) {
    const char* text = reinterpret_cast<const char*>(sqlite3_column_text(check, 0));
    const std::string line = text ? text : "";
    if (line == "ok") break;
    if (line.rfind("*** in database", 0) == 0) continue;  // a heading, not a problem
    if (count++ < 2) problems += (problems.empty() ? "" : "; ") + line;
  }
  const int primary = rc & 0xff;
  if (rc != SQLITE_ROW && rc != SQLITE_DONE && primary != SQLITE_CORRUPT && primary != SQLITE_NOTADB) {
    sqlite3_finalize(check);
    fail_sqlite(db, path, "cannot check the database");  // busy, I/O: the machine's, not the file's
  }
  if (rc != SQLITE_ROW && rc != SQLITE_DONE && ++count) problems = sqlite3_errmsg(db);
  sqlite3_finalize(check);
  if (count == 0) return;
  fail(path, "damaged database (SQLite's quick_check: " + problems + (count > 2 ? "; ..." : "") +
                 "); restore it from a copy, or recover what it holds with sqlite3's .recover");
}

}  // namespace

std::unique_ptr<Store> Store::open(const std::string& path, OpenMode mode) {
  const bool writable = mode != OpenMode::ReadOnly;
  std::error_code ec;
  // SQLite would only say "unable to open database file".
  if (!writable && !std::filesystem::exists(path, ec)) {
    fail(path, "no such database");
  }
  // SQLite's open of a FIFO blocks until someone writes it (Note [Input files]).
  if (const auto st = std::filesystem::status(path, ec);
      std::filesystem::exists(st) && !std::filesystem::is_regular_file(st)) {
    fail(path, std::filesystem::is_directory(st) ? "a folder, not a database file"
                                                 : "not a regular file (a FIFO or a device)");
  }

  sqlite3* db = nullptr;
  // NOMUTEX: a Store is used from one thread; SQLite's per-call locking cost 5% of ingestion.
  const int flags =
      (writable ? SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE : SQLITE_OPEN_READONLY) | SQLITE_OPEN_NOMUTEX;
  const int rc = sqlite3_open_v2(path.c_str(), &db, flags, nullptr);
  std::unique_ptr<Store> store(new Store(db, path));  // closes the handle on every way out
  if (rc != SQLITE_OK) {
    fail_sqlite(db, path, "cannot open database");
  }
  sqlite3_busy_timeout(db, kBusyTimeoutMs);

  const Contents contents = inspect(db, path);
  if (mode == OpenMode::ReadWrite && contents == Contents::Gauntlet) quick_check(db, path);
  if (!writable && contents == Contents::Empty) {
    fail(path, "not a Gauntlet database (no meta table)");
  }
  const int version = user_version(db, path);
  check_not_newer(path, version);
  if (writable) {
    configure_writer(db, path);
    store->migrate();
  } else if (version < kSchemaVersion) {
    fail(path, "database schema version " + std::to_string(version) + " is older than this gauntlet (" +
                   std::to_string(kSchemaVersion) + "); open it for writing to migrate");
  }
  return store;
}

void Store::migrate() {
  sqlite::migrate(raise, db_, path_, kMigrations, kSchemaVersion, "schema_version", "database schema");
}

// NOLINTNEXTLINE(performance-unnecessary-value-param): the signature is store.h's.
std::int64_t Store::begin_run(RunInfo info) {
  if (info.id > 0) {  // a run id the caller chose (gauntlet run --run-id)
    Stmt insert(db_, path_, insert_sql("INSERT", "runs", "id, " + run_columns()));
    insert.bind(info.id);
    bind_run(insert, info);
    insert.exec();
    return info.id;
  }
  Stmt insert(db_, path_, insert_sql("INSERT", "runs", run_columns()));
  bind_run(insert, info);
  insert.exec();
  return sqlite3_last_insert_rowid(db_);
}

std::set<std::string> Store::finished_keys(std::int64_t run_id) const {
  std::set<std::string> keys;
  Stmt s(db_, path_, "SELECT cases.key FROM results JOIN cases ON cases.id = results.case_id WHERE results.run_id = ?");
  s.bind(run_id);
  while (s.step()) keys.insert(s.text());
  return keys;
}

void Store::update_run(const RunInfo& info) {
  const std::string sql = "UPDATE runs SET " + run_columns(" = ?") + " WHERE id = ?";
  Stmt update(db_, path_, sql);
  bind_run(update, info);
  update.bind(info.id);
  update.exec();
  if (sqlite3_changes(db_) == 0) fail(path_, "no run " + std::to_string(info.id));
}

void Store::reopen_run(std::int64_t run_id) {
  Stmt(db_, path_, "UPDATE runs SET finished_at = '' WHERE id = ?").bind(run_id).exec();
}

void Store::finish_run(std::int64_t run_id, const std::string& finished_at) {
  flush();
  Stmt(db_, path_, "UPDATE runs SET finished_at = ? WHERE id = ?").bind(finished_at, run_id).exec();
  if (sqlite3_changes(db_) == 0) {
    fail(path_, "no run " + std::to_string(run_id));
  }
}

void Store::add_cases(const std::vector<const CaseKey*>& keys) {
  std::vector<std::pair<std::int64_t, const CaseKey*>> rows;
  rows.reserve(keys.size());
  for (const CaseKey* k : keys) {
    const std::int64_t id = as_signed(k->id());
    if (!known_cases_.count(id)) rows.emplace_back(id, k);
  }
  std::sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  Transaction tx(db_, path_);
  Stmt insert_case(db_, path_, insert_sql("INSERT OR IGNORE", "cases", kCaseColumns));
  for (const auto& [id, k] : rows) {
    bind_case(insert_case, id, *k, k->str());
    insert_case.exec();
  }
  tx.commit();
  for (const auto& [id, k] : rows) known_cases_.insert(id);
}

void Store::add_result(std::int64_t run_id, const CaseKey& key, const Outcome& outcome) {
  add_result(run_id, key, key.str(), outcome);
}

void Store::add_result(std::int64_t run_id, const CaseKey& key, std::string text, Outcome outcome) {
  if (pending_.empty()) pending_.reserve(static_cast<std::size_t>(std::min(batch_, 4096)));
  bound_error_text(outcome.error);  // Note [Bounded error texts]
  const std::int64_t case_id = as_signed(key_id(text));
  // The case's columns are needed only when this connection has not written the case yet.
  std::unique_ptr<CaseKey> unknown = known_cases_.count(case_id) ? nullptr : std::make_unique<CaseKey>(key);
  pending_.push_back({run_id, case_id, std::move(text), std::move(unknown), std::move(outcome)});
  if (static_cast<std::int64_t>(pending_.size()) >= batch_) {
    flush();
  }
}

std::size_t Store::discard_pending() {
  const std::size_t n = pending_.size();
  pending_.clear();
  return n;
}

// One transaction per batch: each commit takes the write lock and appends to the WAL, so a
// transaction per result would dominate the cost of fast cases. On failure the batch rolls back
// and stays pending: nothing is half written and nothing is dropped.
void Store::flush() {
  if (pending_.empty()) {
    return;
  }
  for (const Pending& p : pending_) {  // Note [Foreign keys]
    if (known_runs_.count(p.run_id)) continue;
    Stmt query(db_, path_, "SELECT count(*) FROM runs WHERE id = ?");
    query.bind(p.run_id);
    if (!query.step() || query.int64() == 0) {
      fail(path_, "cannot store results: there is no run " + std::to_string(p.run_id));
    }
    known_runs_.insert(p.run_id);
  }
  Transaction tx(db_, path_);
  Stmt insert_case(db_, path_, insert_sql("INSERT OR IGNORE", "cases", kCaseColumns));
  // REPLACE: a case run again in the same run (a retry) supersedes its earlier result.
  Stmt insert_result(db_, path_, insert_sql("INSERT OR REPLACE", "results", result_columns()));
  // In case-id order: ids are hashes, so arrival order scatters the inserts over the whole
  // b-trees of cases and of the results' primary key; sorted, a batch walks them once.
  std::vector<const Pending*> rows;
  rows.reserve(pending_.size());
  for (const Pending& p : pending_) rows.push_back(&p);
  std::sort(rows.begin(), rows.end(), [](const Pending* a, const Pending* b) { return a->case_id < b->case_id; });
  std::vector<std::int64_t> written;
  for (const Pending* p : rows) {
    if (p->key && !known_cases_.count(p->case_id)) {  // known only once committed: a rollback forgets it
      bind_case(insert_case, p->case_id, *p->key, p->text);
      insert_case.exec();
      written.push_back(p->case_id);
    }
    bind_result(insert_result, p->run_id, p->case_id, p->outcome);
    insert_result.exec();
  }
  tx.commit();
  known_cases_.insert(written.begin(), written.end());
  pending_.clear();
}

std::vector<RunInfo> Store::runs() const {
  Stmt query(db_, path_, "SELECT id, " + run_columns() + " FROM runs ORDER BY id");
  std::vector<RunInfo> out;
  while (query.step()) {
    out.push_back(read_run(query));
  }
  return out;
}

std::optional<RunInfo> Store::run(std::int64_t id) const {
  Stmt query(db_, path_, "SELECT id, " + run_columns() + " FROM runs WHERE id = ?");
  query.bind(id);
  if (!query.step()) {
    return std::nullopt;
  }
  return read_run(query);
}

std::optional<std::int64_t> Store::latest_run() const {
  Stmt query(db_, path_, "SELECT id FROM runs ORDER BY id DESC LIMIT 1");
  if (!query.step()) {
    return std::nullopt;
  }
  return query.int64();
}

std::vector<StoredResult> Store::results(std::int64_t run_id) const {
  Stmt query(db_, path_, select_results("results.run_id = ?"));
  query.bind(run_id);
  std::vector<StoredResult> out;
  while (query.step()) {
    out.push_back(read_result(query));
  }
  return out;
}

std::optional<StoredResult> Store::result(std::int64_t run_id, const std::string& key) const {
  Stmt query(db_, path_, select_results("results.run_id = ? AND results.case_id = ?"));
  query.bind(run_id, as_signed(key_id(key)));
  if (!query.step()) {
    return std::nullopt;
  }
  return read_result(query);
}

std::map<Status, std::int64_t> Store::status_counts(std::int64_t run_id) const {
  Stmt query(db_, path_, "SELECT status, count(*) FROM results WHERE run_id = ? GROUP BY status");
  query.bind(run_id);
  std::map<Status, std::int64_t> counts;
  while (query.step()) {
    const Status status = read_status(query);
    counts[status] += query.int64();  // += : statuses differing only in case parse alike
  }
  return counts;
}

int Store::schema_version() const { return user_version(db_, path_); }

}  // namespace gauntlet
