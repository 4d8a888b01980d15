// End-to-end tests: the real gauntlet binary, the real suites, real SQLite files.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "e2e_support.h"
#include "gauntlet/base/case_key.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/core/collective/collective.h"
#include "gauntlet/golden/golden.h"
#include "gauntlet/golden/golden_store.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/store/store.h"
#include "gauntlet/suites/op_spec.h"

namespace fs = std::filesystem;
using e2e::E2E;
using e2e::Result;
using e2e::slurp;
using gauntlet::Status;

namespace {

TEST_F(E2E, ListOpsPrintsAtLeast120Ops) {
  Result r = gauntlet("list --ops");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GE(std::count(r.out.begin(), r.out.end(), '\n'), 120);
}

TEST_F(E2E, FullSuiteHasAtLeast150kCases) {
  Result r = gauntlet("list --suite full --count");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_GE(std::stoll(r.out), 150000);
}

TEST_F(E2E, ListFilterAndJson) {
  Result all = gauntlet("list --suite smoke --count");
  Result some = gauntlet("list --suite smoke --filter 'op/exp/*' --count");
  ASSERT_EQ(all.code, 0);
  ASSERT_EQ(some.code, 0);
  EXPECT_LT(std::stoll(some.out), std::stoll(all.out));
  EXPECT_GT(std::stoll(some.out), 0);
  Result json = gauntlet("list --suite smoke --filter 'op/exp/f32/*' --json");
  ASSERT_EQ(json.code, 0);
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("json_schema_version"), 1);
  for (const auto& c : j.at("cases")) EXPECT_EQ(c.at("key").get<std::string>().rfind("op/exp/f32/", 0), 0u);
}

// Runs a slice of the smoke suite, with a tolerance file that makes bf16 results fail, then
// checks that repro --json reproduces exactly the stored status and error metrics.
TEST_F(E2E, ReproReproducesStoredOutcomes) {
  fs::path suites =
      suites_with({{"tolerances.yaml", "rules:\n  - dtypes: [bf16]\n    rtol: 1.0e-6\n    atol: 1.0e-9\n"}});
  const std::string db = (dir_ / "run.db").string();
  Result run = gauntlet("run --suite smoke --backend cpu --db " + db + " --suites-dir " + suites.string() +
                        " --filter 'op/exp/*:op/add/*:op/sum/*:op/hardswish/*:op/mm/*:op/layer_norm/*' --release e2e");
  ASSERT_EQ(run.code, 0) << run.err;
  EXPECT_NE(run.out.find("repro: gauntlet repro '"), std::string::npos) << run.out;

  auto store = gauntlet::Store::open(db, gauntlet::Store::OpenMode::ReadOnly);
  auto runs = store->runs();
  ASSERT_EQ(runs.size(), 1u);
  auto results = store->results(runs[0].id);
  ASSERT_GT(results.size(), 50u);
  std::map<Status, int> seen;
  int checked = 0;
  for (std::size_t i = 0; i < results.size(); ++i) {
    const auto& stored = results[i].outcome;
    if (!gauntlet::is_failure(stored.status) && i % 7 != 0) continue;
    // Every failing case, and a sample of the rest.
    Result r = gauntlet("repro '" + stored.key + "' --backend cpu --json --suites-dir " + suites.string());
    ASSERT_TRUE(r.code == 0 || r.code == 1) << r.err;
    gauntlet::Outcome again = gauntlet::outcome_from_json(nlohmann::json::parse(r.out));
    EXPECT_EQ(again.status, stored.status) << stored.key;
    EXPECT_EQ(again.metrics.mismatches, stored.metrics.mismatches) << stored.key;
    EXPECT_EQ(again.metrics.numel, stored.metrics.numel) << stored.key;
    EXPECT_DOUBLE_EQ(again.metrics.max_abs_err, stored.metrics.max_abs_err) << stored.key;
    EXPECT_EQ(again.metrics.max_rel_err == stored.metrics.max_rel_err ||
                  (std::isnan(again.metrics.max_rel_err) && std::isnan(stored.metrics.max_rel_err)),
              true)
        << stored.key;
    EXPECT_EQ(again.metrics.max_ulp, stored.metrics.max_ulp) << stored.key;
    EXPECT_EQ(again.metrics.worst, stored.metrics.worst) << stored.key;
    EXPECT_EQ(again.metrics.nan_inf_ok, stored.metrics.nan_inf_ok) << stored.key;
    EXPECT_EQ(again.rtol, stored.rtol) << stored.key;
    EXPECT_EQ(again.atol, stored.atol) << stored.key;
    EXPECT_EQ(again.error, stored.error) << stored.key;
    EXPECT_EQ(r.code, gauntlet::is_failure(stored.status) ? 1 : 0);
    ++seen[stored.status];
    ++checked;
  }
  EXPECT_GT(checked, 10);
  EXPECT_GT(seen[Status::Fail], 0) << "the sample must include failing cases";
  EXPECT_GT(seen[Status::Pass], 0);
}

TEST_F(E2E, InputsAreTheSameInEveryProcess) {
  const std::string key = "op/addcmul/f32/7x1x5,1x3x5,5/contig/eager";
  Result a = gauntlet("repro '" + key + "' --json");
  Result b = gauntlet("repro '" + key + "' --json");
  ASSERT_EQ(a.code, 0) << a.err;
  auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
  ASSERT_EQ(ja.at("inputs").size(), 3u);
  EXPECT_EQ(ja.at("inputs"), jb.at("inputs"));
  // And the same as this test process makes them.
  gauntlet::CaseKey k = gauntlet::CaseKey::parse(key);
  auto inputs = gauntlet::make_inputs(k, *gauntlet::find_op(k.target));
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    char buf[17];
    std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(gauntlet::fingerprint({inputs[i]})));
    EXPECT_EQ(ja["inputs"][i]["fingerprint"].get<std::string>(), buf);
  }
}

// Note [Keys no suite holds]: repro names the suites that hold a key and refuses one that none
// holds unless --any-key (a shape typed by hand proves nothing about a release).
TEST_F(E2E, ReproNamesTheSuitesHoldingAKeyAndRefusesAKeyNoneHolds) {
  Result held = gauntlet("repro 'op/addcmul/f32/7x1x5,1x3x5,5/contig/eager'");
  ASSERT_EQ(held.code, 0) << held.err;
  EXPECT_NE(held.out.find("suites   full, nightly, nightly-all, release, smoke\n"), std::string::npos) << held.out;
  const std::string adhoc = "op/addcmul/f32/7x1x6,1x3x6,6/contig/eager";
  Result refused = gauntlet("repro '" + adhoc + "'");
  EXPECT_EQ(refused.code, 2);
  EXPECT_EQ(refused.out, "");
  EXPECT_NE(refused.err.find("case " + adhoc + " is in no suite of "), std::string::npos) << refused.err;
  EXPECT_NE(refused.err.find("give --any-key to run it anyway"), std::string::npos) << refused.err;
  Result anyway = gauntlet("repro '" + adhoc + "' --any-key");
  ASSERT_EQ(anyway.code, 0) << anyway.err;
  EXPECT_NE(anyway.out.find("holds this case (--any-key)\n"), std::string::npos) << anyway.out;
  EXPECT_NE(anyway.out.find("verdict  PASS"), std::string::npos) << anyway.out;
  // --json and --in-process check the same way.
  EXPECT_EQ(gauntlet("repro '" + adhoc + "' --json").code, 2);
  EXPECT_EQ(gauntlet("repro '" + adhoc + "' --in-process").code, 2);
  EXPECT_EQ(gauntlet("repro '" + adhoc + "' --json --any-key").code, 0);
}

TEST_F(E2E, ShowSummarizesByStatusWithReproCommands) {
  const std::string db = (dir_ / "show.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --db " + db + " --filter 'op/hardswish/*' --quiet").code, 0);
  Result show = gauntlet("show --db " + db + " --status XFAIL");
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("PASS "), std::string::npos);
  EXPECT_NE(show.out.find("XFAIL"), std::string::npos);
  EXPECT_NE(
      show.out.find("repro: gauntlet repro 'op/hardswish/f32/64/contig/eager/values=special' --db " + db + " --run 1"),
      std::string::npos)
      << show.out;
  Result json = gauntlet("show --db " + db + " --json --status all");
  ASSERT_EQ(json.code, 0);
  auto j = nlohmann::json::parse(json.out);
  EXPECT_EQ(j.at("json_schema_version"), 1);
  EXPECT_GT(j.at("results").size(), 5u);
}

// Note [Two binaries] (harness/cli_front/front.cpp): `gauntlet` loads no libtorch, runs the commands
// that read stored runs itself, and hands every other one to gauntlet-torch beside it.
TEST_F(E2E, TheFrontBinaryLoadsNoTorchAndHandsTheOtherCommandsOver) {
  // What the dynamic loader would load for it (what ldd prints).
  Result libs = gauntlet("", "LD_TRACE_LOADED_OBJECTS=1");
  ASSERT_EQ(libs.code, 0) << libs.err;
  EXPECT_NE(libs.out.find("libsqlite3"), std::string::npos) << libs.out;
  EXPECT_EQ(libs.out.find("libtorch"), std::string::npos) << libs.out;
  EXPECT_EQ(libs.out.find("libc10"), std::string::npos) << libs.out;

  const std::string db = (dir_ / "two.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --db " + db + " --filter 'op/add/*' --quiet").code, 0);
  // A copy of the front alone: the torch-free commands work, the others say what is missing.
  const fs::path alone = dir_ / "alone" / "gauntlet";
  fs::create_directories(alone.parent_path());
  fs::copy_file(GAUNTLET_BIN, alone);
  const auto run_alone = [&](const std::string& args) {
    Result r;
    const std::string cmd =
        alone.string() + " " + args + " >" + (dir_ / "out").string() + " 2>" + (dir_ / "err").string();
    const int status = std::system(cmd.c_str());
    r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
    r.out = slurp(dir_ / "out");
    r.err = slurp(dir_ / "err");
    return r;
  };
  Result show = run_alone("show --db " + db);
  EXPECT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("PASS "), std::string::npos) << show.out;
  Result bad = run_alone("show --db " + db + " --run 99");
  EXPECT_EQ(bad.code, 2) << bad.err;
  Result list = run_alone("list --suites");
  EXPECT_EQ(list.code, 4) << list.err;
  EXPECT_EQ(std::count(list.err.begin(), list.err.end(), '\n'), 1) << list.err;
  EXPECT_NE(list.err.find("gauntlet: error: cannot start " + (alone.parent_path() / "gauntlet-torch").string()),
            std::string::npos)
      << list.err;
  // Through the real front, the same command is handed over and works.
  Result handed = gauntlet("list --suites");
  EXPECT_EQ(handed.code, 0) << handed.err;
  EXPECT_NE(handed.out.find("smoke"), std::string::npos) << handed.out;
}

TEST_F(E2E, GateExitsOneOnFailures) {
  fs::path suites = suites_with({{"tolerances.yaml", "rules:\n  - dtypes: [f32]\n    rtol: 0\n    atol: 0\n"}});
  Result r = gauntlet("run --suite smoke --db " + (dir_ / "g.db").string() + " --suites-dir " + suites.string() +
                      " --filter 'op/mm/f32/*' --gate --quiet");
  EXPECT_EQ(r.code, 1) << r.out << r.err;
}

// Note [Triage] in analysis/triage.cpp, through the real binary: `add` (f32) 20% slower in r2 and
// 44% in r3 (simulated time), against r1.
TEST_F(E2E, AnAcknowledgedSlowdownIsListedApartSurvivesInTheDatabaseAndIsFlaggedAgainWhenItGrows) {
  const std::string db = (dir_ / "t.db").string();
  const std::string run = "run --suite smoke --backend sim --filter 'op/add/f32/*' --quiet --db " + db;
  ASSERT_EQ(gauntlet(run + " --release r1").code, 0);
  ASSERT_EQ(gauntlet(run + " --release r2", "GAUNTLET_SIM_FAULTS='op=aten::add*,kind=slow,factor=1.2'").code, 0);
  ASSERT_EQ(gauntlet(run + " --release r3", "GAUNTLET_SIM_FAULTS='op=aten::add*,kind=slow,factor=1.44'").code, 0);
  const std::string r2 = " --db " + db + " --run 2 --baseline 1";

  Result before = gauntlet("compare" + r2);
  ASSERT_EQ(before.code, 0) << before.err;
  ASSERT_NE(before.out.find("op/add/f32/eager: "), std::string::npos) << before.out;
  // the op's groups and the suite's own speed finding
  for (const std::string subject : {"op/add", "suite:smoke"}) {
    Result ack = gauntlet("triage ack " + subject + r2 + " --note 'known: the add rewrite' --by alice");
    ASSERT_EQ(ack.code, 0) << ack.err;
    EXPECT_NE(ack.out.find("acknowledged: ack "), std::string::npos) << ack.out;
  }
  Result list = gauntlet("triage list --db " + db);  // another process: the acks are in the database
  EXPECT_NE(list.out.find("op/add/f32/eager slower  on sim  by alice"), std::string::npos) << list.out;

  Result after = gauntlet("compare" + r2 + " --gate speed");
  EXPECT_EQ(after.code, 1) << "acknowledged still gates by default\n" << after.out;
  const std::size_t apart = after.out.find("acknowledged (");
  ASSERT_NE(apart, std::string::npos) << after.out;
  EXPECT_EQ(after.out.substr(0, apart).find("op/add/f32/eager: "), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("by alice on ", apart), std::string::npos) << after.out;
  EXPECT_NE(after.out.find("acknowledged, gating without --honour-acks"), std::string::npos) << after.out;
  EXPECT_EQ(gauntlet("compare" + r2 + " --gate speed --honour-acks").code, 0);

  Result grown = gauntlet("compare --db " + db + " --run 3 --baseline 1 --gate speed --honour-acks");
  EXPECT_EQ(grown.code, 1) << grown.out;
  EXPECT_NE(grown.out.find("open again"), std::string::npos) << grown.out;

  Result unack = gauntlet("triage unack op/add --db " + db + " --by bob");
  EXPECT_EQ(unack.code, 0) << unack.err;
  EXPECT_NE(unack.out.find("removed: ack "), std::string::npos) << unack.out;
  EXPECT_EQ(gauntlet("compare" + r2 + " --gate speed --honour-acks").code, 1);
  Result all = gauntlet("triage list --all --db " + db);
  EXPECT_NE(all.out.find("removed by bob"), std::string::npos) << all.out;
}

TEST_F(E2E, BadInputGivesOneLineErrorAndExitTwo) {
  expect_one_line_error(gauntlet("repro 'op/no_such_op/f32/4/contig/eager'"), "unknown op 'no_such_op'");
  expect_one_line_error(gauntlet("repro 'op/exp/f33/4/contig/eager'"), "unknown dtype 'f33'");
  expect_one_line_error(gauntlet("repro 'op/exp/f32/4x/contig/eager'"), "at column 14");
  expect_one_line_error(gauntlet("list --suite no_such_suite"), "unknown suite 'no_such_suite'");
  expect_one_line_error(gauntlet("list --suite smoke --filter 'op/exp::x'"), "empty pattern");
  expect_one_line_error(gauntlet("run --suite smoke --db " + (dir_ / "x.db").string() + " --filter 'nothing*'"),
                        "matches no case");
  expect_one_line_error(gauntlet("run --suite smoke --db " + (dir_ / "x.db").string() + " --backend tpu"),
                        "unknown backend 'tpu'");
  expect_one_line_error(gauntlet("show --db " + (dir_ / "missing.db").string()), "no such database");
  expect_one_line_error(gauntlet("compare --db " + (dir_ / "missing.db").string()), "no such database");
  expect_one_line_error(gauntlet("bench --suite no_such_suite --db " + (dir_ / "b.db").string()),
                        "unknown suite 'no_such_suite'");
  expect_one_line_error(gauntlet("report --weekly --db " + (dir_ / "missing.db").string()), "no such database");
  expect_one_line_error(gauntlet("frobnicate"), "");

  fs::path bad =
      suites_with({{"broken.yaml", "suite: broken\ndescription: x\ngroups:\n  - ops: [exp]\n    dtypes: [f32\n"},
                   {"typo.yaml",
                    "suite: typo\ndescription: x\ngroups:\n  - ops: [exp]\n    dtypes: [f32]\n    shapez: [\"4\"]\n"}});
  Result r = gauntlet("list --suite broken --suites-dir " + bad.string());
  expect_one_line_error(r, "broken.yaml:");
  Result t = gauntlet("list --suite typo --suites-dir " + bad.string());
  expect_one_line_error(t, "typo.yaml:6:5: unknown field 'shapez'");
}

namespace {

// Copies of `db` in `dir` that no command may write to: s99.db and s3.db (another schema version),
// damaged.db (its results table dropped) and flipped.db (a bit-flipped page: Note [Verified on
// open] in store.cpp).
void write_damaged_copies(const fs::path& dir, const std::string& db) {
  const std::string schema99 = (dir / "s99.db").string(), schema3 = (dir / "s3.db").string();
  for (const auto& [path, version] : {std::pair{schema99, 99}, std::pair{schema3, 3}}) {
    fs::copy_file(db, path);
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(path.c_str(), &h), SQLITE_OK);
    sqlite3_exec(h, ("PRAGMA user_version = " + std::to_string(version)).c_str(), nullptr, nullptr, nullptr);
    sqlite3_close(h);
  }
  const std::string damaged = (dir / "damaged.db").string();
  fs::copy_file(db, damaged);
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(damaged.c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "DROP TABLE results", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
  }
  // A bit-flipped file (Note [Verified on open] in store.cpp): the root page of the results table
  // no longer says what kind of b-tree page it is. Only quick_check reads that page before a run
  // would write.
  const std::string flipped = (dir / "flipped.db").string();
  fs::copy_file(db, flipped);
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(flipped.c_str(), &h), SQLITE_OK);
    sqlite3_stmt* q = nullptr;
    ASSERT_EQ(sqlite3_prepare_v2(h,
                                 "SELECT rootpage, (SELECT page_size FROM pragma_page_size) FROM sqlite_master "
                                 "WHERE name = 'results'",
                                 -1, &q, nullptr),
              SQLITE_OK);
    ASSERT_EQ(sqlite3_step(q), SQLITE_ROW);
    const std::int64_t page = sqlite3_column_int64(q, 0), page_size = sqlite3_column_int64(q, 1);
    sqlite3_finalize(q);
    sqlite3_close(h);
    ASSERT_GT(page, 1);
    std::fstream f(flipped, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp((page - 1) * page_size);
    f.put('\x55');
  }
  // A header overwritten (the first bytes SQLite checks), and a file cut short mid-page.
  const std::string header = (dir / "header.db").string(), truncated = (dir / "truncated.db").string();
  fs::copy_file(db, header);
  {
    std::fstream f(header, std::ios::in | std::ios::out | std::ios::binary);
    f << "garbage-header!!";
  }
  fs::copy_file(db, truncated);
  fs::resize_file(truncated, 5000);
}

// A command line (with environment) that must be refused, and the text its one-line error holds.
struct BadInput {
  std::string args, env, needle;
};

// Every bad input of EveryBadInputIsRefusedInOneLineAndTheDatabaseStaysAsItWas: `db` holds two
// runs; `files` is a suites dir of broken suites, `bad_tol` one with a broken tolerances.yaml; the
// damaged copies are write_damaged_copies'; `one` a database of one run. A table.
std::vector<BadInput> bad_inputs(const fs::path& dir, const std::string& db, const fs::path& files,
                                 const fs::path& bad_tol, const fs::path& waivers_twice, const fs::path& waivers_docs,
                                 const std::string& one) {
  const std::string schema99 = (dir / "s99.db").string(), schema3 = (dir / "s3.db").string();
  const std::string damaged = (dir / "damaged.db").string(), flipped = (dir / "flipped.db").string();
  const std::string header = (dir / "header.db").string(), truncated = (dir / "truncated.db").string();
  const std::string fifo = (dir / "fifo").string(), hollow = GAUNTLET_HOLLOW_LIB;
  const std::string small = " --filter 'op/exp/f32/_/contig/eager' --quiet";
  const std::string run = "run --suite smoke --db " + db + small;
  const std::string in = " --suites-dir " + files.string() + " --db " + db + " --quiet";
  return {
      // Options that would lose data or disable a safeguard.
      {"run --suite smoke --db ''" + small, "", "--db: must not be empty"},
      {run + " --timeout 0", "", "--timeout: '0' is not a positive number of seconds"},
      {run + " --timeout -5", "", "--timeout"},
      {run + " --timeout nan", "", "--timeout: 'nan'"},
      {run + " --timeout inf", "", "--timeout: 'inf'"},
      {run + " --collective-timeout 0", "", "--collective-timeout"},
      {run + " --workers -1", "", "--workers: -1 is below the smallest value, 0"},
      {run + " --workers 2x", "", "--workers: '2x' is not an integer"},
      {run + " --retries -1", "", "--retries"},
      {run + " --run-id 0", "", "--run-id: 0 is below the smallest value, 1"},
      {run + " --run-id -5", "", "--run-id"},
      {run + " --run-id 99999999999999999999", "", "--run-id: '99999999999999999999' is not an integer"},
      {run + " --run-id 9007199254740993", "", "--run-id"},
      {"run --resume 0 --db " + db, "", "--resume"},
      // A report that could not be written is refused before the first case (Note [Run reporters]).
      {run + " --junit /dev/null", "", "--junit /dev/null: not a regular file"},
      {run + " --markdown " + dir.string(), "", "a folder, not a file"},
      {run + " --json-lines " + (dir / "nofolder" / "r.jsonl").string(), "", "nofolder/r.jsonl: no folder"},
      {"bench --suite smoke --db " + db + small + " --out " + dir.string(), "", "--out " + dir.string() + ": a folder"},
      {"bench --suite smoke --db " + db + small + " --out " + (dir / "nofolder" / "b.json").string(), "", "no folder"},
      {"run --suite smoke --db " + dir.string() + small, "", "a folder, not a database file"},
      // Note [Input files]: a FIFO is refused, not opened (the open would block), and so is a
      // suites folder that is not one.
      {run + " --keys-file " + fifo, "", "--keys-file " + fifo + ": not a regular file (a FIFO or a device)"},
      {run + " --plan " + fifo + " --shard 0/2", "", "--plan " + fifo + ": not a regular file"},
      {"compare --db " + db + " --waivers " + fifo, "", fifo + ": not a regular file"},
      {"show --db " + fifo, "", fifo + ": not a regular file"},
      {"compare --db " + fifo, "", fifo + ": not a regular file"},
      {"merge " + fifo + " --into " + (dir / "m.db").string(), "", fifo + ": not a regular file"},
      {run + " --suites-dir " + fifo, "", "suites folder " + fifo + ": not a folder"},
      {"list --suite smoke --suites-dir " + (dir / "nosuites").string(), "", "nosuites: no such folder"},
      // Note [Output folders]: a folder of other files is refused and left as it was.
      {"dashboard --db " + db + " --out " + (dir / "others").string(), "",
       "others: the folder holds files Gauntlet did not write"},
      {"repro 'op/exp/f32/_/contig/eager' --bundle " + (dir / "others").string(), "",
       "others: the folder holds files Gauntlet did not write"},
      // A library that is not a backend: every command that runs cases refuses it as run does.
      {run + " --backend plugin:" + hollow, "", "cannot take even contiguous inputs"},
      {"bench --suite smoke --db " + db + small + " --backend plugin:" + hollow, "", "cannot take even contiguous"},
      {"repro 'op/exp/f32/_/contig/eager' --backend plugin:" + hollow, "", "cannot take even contiguous inputs"},
      {"reduce 'op/exp/f32/4/contig/eager' --backend plugin:" + hollow, "", "cannot take even contiguous inputs"},
      // Values that mean nothing, and environment variables checked as their options are.
      {"run --suite smoke --db " + db + " --filter ':' --quiet", "", "--filter: ':' holds no pattern"},
      {"run --suite smoke --db " + db + " --filter '' --quiet", "", "--filter: must not be empty"},
      {"list --suite smoke --filter ':-'", "", "--filter: ':-' holds no pattern"},
      {run + " --build-id \"$(printf 'b\\033[31m')\"", "", "--build-id: must be one line, without control"},
      {run, "GAUNTLET_PROFILE='bad name!'", "$GAUNTLET_PROFILE 'bad name!': use letters"},
      {run, "GAUNTLET_FALLBACKS=bogus", "$GAUNTLET_FALLBACKS='bogus': use auto, backend or dispatcher"},
      {run + " --dynamo-backend 'in ductor'", "", "--dynamo-backend='in ductor': use NAME or NAME@MODULE"},
      {run + " --dynamo-options '[1]'", "", "--dynamo-options='[1]': torch.compile's options are a JSON object"},
      {run, "GAUNTLET_DYNAMO_OPTIONS='{'", "$GAUNTLET_DYNAMO_OPTIONS='{': torch.compile's options are a JSON"},
      {"repro 'op/add/f32/8x8,8x8/contig/compile' --dynamo-backend @x.py", "", "--dynamo-backend='@x.py': use NAME"},
      {"bench --suite smoke --db " + db + small, "GAUNTLET_FALLBACKS=bogus", "$GAUNTLET_FALLBACKS='bogus'"},
      {run, "GAUNTLET_PRICE_PER_DEVICE_HOUR=-1", "GAUNTLET_PRICE_PER_DEVICE_HOUR '-1': not a positive number"},
      {run + " --backend sim", "GAUNTLET_SIM_FAULTS_FILE=/dev/null", "/dev/null: not a regular file"},
      {run + " --reps -1", "", "--reps"},
      {run + " --warmup -1", "", "--warmup"},
      {run + " --min-time -1", "", "--min-time"},
      {run + " --max-time nan", "", "--max-time"},
      {run + " --min-ran 2", "", "--min-ran: '2' is not a fraction from 0 to 1"},
      {run + " --min-ran nan", "", "--min-ran"},
      {run + " --suites-dir ''", "", "--suites-dir: must not be empty"},
      {run + " --golden-store ''", "", "--golden-store: must not be empty"},
      {run + " --golden-store " + (dir / "nowhere").string(), "", "no such golden store"},
      {run + " --record-env 'NEURON_[x]'", "", "--record-env 'NEURON_[x]'"},
      // triage (Note [Triage] in analysis/triage.cpp): nothing is written on a refusal
      {"triage ack --db " + db, "", "triage ack: name what to acknowledge"},
      {"triage ack op/exp --db " + db, "", "triage ack: --note is required"},
      {"triage frob --db " + db, "", "triage: unknown action 'frob'"},
      {"triage ack op/nothing --db " + db + " --note x", "",
       "triage ack: nothing regressed in run 2 (r2) against run 1 (r1) is 'op/nothing'"},
      {"triage ack op/exp --db " + db + " --note x --change slowr", "",
       "--change: unknown change 'slowr' (did you mean slower?)"},
      {"triage ack op/exp --db " + db + " --note x --until r1", "", "--until: release 'r1' is run 1, not after run 2"},
      {"triage unack 99 --db " + db, "", "triage unack: no acknowledgement '99' holds"},
      {"triage list --db " + fifo, "", fifo + ": not a regular file"},
      {"compare --db " + db + " --top -1", "", "--top"},
      {"compare --db " + db + " --gate ''", "", "--gate: must not be empty"},
      {"compare --db " + db + " --json ''", "", "--json: must not be empty"},
      {run + " --release '1.0\nnext'", "", "--release: must be one line, without control characters"},
      {"compare --db " + db + " --run 0", "", "--run"},
      {"compare --db " + db + " --max-ran-drop -0.1", "", "--max-ran-drop"},
      {"compare --db " + db + " --significance 0", "", "--significance"},
      {"compare --db " + db + " --min-effect -1", "", "--min-effect"},
      {"compare --db " + db + " --error-growth 0.5", "", "--error-growth"},
      {"compare --db " + db + " --history -1", "", "--history"},
      {"compare --db " + db + " --min-samples 0", "", "--min-samples"},
      {"compare --db " + db + " --waivers " + waivers_twice.string(), "",
       "w2.yaml:2: waivers: given twice (first at line 1)"},
      {"compare --db " + db + " --waivers " + waivers_docs.string(), "", "w3.yaml:3: a second YAML document"},
      {"dashboard --db " + db + " --out " + (dir / "site").string() + " --compare-pairs 0", "", "--compare-pairs"},
      {"dashboard --db " + db + " --out ''", "", "--out: must not be empty"},
      {"show --db " + db + " --run 0", "", "--run"},
      {"show --db ''", "", "--db: must not be empty"},
      {"repro 'op/exp/f32/_/contig/eager' --db " + db + " --run -1", "", "--run"},
      {"repro 'op/exp/f32/_/contig/eager' --golden-store " + (dir / "nowhere").string(), "", "no such golden store"},
      {"plan --suite smoke --shards 0 --out " + (dir / "p.json").string(), "", "--shards"},
      {"bench --suite smoke --db " + db + " --repetitions 0", "", "--repetitions"},
      {"bench --suite smoke --db " + db + " --min-time 0", "", "--min-time"},
      {"merge " + db + " --into ''", "", "--into: must not be empty"},
      // Commands and options: the nearest named, the subcommand's help pointed at.
      {"rnu --suite smoke", "", "unknown command 'rnu' (did you mean run?) (see gauntlet --help)"},
      {"run --bogus", "", "unknown option --bogus (see gauntlet run --help)"},
      {run + " --workrs 2", "", "unknown option --workrs (did you mean --workers?) (see gauntlet run --help)"},
      {"golden build --store " + (dir / "g").string() + " --suite smoke --workers 0", "",
       "(see gauntlet golden build --help)"},
      // Keys: a dim checked against the first input, a newline kept out of the one line.
      {"repro 'op/sum/f32/17x31/contig/eager/dim=abc'", "",
       "argument dim=abc of op sum expects 'all' or dims separated by ':'"},
      {"repro 'op/sum/f32/17x31/contig/eager/dim=2'", "",
       "dim 2 is out of range for a first input of rank 2 (from -2 to 1)"},
      {"repro 'op/softmax/f32/17x31/contig/eager/dim=-3'", "", "dim -3 is out of range"},
      {"repro \"$(printf 'op/exp/f32/4\\nx/contig/eager')\"", "", "bad case key 'op/exp/f32/4\\x0ax/contig/eager'"},
      // More of every command's options and files.
      {"list --suite nope", "", "unknown suite 'nope'"},
      {run + " --shard 3/2", "", "bad shard '3/2': expected i/N with 0 <= i < N"},
      {run + " --shard 0/0", "", "bad shard '0/0'"},
      {run + " --devices 3-1 --device-env X", "", "--devices: range '3-1' goes backwards"},
      {run + " --price-per-device-hour -1", "", "--price-per-device-hour '-1': not a positive number"},
      {run + " --max-failures -1", "", "--max-failures: -1 is below the smallest value, 1"},
      {run + " --keys-file " + (dir / "nokeys").string(), "",
       "--keys-file " + (dir / "nokeys").string() + ": no such file"},
      {run + " --plan " + (dir / "noplan.json").string() + " --shard 0/2", "", "noplan.json: no such file"},
      {"run --suite smoke --db " + db + " --filter 'op/[' --quiet", "", "bad filter 'op/[': '[' is not filter syntax"},
      {"run --suite smoke --db " + db + " --filter 'op/ex[a-p]/*' --quiet", "",
       "bad filter 'op/ex[a-p]/*': '[' is not filter syntax (patterns have '*' and '?' only"},
      // "did you mean" for what a user names (issue 50): suites, backends, statuses, dtypes, and
      // the words of a filter that selects nothing.
      {"list --suite smok", "", "unknown suite 'smok' (did you mean smoke?)"},
      {run + " --backend simm", "", "unknown backend 'simm' (did you mean sim?)"},
      {"show --db " + db + " --status FAILL", "", "unknown status 'FAILL' (did you mean FAIL?)"},
      {"repro 'op/exp/f31/4/contig/eager'", "", "unknown dtype 'f31' (did you mean f32?)"},
      {"run --suite smoke --db " + db + " --filter 'op/exp/f31/*' --quiet", "",
       "filter 'op/exp/f31/*' matches no case of suite smoke: it has no dtype 'f31' (did you mean f32?)"},
      {"run --suite smoke --db " + db + " --filter 'op/expp/f32/*:op/exp/f99/*' --quiet", "",
       "matches no case of suite smoke: it has no op 'expp' (did you mean exp?)"},
      {run + " --timeout 1e400", "", "--timeout: '1e400'"},
      {run + " --workers 99999999999", "", "--workers: '99999999999' is out of range"},
      {run + " --backend plugin:" + (dir / "none.so").string(), "", "backend library not found"},
      {run + " --profile 'bad name!'", "", "--profile 'bad name!': use letters"},
      {"run --suite smoke --db " + db + " --resume 5", "", "no run 5 to resume"},
      {"show --db " + (dir / "none.db").string(), "", "none.db: no such database"},
      {"show --db " + db + " --run 99", "", "no run 99"},
      {"compare --db " + db + " --baseline 99", "", "no run 99"},
      {"compare --db " + db + " --metric bogus", "", "--metric: unknown metric 'bogus'"},
      {"compare --db " + db + " --gate bogus", "", "--gate: unknown kind 'bogus'"},
      {"report --weekly --db " + db + " --since 2026-02-30", "", "--since: '2026-02-30' is not a date"},
      {"report --db " + db, "", "--weekly is required"},
      {"dashboard --db " + db + " --out " + (dir / "s1").string() + " --since bogus", "",
       "--since: 'bogus' is not a date"},
      {"dashboard --db " + db + " --out " + (dir / "s2").string() + " --metric bogus", "",
       "--metric: 'bogus' is not auto"},
      {"repro 'op/nope/f32/4/contig/eager'", "", "unknown op 'nope'"},
      {"repro 'op/exp/f99/4/contig/eager'", "", "unknown dtype 'f99'"},
      {"repro 'op/exp/f32/_/contig/eager' --backend tpu", "", "unknown backend 'tpu'"},
      {"repro 'op/exp/f32/4/contig/eager'", "", "case op/exp/f32/4/contig/eager is in no suite of "},
      {"backend-info --backend tpu", "", "unknown backend 'tpu'"},
      {"reduce 'op/exp/f32/4/contig/eager' --backend cpu", "", "case passes; nothing to reduce"},
      {"plan --suite smoke --shards 2 --out " + (dir / "no" / "dir" / "p.json").string(), "", "cannot write the plan"},
      {"merge " + (dir / "none.db").string() + " --into " + db, "", "none.db: no such database"},
      {"bench --suite smoke --db " + db + " --filter 'nomatch*'", "", "filter 'nomatch*' matches no case"},
      {"golden verify --store " + (dir / "nowhere").string(), "", "no such golden store"},
      {"ops-from-models --suite nope", "", "unknown suite 'nope'"},
      // Databases of another schema, for every reader.
      {"compare --db " + schema99, "", "schema version 99 is newer than this gauntlet"},
      {"dashboard --db " + schema99 + " --out " + (dir / "site99").string(), "", "schema version 99 is newer"},
      {"report --weekly --db " + schema99, "", "schema version 99 is newer"},
      {"compare --db " + schema3, "", "schema version 3 is older than this gauntlet"},
      {"dashboard --db " + schema3 + " --out " + (dir / "site3").string(), "", "schema version 3 is older"},
      {"report --weekly --db " + schema3, "", "schema version 3 is older"},
      {"run --suite smoke --db " + damaged + small, "", "damaged Gauntlet database: its table 'results' is missing"},
      {"run --suite smoke --db " + flipped + small, "", "flipped.db: damaged database (SQLite's quick_check: "},
      {"run --suite smoke --db " + flipped + small + " --run-id 3", "", "flipped.db: damaged database"},
      {"merge " + one + " --into " + flipped, "", "flipped.db: damaged database"},
      // Note [Damage named as damage]: every command names a damaged file damaged.
      {"show --db " + header, "", "header.db: not a SQLite database, or one whose header is damaged"},
      {"compare --db " + header, "", "header.db: not a SQLite database, or one whose header is damaged"},
      {"report --weekly --db " + header, "", "header.db: not a SQLite database, or one whose header"},
      {"dashboard --db " + header + " --out " + (dir / "site-h").string(), "", "header.db: not a SQLite database, or"},
      {"run --suite smoke --db " + header + small, "", "header.db: not a SQLite database, or one whose header"},
      {"repro 'op/exp/f32/4/contig/eager' --db " + header, "", "header.db: not a SQLite database, or"},
      {"merge " + header + " --into " + (dir / "m.db").string(), "", "header.db: not a SQLite database, or"},
      {"show --db " + truncated, "", "truncated.db: damaged database ("},
      {"compare --db " + truncated, "", "truncated.db: damaged database ("},
      {"report --weekly --db " + truncated, "", "truncated.db: damaged database ("},
      {"dashboard --db " + truncated + " --out " + (dir / "site-t").string(), "", "truncated.db: damaged database ("},
      {"run --suite smoke --db " + truncated + small, "", "truncated.db: damaged database ("},
      {"repro 'op/exp/f32/4/contig/eager' --db " + truncated, "", "truncated.db: damaged database ("},
      {"merge " + truncated + " --into " + (dir / "m.db").string(), "", "truncated.db: damaged database ("},
      // Suite and tolerance files.
      {"run --suite big" + in, "", "big.yaml:6:36: inputs must be an integer from 1 to 16"},
      {"run --suite neg" + in, "", "neg.yaml:6:36: inputs must be an integer from 1 to 16"},
      {"run --suite twice" + in, "", "twice.yaml:2:1: suite: given twice (first at line 1)"},
      {"run --suite dtypes" + in, "", "dtypes.yaml:6:5: dtypes: given twice (first at line 5)"},
      {"run --suite docs" + in, "", "docs.yaml:8:1: a second YAML document"},
      {"run --suite utf8" + in, "", "utf8.yaml:2:18: invalid UTF-8 (byte 0xe9)"},
      {"run --suite timeout0" + in, "", "timeout0.yaml:3:10: timeout must be more than 0 seconds"},
      {"run --suite comma" + in, "", "comma.yaml:1:2: malformed YAML: "},
      {"run --suite newline" + in, "", "newline.yaml:3:1: a\\x0ab: given twice (first at line 2)"},
      {"run --suite escape" + in, "", "escape.yaml:2:14: a control character (0x1b) in a value"},
      {"list --suite escape" + in.substr(0, in.find(" --db")), "", "escape.yaml:2:14: a control character (0x1b)"},
      {"run --suite inf" + in, "", "inf.yaml:3:10: timeout must be a finite number of seconds"},
      {"run --suite smoke --suites-dir " + bad_tol.string() + " --db " + db + small, "",
       "rtol must be a finite number >= 0"},
      // The simulator's configuration.
      {run + " --backend sim", "GAUNTLET_SIM_MEMORY=99999999999TiB",
       "GAUNTLET_SIM_MEMORY: '99999999999TiB' is too large"},
      {run + " --backend sim", "GAUNTLET_SIM_FAULTS='op=[,kind=nan'", "has '[', which no op name has"},
      {run + " --backend sim", "GAUNTLET_SIM_FAULTS='op=,kind=nan'", "empty value for 'op'"},
  };
}

}  // namespace

// Note [Option values], Note [Strict YAML]: each bad input is refused before anything runs or is
// written: exit 2, one line naming the option or file:line, and the database byte for byte as it was.
TEST_F(E2E, EveryBadInputIsRefusedInOneLineAndTheDatabaseStaysAsItWas) {
  const std::string db = (dir_ / "kept.db").string();
  const std::string small = " --filter 'op/exp/f32/_/contig/eager' --quiet";
  ASSERT_EQ(gauntlet("run --suite smoke --release r1 --db " + db + small).code, 0);
  ASSERT_EQ(gauntlet("run --suite smoke --release r2 --db " + db + small).code, 0);
  const std::string before = e2e::slurp(db);
  ASSERT_FALSE(before.empty());

  // Suite, tolerance and waiver files, each broken in one way.
  const std::string group = "suite: s\ndescription: x\ngroups:\n  - ops: [exp]\n    dtypes: [f32]\n";
  const fs::path files = suites_with({
      {"big.yaml", group + "    shapes: [{grid: [[4]], inputs: 99999999999}]\n"},
      {"neg.yaml", group + "    shapes: [{grid: [[4]], inputs: -1}]\n"},
      {"twice.yaml",
       "suite: s\nsuite: t\ndescription: x\ngroups:\n  - ops: [exp]\n    dtypes: [f32]\n    shapes: [\"4\"]\n"},
      {"dtypes.yaml", group + "    dtypes: [bf16]\n    shapes: [\"4\"]\n"},
      {"docs.yaml", group + "    shapes: [\"4\"]\n---\nsuite: other\n"},
      {"utf8.yaml",
       "suite: s\ndescription: \"caf\xe9\"\ngroups:\n  - ops: [exp]\n    dtypes: [f32]\n    shapes: [\"4\"]\n"},
      {"timeout0.yaml",
       "suite: s\ndescription: x\ntimeout: 0\ngroups:\n  - ops: [exp]\n    dtypes: [f32]\n    shapes: [\"4\"]\n"},
      // yaml-cpp's LoadAll looped forever on this one (Note [One document] in strict_yaml.cpp).
      {"comma.yaml", " , "},
      // A key with a newline in it: the error stays one line.
      {"newline.yaml", "suite: s\n\"a\\nb\": 1\n\"a\\nb\": 2\n"},
      // An escape sequence typed in a description: refused, never printed (Note [Printable text]).
      {"escape.yaml",
       "suite: s\ndescription: \"x\\e[31mred\"\ngroups:\n  - ops: [exp]\n    dtypes: [f32]\n"
       "    shapes: [\"4\"]\n"},
      {"inf.yaml",
       "suite: s\ndescription: x\ntimeout: .inf\ngroups:\n  - ops: [exp]\n    dtypes: [f32]\n    shapes: [\"4\"]\n"},
  });
  const fs::path bad_tol = dir_ / "badtol";
  fs::create_directories(bad_tol);
  for (const auto& e : fs::directory_iterator(files)) fs::copy_file(e.path(), bad_tol / e.path().filename());
  std::ofstream(bad_tol / "tolerances.yaml", std::ios::app) << "  - ops: [exp]\n    rtol: -1\n";
  const fs::path waivers_twice = dir_ / "w2.yaml", waivers_docs = dir_ / "w3.yaml";
  std::ofstream(waivers_twice) << "waivers: []\nwaivers: []\n";
  std::ofstream(waivers_docs) << "waivers: []\n---\nwaivers: []\n";
  write_damaged_copies(dir_, db);
  if (HasFatalFailure()) return;
  const std::string damaged = (dir_ / "damaged.db").string(), flipped = (dir_ / "flipped.db").string();
  const std::string damaged_before = e2e::slurp(damaged);
  const std::string flipped_before = e2e::slurp(flipped);
  const std::string one = (dir_ / "one.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --db " + one + small).code, 0);
  ASSERT_EQ(::mkfifo((dir_ / "fifo").c_str(), 0600), 0);
  fs::create_directories(dir_ / "others");
  std::ofstream(dir_ / "others" / "notes.txt") << "not Gauntlet's\n";

  const std::vector<BadInput> inputs = bad_inputs(dir_, db, files, bad_tol, waivers_twice, waivers_docs, one);
  for (const BadInput& i : inputs) {
    SCOPED_TRACE(i.env + " gauntlet " + i.args);
    expect_one_line_error(gauntlet(i.args, i.env), i.needle);
    ASSERT_EQ(e2e::slurp(db), before) << "the database changed";
  }
  EXPECT_EQ(e2e::slurp(damaged), damaged_before) << "run wrote into a damaged database";
  EXPECT_EQ(e2e::slurp(flipped), flipped_before) << "a command wrote into a bit-flipped database";
  EXPECT_EQ(e2e::slurp(dir_ / "others" / "notes.txt"), "not Gauntlet's\n") << "a command wrote over a user's file";
  EXPECT_EQ(std::distance(fs::directory_iterator(dir_ / "others"), fs::directory_iterator()), 1);
}

// Note [Empty shards]: a 4-way split of a one-case filter: one shard runs the case, the other three
// say so and exit 0 writing nothing; a filter that selects nothing at all stays an error.
TEST_F(E2E, EveryShardOfASplitExitsZeroAndExactlyOneRunsTheCase) {
  const std::string key = "op/add/f32/_,_/contig/eager";
  int ran = 0;
  for (int i = 0; i < 4; ++i) {
    SCOPED_TRACE("shard " + std::to_string(i));
    const fs::path db = dir_ / ("s" + std::to_string(i) + ".db");
    const Result r = gauntlet("run --suite smoke --quiet --gate --filter '" + key + "' --shard " + std::to_string(i) +
                              "/4 --db " + db.string());
    EXPECT_EQ(r.code, 0) << r.err;
    if (fs::exists(db)) {
      ++ran;
      auto store = gauntlet::Store::open(db.string(), gauntlet::Store::OpenMode::ReadOnly);
      ASSERT_EQ(store->results(*store->latest_run()).size(), 1u);
      EXPECT_EQ(store->results(*store->latest_run())[0].outcome.key, key);
    } else {
      EXPECT_NE(r.err.find("gauntlet: note: shard " + std::to_string(i) + "/4 holds none of the 1 case that filter '" +
                           key + "' selects from suite smoke: nothing to do"),
                std::string::npos)
          << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
      const Result l = gauntlet("list --suite smoke --filter '" + key + "' --shard " + std::to_string(i) + "/4");
      EXPECT_EQ(l.code, 0);
      EXPECT_EQ(l.out, "");
    }
  }
  EXPECT_EQ(ran, 1);
  expect_one_line_error(
      gauntlet("run --suite smoke --filter 'op/nothing*' --shard 1/4 --db " + (dir_ / "n.db").string()),
      "matches no case of suite smoke");
}

TEST_F(E2E, ForeignOrBrokenDatabaseIsRejectedAndLeftIntact) {
  const fs::path foreign = dir_ / "foreign.db";
  sqlite3* db = nullptr;
  ASSERT_EQ(sqlite3_open(foreign.c_str(), &db), SQLITE_OK);
  sqlite3_exec(db, "CREATE TABLE customers(id INTEGER, name TEXT); INSERT INTO customers VALUES (1, 'a');", nullptr,
               nullptr, nullptr);
  sqlite3_close(db);
  const std::string before = slurp(foreign);
  expect_one_line_error(gauntlet("run --suite smoke --filter 'op/exp/f32/*' --db " + foreign.string()),
                        "not a Gauntlet database");
  EXPECT_EQ(slurp(foreign), before);

  const fs::path junk = dir_ / "junk.db";
  std::ofstream(junk) << "this is not a database, just text that is long enough to have a header............";
  expect_one_line_error(gauntlet("show --db " + junk.string()), "not a SQLite database");
  expect_one_line_error(gauntlet("compare --db " + foreign.string()), "not a Gauntlet database");
  EXPECT_EQ(slurp(foreign), before);
}

TEST_F(E2E, CompareRefusesBadOptionsAndLeavesTheDatabaseIntact) {
  const std::string db = (dir_ / "cmp.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --db " + db + " --filter 'op/exp/f32/*' --release a --quiet").code, 0);
  const std::string before = slurp(db);
  expect_one_line_error(gauntlet("compare --db " + db), "no baseline for run 1");
  ASSERT_EQ(gauntlet("run --suite smoke --db " + db + " --filter 'op/exp/f32/*' --release b --quiet").code, 0);
  const std::string two = slurp(db);
  expect_one_line_error(gauntlet("compare --db " + db + " --gate bogus"), "--gate: unknown kind 'bogus'");
  expect_one_line_error(gauntlet("compare --db " + db + " --baseline 99"), "no run 99");
  expect_one_line_error(gauntlet("compare --db " + db + " --metric wall"), "--metric: unknown metric 'wall'");
  const fs::path waivers = dir_ / "w.yaml";
  std::ofstream(waivers) << "waivers:\n  - case: x\n";
  expect_one_line_error(gauntlet("compare --db " + db + " --waivers " + waivers.string()), "w.yaml:2: reason: missing");
  EXPECT_EQ(slurp(db), two);  // compare only reads
  EXPECT_NE(before, two);
  // Accuracy on the same build: nothing to flag (speed on host time is left out: it is noise here).
  const Result ok = gauntlet("compare --db " + db + " --gate accuracy,coverage --quiet");
  EXPECT_EQ(ok.code, 0) << ok.out << ok.err;
  EXPECT_NE(ok.out.find("gate accuracy,coverage: PASS"), std::string::npos) << ok.out;
}

TEST_F(E2E, DashboardWritesTheSiteAndRefusesBadInputLeavingTheDatabaseIntact) {
  const std::string db = (dir_ / "dash.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --db " + db + " --filter 'op/exp/f32/*' --release a --quiet").code, 0);
  ASSERT_EQ(gauntlet("run --suite smoke --db " + db + " --filter 'op/exp/f32/*' --release b --quiet").code, 0);
  const std::string before = slurp(db);
  const fs::path site = dir_ / "site";
  const Result ok = gauntlet("dashboard --db " + db + " --out " + site.string());
  ASSERT_EQ(ok.code, 0) << ok.err;
  EXPECT_NE(ok.out.find("dashboard: 1 group, 2 releases"), std::string::npos) << ok.out;
  for (const char* f : {"index.html", "assets/app.js", "assets/style.css", "assets/uPlot.iife.min.js",
                        "assets/uPlot.min.css", "data/overview.js", "data/g0/latest.js", "data/g0/cases/index.js",
                        "data/g0/cases/0.js", "data/g0/breakdown.js", "data/g0/coverage.js"}) {
    EXPECT_TRUE(fs::exists(site / f)) << f;
  }
  EXPECT_NE(slurp((site / "index.html").string()).find("Content-Security-Policy"), std::string::npos);
  expect_one_line_error(gauntlet("dashboard --db " + (dir_ / "none.db").string() + " --out " + site.string()),
                        "none.db: no such database");
  expect_one_line_error(gauntlet("dashboard --db " + db + " --out " + db), "--out is a file, not a directory");
  expect_one_line_error(gauntlet("dashboard --db " + db + " --out " + site.string() + " --since 2026-02-30"),
                        "--since: '2026-02-30' is not a date (YYYY-MM-DD)");
  expect_one_line_error(gauntlet("dashboard --db " + db + " --out " + site.string() + " --metric wall"),
                        "--metric: 'wall' is not auto, sim or host");
  // Filters that select nothing: a mistake named, not an empty site (the earlier site stays).
  expect_one_line_error(gauntlet("dashboard --db " + db + " --out " + site.string() + " --suite nightly"),
                        "no runs of suite 'nightly' among the database's 2 (suites: smoke; backends: cpu)");
  EXPECT_TRUE(fs::exists(site / "data/g0/latest.js"));
  expect_one_line_error(
      gauntlet("dashboard --db " + db + " --out " + site.string() + " --backend sim --since 2026-01-01"),
      "no runs on backend 'sim' since 2026-01-01 among the database's 2");
  EXPECT_EQ(slurp(db), before);  // dashboard only reads
}

TEST_F(E2E, AFailedRunKeepsEarlierResults) {
  const std::string db = (dir_ / "keep.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --db " + db + " --filter 'op/exp/*' --quiet").code, 0);
  Result before = gauntlet("show --db " + db + " --json --status all");
  ASSERT_EQ(before.code, 0);
  fs::path bad = suites_with(
      {{"bad.yaml", "suite: bad\ndescription: x\ngroups:\n  - ops: [nope]\n    dtypes: [f32]\n    shapes: [\"4\"]\n"}});
  expect_one_line_error(gauntlet("run --suite bad --suites-dir " + bad.string() + " --db " + db), "unknown op 'nope'");
  Result after = gauntlet("show --db " + db + " --json --status all");
  EXPECT_EQ(nlohmann::json::parse(after.out).at("results"), nlohmann::json::parse(before.out).at("results"));
}

// Note [Group start-up]: ranks that never start and join the group are named at the start-up limit,
// not at the collective timeout, and none is left behind.
TEST_F(E2E, ACollectiveGroupThatNeverAssemblesNamesTheRanksThatDidNotJoin) {
  const fs::path exe = dir_ / "stuck-rank";
  { std::ofstream(exe) << "#!/bin/sh\necho $$ >> '" << (dir_ / "pids").string() << "'\nexec sleep 120\n"; }
  fs::permissions(exe, fs::perms::owner_all);
  gauntlet::GroupConfig cfg;
  cfg.exe = exe.string();
  cfg.timeout_s = 300;
  cfg.startup_timeout_s = 2;
  cfg.log_dir = (dir_ / "ranks").string();
  const auto key = gauntlet::CaseKey::parse("coll/all_reduce/f32/1024/contig/w2/op=sum");
  const gauntlet::Outcome o = gauntlet::run_collective_group(key, cfg);
  EXPECT_EQ(o.status, Status::Timeout) << o.error;
  EXPECT_EQ(o.error.find("ranks 0, 1 did not start and join the group within 2 s (group of 2 on 127.0.0.1:"), 0u)
      << o.error;
  std::istringstream pids(slurp(dir_ / "pids"));
  int started = 0;
  for (std::string pid; pids >> pid; ++started)
    EXPECT_FALSE(fs::exists("/proc/" + pid)) << "rank process " << pid << " left";
  EXPECT_LE(started, 2);  // a rank killed before its shell ran wrote nothing
}

// run --keys-file (Note [Filters at scale]): exactly the listed keys run, a key with ':' in it too
// (which --filter would split); comments and blank lines are skipped; a key the suite does not
// have is refused naming its line; --filter narrows the list; a resume keeps the stored keys.
TEST_F(E2E, KeysFileRunsExactlyItsKeysAndAResumeKeepsThem) {
  const std::vector<std::string> keys = {"op/add/f32/_,_/contig/eager",
                                         "op/pad/f32/2x3x8/contig/eager/pad=1:2:0:1,value=0.5",
                                         "op/exp/f32/17x31/contig/eager"};
  const fs::path file = dir_ / "keys.txt";
  std::ofstream(file) << "# failing in run 7\n" << keys[0] << "\n\n  " << keys[1] << "  \n" << keys[2] << "\r\n";
  const std::string db = (dir_ / "k.db").string();
  const Result r = gauntlet("run --suite smoke --quiet --workers 0 --keys-file " + file.string() + " --db " + db);
  ASSERT_EQ(r.code, 0) << r.err;
  std::set<std::string> ran;
  {
    auto store = gauntlet::Store::open(db, gauntlet::Store::OpenMode::ReadOnly);
    for (const auto& row : store->results(*store->latest_run())) ran.insert(row.outcome.key);
  }
  EXPECT_EQ(ran, std::set<std::string>(keys.begin(), keys.end()));
  // --filter narrows the list.
  const std::string db2 = (dir_ / "k2.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --quiet --workers 0 --keys-file " + file.string() +
                     " --filter 'op/add/*' --db " + db2)
                .code,
            0);
  {
    auto store = gauntlet::Store::open(db2, gauntlet::Store::OpenMode::ReadOnly);
    ASSERT_EQ(store->results(*store->latest_run()).size(), 1u);
    // Resuming the finished run with the same keys adds nothing; other keys are refused.
    const std::int64_t id = *store->latest_run();
    ASSERT_EQ(gauntlet("run --resume " + std::to_string(id) + " --quiet --workers 0 --db " + db2).code, 0);
    std::ofstream(dir_ / "other.txt") << keys[2] << "\n";
    expect_one_line_error(gauntlet("run --resume " + std::to_string(id) + " --quiet --workers 0 --keys-file " +
                                   (dir_ / "other.txt").string() + " --db " + db2),
                          "was given other keys");
  }
  // A key the suite does not have: named with its line, nothing run.
  std::ofstream(dir_ / "bad.txt") << keys[0] << "\n# c\nop/nosuch/f32/8/contig/eager\n";
  const std::string db3 = (dir_ / "k3.db").string();
  expect_one_line_error(gauntlet("run --suite smoke --keys-file " + (dir_ / "bad.txt").string() + " --db " + db3),
                        (dir_ / "bad.txt").string() + ":3: op/nosuch/f32/8/contig/eager is not a case of suite smoke");
  std::ofstream(dir_ / "empty.txt") << "# nothing\n\n";
  expect_one_line_error(gauntlet("run --suite smoke --keys-file " + (dir_ / "empty.txt").string() + " --db " + db3),
                        "no key in it");
  EXPECT_FALSE(fs::exists(db3));
}

}  // namespace
