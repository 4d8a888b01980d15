#include "gauntlet/store/store.h"

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
#include "gauntlet/store/store_reader.h"
#include "store_test_support.h"

namespace gauntlet {
namespace {

using namespace store_testing;
using Mode = Store::OpenMode;

// ---- Timing (outcome.h)

TEST(TimingTest, RecordRepetitionsSummarisesInOnePlace) {
  Timing t;
  t.first_us = 50;
  record_repetitions(t, {12, 10, 11, 30, 10});  // in the order they ran
  EXPECT_EQ(t.samples_us, (std::vector<double>{12, 10, 11, 30, 10}));
  EXPECT_EQ(t.reps, 5);
  EXPECT_EQ(t.median_us, 11);
  EXPECT_EQ(t.p10_us, 10);
  EXPECT_EQ(t.p90_us, 30);
  // mean 14.6; squared deviations 6.76 + 21.16 + 12.96 + 237.16 + 21.16 = 299.2
  EXPECT_NEAR(t.cv, std::sqrt(299.2 / 4) / 14.6, 1e-12);
  record_repetitions(t, {});  // the first call only
  EXPECT_EQ(t.reps, 0);
  EXPECT_EQ(t.median_us, 50);
  EXPECT_EQ(t.p90_us, 50);
  EXPECT_EQ(t.cv, 0);
  record_repetitions(t, {7});
  EXPECT_EQ(t.median_us, 7);
  EXPECT_EQ(t.cv, 0);
}

// ---- Statuses (outcome.h)

TEST(StatusTest, NamesParseBackCaseInsensitively) {
  for (Status s : kAllStatuses) {
    EXPECT_EQ(parse_status(status_name(s)), s);
    std::string lower(status_name(s));
    for (char& c : lower) {
      c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
    EXPECT_EQ(parse_status(lower), s);
  }
  EXPECT_EQ(status_name(Status::XPass), "XPASS");
  EXPECT_EQ(parse_status("Unsupported"), Status::Unsupported);
  EXPECT_EQ(parse_status("PASSED"), std::nullopt);
  EXPECT_EQ(parse_status(""), std::nullopt);
}

TEST(StatusTest, FailuresAreFailErrorCrashTimeoutXPass) {
  for (Status s : kAllStatuses) {
    const bool want =
        s == Status::Fail || s == Status::Error || s == Status::Crash || s == Status::Timeout || s == Status::XPass;
    EXPECT_EQ(is_failure(s), want) << status_name(s);
  }
}

// ---- Round trips

TEST_F(StoreTest, RunInfoRoundTrips) {
  auto store = Store::open(file("g.db"), Mode::ReadWrite);
  const RunInfo want = sample_run();
  const std::int64_t id = store->begin_run(want);
  store->finish_run(id, "2024-05-01T13:30:00Z");

  const auto got = store->run(id);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->id, id);
  EXPECT_EQ(got->release, want.release);
  EXPECT_EQ(got->build_id, want.build_id);
  EXPECT_EQ(got->backend, want.backend);
  EXPECT_EQ(got->backend_version, want.backend_version);
  EXPECT_EQ(got->torch_version, want.torch_version);
  EXPECT_EQ(got->host, want.host);
  EXPECT_EQ(got->cpu, want.cpu);
  EXPECT_EQ(got->blas, want.blas);
  EXPECT_EQ(got->build_config, want.build_config);
  EXPECT_EQ(got->threads, want.threads);
  EXPECT_EQ(got->suite, want.suite);
  EXPECT_EQ(got->filter, want.filter);
  EXPECT_EQ(got->shard, want.shard);
  EXPECT_EQ(got->started_at, want.started_at);
  EXPECT_EQ(got->finished_at, "2024-05-01T13:30:00Z");
  EXPECT_EQ(got->config_json, want.config_json);
  EXPECT_EQ(got->gauntlet_version, want.gauntlet_version);
  EXPECT_EQ(got->price_per_device_hour, want.price_per_device_hour);
  EXPECT_FALSE(store->run(id + 1).has_value());
}

TEST_F(StoreTest, OutcomeRoundTripsIncludingNaNInfAndAwkwardText) {
  auto store = Store::open(file("g.db"), Mode::ReadWrite);
  const std::int64_t run = store->begin_run(sample_run());
  const Outcome want = sample_outcome();
  store->add_result(run, key(kAdd), want);
  store->add_result(run, key(kMul), Outcome{});  // defaults: empty strings, no fallback ops
  store->flush();

  const auto got = store->result(run, kAdd);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(got->run_id, run);
  EXPECT_EQ(got->case_id, key(kAdd).id());
  EXPECT_EQ(got->outcome.key, kAdd);
  expect_same(got->outcome, want);

  const auto plain = store->result(run, kMul);
  ASSERT_TRUE(plain.has_value());
  expect_same(plain->outcome, Outcome{});
}

// Note [One field table]: every field of the table, set to a value other than its default, comes
// back the same through both JSON writers, both JSON readers and SQLite. The values are made by
// the table itself, so a field added to it is covered here without a new line.
struct EveryFieldSet {
  int n = 0;
  void operator()(const fields::Field&, std::string& v) { v = "text " + std::to_string(++n) + " \"q\" \\ \xc3\xbc\n"; }
  void operator()(const fields::Field&, Status& v) { v = Status::XPass; }
  void operator()(const fields::Field&, int& v) { v = 100 + ++n; }
  void operator()(const fields::Field&, bool& v) { v = !v; }
  void operator()(const fields::Field&, std::int64_t& v) { v = (std::int64_t{1} << 40) + ++n; }
  void operator()(const fields::Field&, double& v) { v = 0.1 * ++n + 1e-9; }
  void operator()(const fields::Field&, std::optional<double>& v) { v = 0.25 * ++n + 1e-12; }
  void operator()(const fields::Field&, std::optional<std::int64_t>& v) { v = 1000 + ++n; }
  void operator()(const fields::Field&, std::vector<std::string>& v) {
    v = {"aten::op" + std::to_string(++n), "b\t\"c\""};
  }
  void operator()(const fields::Field&, std::vector<double>& v) { v = {1.5, 2.25, 3.0, 1e-3f}; }  // float32 values
  void operator()(const fields::Field&, double&&) {}                                              // derived
};

TEST_F(StoreTest, EveryFieldOfTheFieldTableRoundTripsThroughJsonAndSqlite) {
  Outcome want;
  fields::visit_fields(want, EveryFieldSet{});
  want.key = kAdd;  // a case key the store can parse
  const nlohmann::json defaults = to_json(Outcome{}), wanted = to_json(want);
  std::size_t stored = 0;
  fields::visit_fields(want, [&](const fields::Field& f, const auto&) {
    const std::string name(f.json);
    if (!f.has(fields::kDerived)) {
      EXPECT_NE(wanted.at(name), defaults.at(name)) << name << " kept its default";
    }
    stored += !f.has(fields::kJsonOnly);
  });

  // The library's writer and reader; the fast writer with each reader.
  EXPECT_EQ(to_json(outcome_from_json(wanted)), wanted);
  EXPECT_EQ(to_json(outcome_from_json(nlohmann::json::parse(to_json_text(want)))), wanted);
  const WorkerMessage m = parse_worker_message(R"({"type":"result","key":"k","outcome":)" + to_json_text(want) + "}");
  EXPECT_EQ(to_json(m.outcome), wanted);

  // SQLite: a column per stored field, and every value back.
  auto store = Store::open(file("f.db"), Mode::ReadWrite);
  const std::int64_t run = store->begin_run(sample_run());
  store->add_result(run, key(kAdd), want);
  store->flush();
  const auto got = store->result(run, kAdd);
  ASSERT_TRUE(got.has_value());
  EXPECT_EQ(to_json(got->outcome), wanted);
  RawDb raw(file("f.db"));
  EXPECT_EQ(raw.scalar("SELECT COUNT(*) FROM pragma_table_info('results')"), std::to_string(stored + 2))
      << "run_id, case_id and a column per stored field (a new field needs its migration, store.cpp)";
}

TEST_F(StoreTest, StoredColumnsAreQueryableFromSql) {
  const std::string path = file("g.db");
  {
    auto store = Store::open(path, Mode::ReadWrite);
    store->add_result(store->begin_run(sample_run()), key(kAdd), sample_outcome());
  }
  RawDb db(path);
  EXPECT_EQ(db.scalar("SELECT status FROM results"), "FAIL");
  EXPECT_EQ(db.scalar("SELECT max_abs_err IS NULL FROM results"), "1");  // NaN
  EXPECT_EQ(db.scalar("SELECT max_rel_err > 1e308 FROM results"), "1");  // +inf
  EXPECT_EQ(db.scalar("SELECT max_ulp < -1e308 FROM results"), "1");     // -inf
  EXPECT_EQ(db.scalar("SELECT mismatch_frac FROM results"), "0.75");
  EXPECT_EQ(db.scalar("SELECT json_array_length(fallback_ops) FROM results"), "3");
  EXPECT_EQ(db.scalar("SELECT json_extract(fallback_ops, '$[0]') FROM results"), "aten::_foo");
  EXPECT_EQ(db.scalar("SELECT graph_breaks IS NULL FROM results"), "1");
  EXPECT_EQ(db.scalar("SELECT kind || '|' || target || '|' || dtype || '|' || mode || '|' || "
                      "layout || '|' || shapes || '|' || args FROM cases"),
            R"(op|add|f32|eager|contig|8x8,8x8|{"alpha":"2.5"})");
  EXPECT_EQ(db.scalar("SELECT key FROM cases"), kAdd);
}

TEST_F(StoreTest, EveryStatusRoundTrips) {
  auto store = Store::open(file("g.db"), Mode::ReadWrite);
  const std::int64_t run = store->begin_run(sample_run());
  int n = 0;
  for (Status s : kAllStatuses) {
    const std::string k = "op/add/f32/" + std::to_string(++n) + "/contig/eager";
    store->add_result(run, key(k.c_str()), with_status(s));
  }
  store->flush();
  n = 0;
  for (Status s : kAllStatuses) {
    const std::string k = "op/add/f32/" + std::to_string(++n) + "/contig/eager";
    EXPECT_EQ(store->result(run, k)->outcome.status, s) << k;
  }
}

TEST_F(StoreTest, CaseIdsWithTheTopBitSetRoundTrip) {
  // Find a key whose XXH64 does not fit a signed 64-bit integer.
  std::string k;
  for (int n = 1; k.empty(); ++n) {
    const std::string candidate = "op/add/f32/" + std::to_string(n) + "/contig/eager";
    if (key_id(candidate) >> 63) {
      k = candidate;
    }
  }
  const std::string path = file("g.db");
  auto store = Store::open(path, Mode::ReadWrite);
  const std::int64_t run = store->begin_run(sample_run());
  store->add_result(run, key(k.c_str()), Outcome{});
  store->flush();

  EXPECT_EQ(store->result(run, k)->case_id, key_id(k));
  ASSERT_EQ(store->results(run).size(), 1u);
  EXPECT_EQ(store->results(run)[0].case_id, key_id(k));
  EXPECT_EQ(RawDb(path).scalar("SELECT id < 0 FROM cases"), "1");
}

// ---- Queries

TEST_F(StoreTest, ResultsAreOrderedByKeyAndScopedToTheirRun) {
  auto store = Store::open(file("g.db"), Mode::ReadWrite);
  const std::int64_t first = store->begin_run(sample_run());
  const std::int64_t second = store->begin_run(sample_run());
  store->add_result(first, key(kSub), Outcome{});
  store->add_result(first, key(kAdd), Outcome{});
  store->add_result(first, key(kMul), Outcome{});
  store->add_result(second, key(kMul), with_status(Status::Crash));
  store->flush();

  const auto results = store->results(first);
  ASSERT_EQ(results.size(), 3u);
  EXPECT_EQ(results[0].outcome.key, kAdd);
  EXPECT_EQ(results[1].outcome.key, kMul);
  EXPECT_EQ(results[2].outcome.key, kSub);
  ASSERT_EQ(store->results(second).size(), 1u);
  EXPECT_EQ(store->results(second)[0].outcome.status, Status::Crash);
  EXPECT_FALSE(store->result(second, kAdd).has_value());
  EXPECT_TRUE(store->results(second + 1).empty());
}

// Note [One reader of results]: the analysis commands' reader (gauntlet/store/store_reader.h).
void throw_error(const std::string& message, int exit_code) { throw Error(message, exit_code); }

TEST_F(StoreTest, TheReaderScansNamedColumnsOfOneOrSeveralRunsInStorageOrder) {
  {
    auto store = Store::open(file("g.db"), Mode::ReadWrite);
    const std::int64_t first = store->begin_run(sample_run());
    RunInfo later = sample_run();
    later.release = "2.6.0";
    later.price_per_device_hour.reset();
    const std::int64_t second = store->begin_run(later);
    Outcome slow = with_status(Status::Fail);
    slow.timing.median_us = 12.5;
    slow.fallback_ops = {"aten::mul"};
    slow.error = "max_abs_err 0.5";
    store->add_result(first, key(kSub), Outcome{});
    store->add_result(first, key(kMul), slow);
    store->add_result(second, key(kAdd), with_status(Status::Crash));
    store->flush();
  }
  StoreReader reader(file("g.db"), throw_error);
  const std::vector<RunRef> runs = reader.runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].release, "2.5.0");
  EXPECT_EQ(runs[0].price_per_device_hour, 1.75);
  EXPECT_EQ(runs[1].release, "2.6.0");
  EXPECT_FALSE(runs[1].price_per_device_hour.has_value());

  // One run: its rows in the order they were written, only the columns asked for, in that order.
  std::int64_t told = -1;
  std::vector<std::tuple<std::int64_t, std::uint64_t, Status, double, std::string>> rows;
  ResultScan one;
  one.runs = {runs[0].id};
  one.columns = {"status", "median_us", "fallback_ops"};
  one.on_size = [&](std::int64_t n) { told = n; };
  reader.scan(one, [&](ResultRow& r) {
    const Status status = r.status();
    const double median = r.real();
    rows.emplace_back(r.run_id(), r.case_id(), status, median, std::string(r.text()));
  });
  EXPECT_EQ(told, 2);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(std::get<1>(rows[0]), key(kSub).id());
  EXPECT_EQ(std::get<2>(rows[0]), Status::Pass);
  EXPECT_EQ(std::get<1>(rows[1]), key(kMul).id());
  EXPECT_EQ(std::get<2>(rows[1]), Status::Fail);
  EXPECT_EQ(std::get<3>(rows[1]), 12.5);
  EXPECT_EQ(std::get<4>(rows[1]), R"(["aten::mul"])");

  // Several runs in one pass, each row naming its run.
  ResultScan both;
  both.runs = {runs[0].id, runs[1].id};
  both.on_size = [&](std::int64_t n) { told = n; };
  std::map<std::int64_t, int> per_run;
  reader.scan(both, [&](ResultRow& r) { ++per_run[r.run_id()]; });
  EXPECT_EQ(told, 3);
  EXPECT_EQ(per_run, (std::map<std::int64_t, int>{{runs[0].id, 2}, {runs[1].id, 1}}));

  // The queries the reports make.
  EXPECT_EQ(reader.key(key(kMul).id()), kMul);
  EXPECT_FALSE(reader.key(12345).has_value());
  EXPECT_EQ(reader.error(runs[0].id, key(kMul).id()), "max_abs_err 0.5");
  EXPECT_EQ(reader.error(runs[1].id, key(kMul).id()), "");
  // In batches: unknown ids left out, a repeated id once.
  const auto keys = reader.keys({key(kMul).id(), 12345, key(kMul).id()});
  EXPECT_EQ(keys, (std::unordered_map<std::uint64_t, std::string>{{key(kMul).id(), kMul}}));
  const auto errors = reader.errors(runs[0].id, {key(kMul).id(), 12345});
  EXPECT_EQ(errors, (std::unordered_map<std::uint64_t, std::string>{{key(kMul).id(), "max_abs_err 0.5"}}));
  EXPECT_TRUE(reader.keys({}).empty());
  const auto tally = reader.status_tally(runs[0].id);
  ASSERT_EQ(tally.size(), 2u);
  EXPECT_EQ(tally.at(Status::Fail).results, 1);
  EXPECT_EQ(tally.at(Status::Fail).with_fallbacks, 1);
  EXPECT_EQ(tally.at(Status::Pass).with_fallbacks, 0);
  EXPECT_EQ(reader.counts_set(runs[0].id, {"median_us", "sim_time_us"}),
            (std::vector<std::int64_t>{2, 0}));  // 0 is a time, no sim time is NULL
  EXPECT_EQ(reader.cases().size(), 3u);
  EXPECT_TRUE(reader.case_ids("model").empty());

  // Every column of the table can be named; a name that is not one is the caller's bug.
  ResultScan all;
  all.runs = {runs[1].id};
  all.columns.assign(result_column_names().begin() + 2, result_column_names().end());
  int n = 0;
  reader.scan(all, [&](ResultRow&) { ++n; });
  EXPECT_EQ(n, 1);
  ResultScan bad;
  bad.runs = {runs[0].id};
  bad.columns = {"status; DROP TABLE results"};
  try {
    reader.scan(bad, [](ResultRow&) {});
    ADD_FAILURE() << "no error for a column that does not exist";
  } catch (const Error& e) {
    EXPECT_EQ(e.exit_code(), kExitInternal);
    EXPECT_EQ(std::string(e.what()), file("g.db") + ": results has no column 'status; DROP TABLE results'");
  }
}

TEST_F(StoreTest, StatusCountsGroupByStatus) {
  auto store = Store::open(file("g.db"), Mode::ReadWrite);
  const std::int64_t run = store->begin_run(sample_run());
  const Status statuses[] = {Status::Pass, Status::Pass, Status::Fail, Status::Skip, Status::Pass};
  int n = 0;
  for (Status s : statuses) {
    const std::string k = "op/add/f32/" + std::to_string(++n) + "/contig/eager";
    store->add_result(run, key(k.c_str()), with_status(s));
  }
  store->flush();

  const std::map<Status, std::int64_t> want = {{Status::Pass, 3}, {Status::Fail, 1}, {Status::Skip, 1}};
  EXPECT_EQ(store->status_counts(run), want);
  EXPECT_TRUE(store->status_counts(run + 1).empty());
}

TEST_F(StoreTest, LatestRunIsTheLastBegun) {
  auto store = Store::open(file("g.db"), Mode::ReadWrite);
  EXPECT_EQ(store->latest_run(), std::nullopt);
  EXPECT_TRUE(store->runs().empty());
  const std::int64_t first = store->begin_run(sample_run());
  RunInfo other = sample_run();
  other.backend = "mps";
  const std::int64_t second = store->begin_run(other);
  EXPECT_GT(second, first);
  EXPECT_EQ(store->latest_run(), second);
  const auto runs = store->runs();
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].id, first);
  EXPECT_EQ(runs[1].backend, "mps");
}

TEST_F(StoreTest, FinishingAnUnknownRunThrows) {
  auto store = Store::open(file("g.db"), Mode::ReadWrite);
  EXPECT_THROW(store->finish_run(42, "2024-05-01T13:30:00Z"), StoreError);
}

// ---- Writes: batching and replacement

TEST_F(StoreTest, ResultsAreWrittenInBatchesAndOnFlush) {
  const std::string path = file("g.db");
  auto store = Store::open(path, Mode::ReadWrite);
  store->set_batch_size(3);
  const std::int64_t run = store->begin_run(sample_run());
  auto reader = Store::open(path, Mode::ReadOnly);  // a report reading while the run writes

  store->add_result(run, key(kAdd), Outcome{});
  store->add_result(run, key(kMul), Outcome{});
  EXPECT_TRUE(store->results(run).empty());
  store->add_result(run, key(kSub), Outcome{});  // the third fills the batch
  EXPECT_EQ(store->results(run).size(), 3u);
  EXPECT_EQ(reader->results(run).size(), 3u);

  store->add_result(run, key("op/add/f32/1/contig/eager"), Outcome{});
  EXPECT_EQ(reader->results(run).size(), 3u);
  store->flush();
  EXPECT_EQ(reader->results(run).size(), 4u);
  store->flush();  // nothing pending: a no-op
  EXPECT_EQ(reader->results(run).size(), 4u);
}

TEST_F(StoreTest, PendingResultsAreWrittenOnDestruction) {
  const std::string path = file("g.db");
  std::int64_t run = 0;
  {
    auto store = Store::open(path, Mode::ReadWrite);
    run = store->begin_run(sample_run());
    store->add_result(run, key(kAdd), sample_outcome());
    store->add_result(run, key(kMul), Outcome{});
  }
  auto reader = Store::open(path, Mode::ReadOnly);
  ASSERT_EQ(reader->results(run).size(), 2u);
  expect_same(reader->result(run, kAdd)->outcome, sample_outcome());
}

TEST_F(StoreTest, FinishRunWritesPendingResults) {
  const std::string path = file("g.db");
  auto store = Store::open(path, Mode::ReadWrite);
  const std::int64_t run = store->begin_run(sample_run());
  store->add_result(run, key(kAdd), Outcome{});
  store->finish_run(run, "2024-05-01T13:30:00Z");
  EXPECT_EQ(Store::open(path, Mode::ReadOnly)->results(run).size(), 1u);
}

TEST_F(StoreTest, ARerunReplacesTheEarlierResultOfTheSameRun) {
  const std::string path = file("g.db");
  auto store = Store::open(path, Mode::ReadWrite);
  const std::int64_t first = store->begin_run(sample_run());
  const std::int64_t second = store->begin_run(sample_run());

  Outcome retry = with_status(Status::Pass);
  retry.attempt = 2;
  store->add_result(first, key(kAdd), with_status(Status::Timeout));
  store->add_result(first, key(kAdd), with_status(Status::Crash));  // same batch
  store->flush();
  store->add_result(first, key(kAdd), retry);  // a later batch
  store->add_result(second, key(kAdd), with_status(Status::Fail));
  store->flush();

  ASSERT_EQ(store->results(first).size(), 1u);
  EXPECT_EQ(store->result(first, kAdd)->outcome.status, Status::Pass);
  EXPECT_EQ(store->result(first, kAdd)->outcome.attempt, 2);
  EXPECT_EQ(store->result(second, kAdd)->outcome.status, Status::Fail);
  EXPECT_EQ(RawDb(path).scalar("SELECT count(*) FROM cases"), "1");  // cases are shared
}

TEST_F(StoreTest, AFailedBatchIsRolledBackAndReportedWhenDropped) {
  const std::string path = file("g.db");
  const std::int64_t run = Store::open(path, Mode::ReadWrite)->begin_run(sample_run());
  ::testing::internal::CaptureStderr();
  {
    auto store = Store::open(path, Mode::ReadWrite);
    store->add_result(run, key(kAdd), Outcome{});
    store->add_result(run + 1, key(kMul), Outcome{});  // no such run: the foreign key refuses it
    EXPECT_THROW(store->flush(), StoreError);
    EXPECT_TRUE(store->results(run).empty());  // the whole batch, not half of it
  }
  const std::string err = ::testing::internal::GetCapturedStderr();
  EXPECT_NE(err.find("2 results not saved"), std::string::npos) << err;
}

TEST_F(StoreTest, AReadOnlyStoreRefusesWrites) {
  const std::string path = file("g.db");
  Store::open(path, Mode::ReadWrite);
  auto store = Store::open(path, Mode::ReadOnly);
  EXPECT_THROW(store->begin_run(sample_run()), StoreError);
}

}  // namespace
}  // namespace gauntlet
