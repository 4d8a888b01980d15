// The store's schema: a new database, migration of older ones, and files that are not ours.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include "gauntlet/base/outcome_fields.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/worker_protocol.h"
#include "gauntlet/store/store.h"
#include "gauntlet/store/store_reader.h"
#include "store_test_support.h"

namespace gauntlet {
namespace {

using namespace store_testing;
using Mode = Store::OpenMode;

// ---- Schema

TEST_F(StoreTest, NewDatabaseHasTheCurrentSchema) {
  const std::string path = file("g.db");
  EXPECT_EQ(Store::open(path, Mode::ReadWrite)->schema_version(), kSchemaVersion);
  RawDb db(path);
  EXPECT_EQ(db.scalar("PRAGMA user_version"), std::to_string(kSchemaVersion));
  EXPECT_EQ(db.scalar("SELECT value FROM meta WHERE key = 'application'"), "gauntlet");
  EXPECT_EQ(db.scalar("SELECT value FROM meta WHERE key = 'schema_version'"), std::to_string(kSchemaVersion));
  EXPECT_EQ(db.scalar("PRAGMA journal_mode"), "wal");
  // Dropped in schema 3: maintaining it halved ingestion; the primary key serves counts by run.
  EXPECT_EQ(db.scalar("SELECT count(*) FROM sqlite_master WHERE name = 'results_by_status'"), "0");
  for (const char* column : {"graph_breaks", "recompiles", "compile_ms", "sim_time_us"}) {
    EXPECT_EQ(db.scalar("SELECT count(*) FROM pragma_table_info('results') WHERE name = '" + std::string(column) + "'"),
              "1")
        << column;
  }
}

TEST_F(StoreTest, ASchemaOneDatabaseIsMigratedKeepingItsResults) {
  // Make a schema-1 database: today's schema without the columns later migrations add (every
  // column but schema 1's, whose lists are frozen, so a new migration needs no change here).
  const std::string path = file("v1.db");
  std::int64_t run = 0;
  {
    auto store = Store::open(path, Mode::ReadWrite);
    run = store->begin_run(sample_run());
    store->add_result(run, key(kAdd), sample_outcome());
  }
  {
    RawDb db(path);
    const std::map<std::string, std::set<std::string>> schema_one = {
        {"results", {"run_id",
                     "case_id",
                     "status",
                     "attempt",
                     "rtol",
                     "atol",
                     "tolerance_profile",
                     "max_abs_err",
                     "max_rel_err",
                     "mismatches",
                     "numel",
                     "mismatch_frac",
                     "max_ulp",
                     "nan_inf_ok",
                     "worst",
                     "error",
                     "reason",
                     "first_us",
                     "median_us",
                     "p10_us",
                     "p90_us",
                     "reps",
                     "peak_mem_bytes",
                     "fallback_ops",
                     "graph_breaks",
                     "recompiles",
                     "compile_ms",
                     "sim_time_us"}},
        {"runs",
         {"id", "release", "build_id", "backend", "backend_version", "torch_version", "host", "cpu", "blas",
          "build_config", "threads", "suite", "filter", "shard", "started_at", "finished_at", "config_json",
          "gauntlet_version"}}};
    int dropped = 0;
    for (const auto& [table, keep] : schema_one) {
      std::stringstream columns(db.scalar("SELECT group_concat(name, ',') FROM pragma_table_info('" + table + "')"));
      for (std::string column; std::getline(columns, column, ',');) {
        if (keep.count(column)) continue;
        db.exec("ALTER TABLE " + table + " DROP COLUMN " + column);
        ++dropped;
      }
    }
    ASSERT_GE(dropped, 13) << "the columns of migrations 2 to 8";
    db.exec("PRAGMA user_version = 1");
    db.exec("UPDATE meta SET value = '1' WHERE key = 'schema_version'");
  }
  auto store = Store::open(path, Mode::ReadWrite);
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  auto results = store->results(run);
  ASSERT_EQ(results.size(), 1u);
  EXPECT_EQ(results[0].outcome.status, sample_outcome().status);
  EXPECT_EQ(results[0].outcome.metrics.mismatches, sample_outcome().metrics.mismatches);
  EXPECT_EQ(results[0].outcome.golden_source, "computed");  // the column's default
  EXPECT_EQ(results[0].outcome.golden_entry, "");
  EXPECT_TRUE(results[0].outcome.executed_ops.empty());  // '[]', schema 8's default
}

TEST_F(StoreTest, GoldenProvenanceRoundTrips) {
  const std::string path = file("g.db");
  auto store = Store::open(path, Mode::ReadWrite);
  const std::int64_t run = store->begin_run(sample_run());
  Outcome o = sample_outcome();
  o.golden_source = "store";
  o.golden_entry = "0123456789abcdef0123456789abcdef";
  o.timing.golden_us = 12.5;
  store->add_result(run, key(kAdd), o);
  store->flush();
  auto r = store->results(run).at(0).outcome;
  EXPECT_EQ(r.golden_source, "store");
  EXPECT_EQ(r.golden_entry, o.golden_entry);
  EXPECT_EQ(r.timing.golden_us, 12.5);
}

TEST_F(StoreTest, ReopeningKeepsDataAndSchema) {
  const std::string path = file("g.db");
  std::int64_t run = 0;
  {
    auto store = Store::open(path, Mode::ReadWrite);
    run = store->begin_run(sample_run());
    store->add_result(run, key(kAdd), Outcome{});
  }
  auto store = Store::open(path, Mode::ReadWrite);
  EXPECT_EQ(store->schema_version(), kSchemaVersion);
  EXPECT_EQ(store->runs().size(), 1u);
  EXPECT_EQ(store->results(run).size(), 1u);
  EXPECT_EQ(RawDb(path).scalar("SELECT count(*) FROM meta WHERE key = 'application'"), "1");
}

TEST_F(StoreTest, EmptyFileBecomesADatabaseInReadWrite) {
  const std::string path = file("empty.db");
  write_bytes(path, "");
  EXPECT_EQ(open_error(path, Mode::ReadOnly), path + ": not a Gauntlet database (no meta table)");
  EXPECT_EQ(Store::open(path, Mode::ReadWrite)->schema_version(), kSchemaVersion);
}

TEST_F(StoreTest, ANewerSchemaIsRefusedInBothModes) {
  const std::string path = file("g.db");
  Store::open(path, Mode::ReadWrite);
  RawDb(path).exec("PRAGMA user_version = " + std::to_string(kSchemaVersion + 1));
  const std::string bytes = read_bytes(path);

  const std::string want = path + ": database schema version " + std::to_string(kSchemaVersion + 1) +
                           " is newer than this gauntlet (" + std::to_string(kSchemaVersion) + ")";
  EXPECT_EQ(open_error(path, Mode::ReadWrite), want);
  EXPECT_EQ(open_error(path, Mode::ReadOnly), want);
  EXPECT_EQ(read_bytes(path), bytes);
}

// ---- Files that are not ours

TEST_F(StoreTest, AForeignDatabaseIsRejectedAndLeftUntouched) {
  const std::string path = file("other.db");
  RawDb(path).exec("CREATE TABLE t(x); INSERT INTO t VALUES (1), ('two');");
  const std::string bytes = read_bytes(path);

  const std::string want = path + ": not a Gauntlet database (no meta table)";
  EXPECT_EQ(open_error(path, Mode::ReadWrite), want);
  EXPECT_EQ(open_error(path, Mode::ReadOnly), want);
  EXPECT_EQ(read_bytes(path), bytes);
  EXPECT_FALSE(fs::exists(path + "-wal"));
  EXPECT_FALSE(fs::exists(path + "-journal"));
}

TEST_F(StoreTest, ADatabaseWithSomeoneElsesMetaTableIsRejected) {
  const std::string path = file("other.db");
  RawDb(path).exec("CREATE TABLE meta(k, v); INSERT INTO meta VALUES ('application', 'gauntlet');");
  const std::string bytes = read_bytes(path);

  const std::string want = path + ": not a Gauntlet database (meta has no application 'gauntlet')";
  EXPECT_EQ(open_error(path, Mode::ReadWrite), want);
  EXPECT_EQ(open_error(path, Mode::ReadOnly), want);
  EXPECT_EQ(read_bytes(path), bytes);
}

TEST_F(StoreTest, AFileThatIsNotSqliteIsRejectedAndLeftUntouched) {
  const std::string path = file("notes.db");
  std::string bytes = "these are notes, not a database\n";
  for (int i = 0; i < 7; ++i) {
    bytes += bytes;  // past SQLite's 100-byte header
  }
  write_bytes(path, bytes);

  // Note [Damage named as damage]: a SQLite file whose header was overwritten reads the same.
  const std::string not_sqlite =
      ": not a SQLite database, or one whose header is damaged (if it held data, restore it from a copy)";
  EXPECT_EQ(open_error(path, Mode::ReadWrite), path + not_sqlite);
  EXPECT_EQ(open_error(path, Mode::ReadOnly), path + not_sqlite);
  EXPECT_EQ(read_bytes(path), bytes);

  const std::string tiny = file("tiny.db");
  write_bytes(tiny, "hi\n");
  EXPECT_EQ(open_error(tiny, Mode::ReadWrite), tiny + not_sqlite);
  EXPECT_EQ(read_bytes(tiny), "hi\n");
}

TEST_F(StoreTest, AMissingFileIsRejectedInReadOnly) {
  const std::string path = file("missing.db");
  EXPECT_EQ(open_error(path, Mode::ReadOnly), path + ": no such database");
  EXPECT_FALSE(fs::exists(path));
}

TEST_F(StoreTest, AnUnopenableFileIsReportedOnOneLine) {
  const std::string path = file("no/such/dir/g.db");
  const std::string error = open_error(path, Mode::ReadWrite);
  EXPECT_EQ(error.rfind(path + ": cannot open database", 0), 0u) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos);
}

}  // namespace
}  // namespace gauntlet
