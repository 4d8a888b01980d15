// gauntlet_synth_history: a results database with a history of releases, for the dashboard's
// browser test and its benchmark (docs/dashboard.md#testing-and-benchmarks). Two ways:
//
//   gauntlet_synth_history --from REAL.db --into OUT.db --releases N [--hostile]
//     N releases before the latest run of REAL.db, a week apart, made from that run's results:
//     - times drift by under 1% a release;
//     - cases of ops whose name starts with 'm' are 12% faster before the middle release (a step
//       the change-point search finds), those of ops starting with 's' 10% faster in every
//       release before the real one (speed regressions of the latest release);
//     - the run's failures are passes until three releases before it, and half of them (by case
//       id) until the real one (accuracy regressions of the latest release);
//     - its fallbacks appear a third of the way in, on half the cases (by id), and on the others
//       in the real run (new fallbacks of the latest release).
//     The real run comes last, as the latest release. --hostile writes a case key, an error
//     text, a graph break's reason and a recompile's guard holding markup into the real run (the
//     dashboard must show them as text).
//
//   gauntlet_synth_history --into OUT.db --releases N --cases M
//     N releases of M synthetic cases (backend sim, suite bench), written with plain SQL
//     inserts: 50 x 100,000 results take seconds.
//
// Deterministic: the same arguments give the same database. Not for users; no torch.
#include <fmt/format.h>
#include <sqlite3.h>

#include <CLI/CLI.hpp>
#include <cstdint>
#include <filesystem>
#include <iostream>
#include <stdexcept>
#include <string>

#include "gauntlet/analysis/dates.h"
#include "gauntlet/base/sqlite.h"
#include "gauntlet/store/store.h"

namespace {

namespace fs = std::filesystem;
using namespace gauntlet;

[[noreturn]] void raise(const std::string& message, int = 0) { throw std::runtime_error(message); }

class Stmt : public sqlite::Stmt {
 public:
  Stmt(sqlite3* db, const std::string& path, std::string_view sql) : sqlite::Stmt(raise, db, path, sql) {}
};

// A number in [0, 1) for (i, salt): splitmix64.
double unit(std::int64_t i, std::uint64_t salt) {
  std::uint64_t z = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + salt * 0xbf58476d1ce4e5b9ULL + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// started_at of a run `weeks` weeks before `at` (ISO 8601 UTC).
std::string weeks_before(const std::string& at, int weeks) {
  const auto day = dates::parse_date(at.substr(0, 10));
  if (!day) raise("the run's started_at '" + at + "' has no date");
  return dates::civil_from_days(*day - 7 * weeks) + (at.size() > 10 ? at.substr(10) : "T00:00:00Z");
}

// Folds the write-ahead log into the database and closes it: a reader of a database with a large
// log pays a log lookup for every page it reads.
void close(sqlite3* db, const std::string& path) {
  sqlite::exec(raise, db, path, "PRAGMA wal_checkpoint(TRUNCATE)");
  if (sqlite3_close(db) != SQLITE_OK) raise(path + ": cannot close (a statement is still open)");
}

// A fresh database of the current schema at `path`, open for raw inserts.
sqlite3* create(const std::string& path) {
  for (const char* suffix : {"", "-wal", "-shm"}) fs::remove(path + suffix);
  Store::open(path, Store::OpenMode::ReadWrite);  // the schema, as gauntlet writes it
  sqlite3* db = nullptr;
  if (sqlite3_open(path.c_str(), &db) != SQLITE_OK) raise(path + ": cannot open");
  sqlite::exec(raise, db, path, "PRAGMA synchronous = OFF; PRAGMA journal_mode = WAL;");
  return db;
}

void from_real(const std::string& from, const std::string& into, int releases, bool hostile) {
  sqlite3* db = create(into);
  sqlite::exec(raise, db, into, fmt::format("ATTACH DATABASE '{}' AS src", from));
  std::int64_t real = 0;
  std::string started, release;
  {
    Stmt q(db, into, "SELECT id, started_at, release FROM src.runs ORDER BY id DESC LIMIT 1");
    if (!q.step()) raise(from + ": no run");
    real = q.int64();
    started = q.text();
    release = q.text();
  }
  sqlite::Transaction t(raise, db, into);
  sqlite::exec(raise, db, into, "INSERT INTO cases SELECT * FROM src.cases");
  const std::string columns =
      "release, build_id, backend, backend_version, torch_version, host, cpu, blas, build_config, "
      "threads, suite, "
      "filter, shard, started_at, finished_at, config_json, gauntlet_version, price_per_device_hour";
  for (int i = 0; i <= releases; ++i) {
    const int weeks = releases - i;  // the real run: 0
    const std::string name = weeks == 0 ? release : fmt::format("{}~h{:02d}", release, i + 1);
    Stmt run(db, into,
             "INSERT INTO runs(" + columns +
                 ") SELECT ?, build_id, backend, backend_version, torch_version, host, cpu, "
                 "blas, build_config, threads, suite, filter, shard, ?, ?, config_json, "
                 "gauntlet_version, price_per_device_hour FROM src.runs "
                 "WHERE id = ?");
    const std::string at = weeks_before(started, weeks);
    run.bind(name, at, at, real).exec();
    const std::int64_t id = sqlite3_last_insert_rowid(db);
    // Every column copied; the history's changes are made by the UPDATEs below.
    constexpr const char* kColumns =
        "case_id, status, attempt, rtol, atol, tolerance_profile, max_abs_err, max_rel_err, mismatches, numel, "
        "mismatch_frac, max_ulp, nan_inf_ok, worst, error, reason, first_us, median_us, p10_us, p90_us, reps, "
        "peak_mem_bytes, fallback_ops, graph_breaks, recompiles, compile_ms, sim_time_us, golden_source, "
        "golden_entry, golden_us, device_slot, flaky, samples, algbw_gbps, busbw_gbps, regions, work_items, cv";
    sqlite::exec(raise, db, into,
                 fmt::format("INSERT INTO results(run_id, {0}) SELECT {1}, {0} FROM src.results WHERE run_id = {2}",
                             kColumns, id, real));
    if (weeks == 0) break;
    // Drift under 1%, a step before the middle release, failures and fallbacks not there yet.
    const double drift = 1 + (unit(i, 1) - 0.5) * 0.02;
    const double step = i < releases / 2 ? 0.88 : 1.0;
    sqlite::exec(raise, db, into,
                 fmt::format("UPDATE results SET median_us = median_us * {0}, sim_time_us = sim_time_us * {0} "
                             "WHERE run_id = {1}",
                             drift, id));
    sqlite::exec(raise, db, into,
                 fmt::format("UPDATE results SET median_us = median_us * {0}, sim_time_us = sim_time_us * {0} "
                             "WHERE run_id = {1} AND case_id IN (SELECT id FROM cases WHERE target LIKE 'm%')",
                             step, id));
    sqlite::exec(raise, db, into,
                 fmt::format("UPDATE results SET median_us = median_us * 0.9, sim_time_us = sim_time_us * 0.9 "
                             "WHERE run_id = {} AND case_id IN (SELECT id FROM cases WHERE target LIKE 's%')",
                             id));
    sqlite::exec(raise, db, into,
                 fmt::format("UPDATE results SET status = 'PASS', error = '' WHERE run_id = {} AND status IN "
                             "('FAIL', 'ERROR') AND ({} OR case_id % 2 = 0)",
                             id, weeks > 3 ? "1" : "0"));
    sqlite::exec(raise, db, into,
                 fmt::format("UPDATE results SET fallback_ops = '[]' WHERE run_id = {} AND ({} OR case_id % 2 = 0)", id,
                             i < releases / 3 ? "1" : "0"));
  }
  if (hostile) {
    const std::string markup = "<script>window.__pwned=1</script><img src=x onerror=\"window.__pwned=1\">";
    // One case's key, everywhere it is shown; and the error text of the real run's first result
    // (made a failure, so that it is a regression with a drill-down).
    Stmt key(db, into, "UPDATE cases SET key = key || ? WHERE id = (SELECT MIN(case_id) FROM results)");
    key.bind(std::string_view(markup)).exec();
    Stmt err(db, into,
             "UPDATE results SET status = 'FAIL', error = ? WHERE run_id = (SELECT MAX(id) FROM "
             "runs) AND case_id = "
             "(SELECT MIN(case_id) FROM results)");
    err.bind("injected: " + markup).exec();
    // A graph break's reason and a recompile's guard, as the coverage page shows them.
    Stmt why(db, into,
             "UPDATE results SET graph_breaks = 1, recompiles = 1, reason = 'graph breaks: ' || ? || "
             "' (x.py:1); recompiles: ' || ? WHERE run_id = (SELECT MAX(id) FROM runs) AND case_id = "
             "(SELECT MIN(case_id) FROM results)");
    why.bind("break " + markup, "guard " + markup).exec();
  }
  t.commit();
  sqlite::exec(raise, db, into, "DETACH DATABASE src");
  close(db, into);
  std::cout << fmt::format("synth_history: {} releases of {} into {}\n", releases + 1, from, into);
}

constexpr const char* kDtypes[] = {"f32", "bf16", "f16", "i32"};

void synthetic(const std::string& into, int releases, std::int64_t cases) {
  sqlite3* db = create(into);
  sqlite::Transaction t(raise, db, into);
  {
    Stmt c(db, into,
           "INSERT INTO cases(id, key, kind, target, dtype, mode, layout, shapes, args) VALUES(?, "
           "?, 'op', ?, ?, "
           "'eager', 'contig', ?, '')");
    for (std::int64_t i = 0; i < cases; ++i) {
      const std::string target = fmt::format("bench{}", i % 500);
      const std::string dtype = kDtypes[i % 4];
      const std::string key = fmt::format("op/{}/{}/{}/contig/eager", target, dtype, i);
      c.bind(sqlite::as_signed(key_id(key)), key, target, dtype, std::to_string(i)).exec();
    }
  }
  {
    Stmt run(db, into,
             "INSERT INTO runs(release, backend, backend_version, suite, started_at, finished_at) "
             "VALUES(?, 'sim', "
             "'sim 1.0', 'bench', ?, ?)");
    Stmt r(db, into,
           "INSERT INTO results(run_id, case_id, status, max_abs_err, max_rel_err, median_us, "
           "reps, fallback_ops, "
           "graph_breaks, recompiles, sim_time_us) VALUES(?, ?, ?, ?, ?, ?, 5, ?, 0, 0, ?)");
    for (int rel = 0; rel < releases; ++rel) {
      const std::string at = weeks_before("2026-11-30T10:00:00Z", releases - 1 - rel);
      run.bind(fmt::format("2026.{:02d}", rel + 1), at, at).exec();
      const std::int64_t id = sqlite3_last_insert_rowid(db);
      const double drift = 1 + (unit(rel, 3) - 0.5) * 0.02 + (rel >= releases * 2 / 3 ? 0.10 : 0.0);
      for (std::int64_t i = 0; i < cases; ++i) {
        const std::string key = fmt::format("op/bench{}/{}/{}/contig/eager", i % 500, kDtypes[i % 4], i);
        const bool fails = unit(i, 5) < 0.01 || (rel >= releases - 2 && unit(i, 6) < 0.002);
        const bool falls_back = unit(i, 7) < 0.001 * (1 + rel / 10);
        const double t = (5 + 1000 * unit(i, 8)) * drift;
        r.bind(id, sqlite::as_signed(key_id(key)), fails ? "FAIL" : "PASS", fails ? 0.5 : 1e-7, fails ? 0.4 : 1e-7,
               t * 1.5, falls_back ? "[\"aten::bench.out\"]" : "[]", t)
            .exec();
      }
    }
  }
  t.commit();
  close(db, into);
  std::cout << fmt::format("synth_history: {} releases of {} cases into {}\n", releases, cases, into);
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app("a results database with a history of releases (tests and benchmarks)");
  std::string from, into;
  int releases = 10;
  std::int64_t cases = 0;
  bool hostile = false;
  app.add_option("--from", from, "a database whose latest run becomes the latest release");
  app.add_option("--into", into, "the database to write (replaced)")->required();
  app.add_option("--releases", releases, "releases of history (with --from: before the real one)");
  app.add_option("--cases", cases, "without --from: synthetic cases per release");
  app.add_flag("--hostile", hostile, "with --from: a case key and an error text holding markup");
  CLI11_PARSE(app, argc, argv);
  try {
    if (!from.empty()) {
      from_real(from, into, releases, hostile);
    } else if (cases > 0) {
      synthetic(into, releases, cases);
    } else {
      raise("pass --from or --cases");
    }
  } catch (const std::exception& e) {
    std::cerr << "synth_history: error: " << e.what() << "\n";
    return 2;
  }
  return 0;
}
