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

namespace gauntlet {
namespace {

namespace fs = std::filesystem;
using namespace std::string_literals;
using Mode = Store::OpenMode;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// A fresh directory per test, removed afterwards.
class StoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "gauntlet_store_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string file(const std::string& name) const { return (dir_ / name).string(); }

 private:
  fs::path dir_;
};

// Plain sqlite3 access, to inspect or tamper with a file the way another tool would.
class RawDb {
 public:
  explicit RawDb(const std::string& path) { sqlite3_open(path.c_str(), &db_); }
  ~RawDb() { sqlite3_close(db_); }
  RawDb(const RawDb&) = delete;
  RawDb& operator=(const RawDb&) = delete;

  void exec(const std::string& sql) {
    char* err = nullptr;
    if (sqlite3_exec(db_, sql.c_str(), nullptr, nullptr, &err) != SQLITE_OK) {
      ADD_FAILURE() << sql << ": " << (err ? err : "?");
    }
    sqlite3_free(err);
  }
  // The first column of the first row as text; "(no row)" / "(null)" otherwise.
  std::string scalar(const std::string& sql) {
    sqlite3_stmt* stmt = nullptr;
    std::string out = "(no row)";
    if (sqlite3_prepare_v2(db_, sql.c_str(), -1, &stmt, nullptr) != SQLITE_OK) {
      out = std::string("(error) ") + sqlite3_errmsg(db_);
    } else if (sqlite3_step(stmt) == SQLITE_ROW) {
      const auto* text = sqlite3_column_text(stmt, 0);
      out = text ? reinterpret_cast<const char*>(text) : "(null)";
    }
    sqlite3_finalize(stmt);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_bytes(const std::string& path, const std::string& bytes) { std::ofstream(path, std::ios::binary) << bytes; }

// The message Store::open throws, or "(no error)".
std::string open_error(const std::string& path, Mode mode) {
  try {
    Store::open(path, mode);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "(no error)";
}

CaseKey key(const char* text) { return CaseKey::parse(text); }

RunInfo sample_run() {
  RunInfo r;
  r.release = "2.5.0";
  r.build_id = "abc123";
  r.backend = "cuda";
  r.backend_version = "12.4";
  r.torch_version = "2.5.0+cu124";
  r.host = "node-17";
  r.cpu = "Xeon 8480+";
  r.blas = "MKL 2024.1";
  r.build_config = "USE_CUDA=1 \"quoted\"";
  r.threads = 56;
  r.suite = "core";
  r.filter = "op/add/*";
  r.shard = "3/8";
  r.started_at = "2024-05-01T12:00:00Z";
  r.finished_at = "";
  r.config_json = R"({"seed": 7, "modes": ["eager"]})";
  r.gauntlet_version = "0.1.0";
  r.price_per_device_hour = 1.75;
  return r;
}

// Every field set to something other than its default, including the awkward values.
Outcome sample_outcome() {
  Outcome o;
  o.status = Status::Fail;
  o.metrics.max_abs_err = kNaN;
  o.metrics.max_rel_err = kInf;
  o.metrics.mismatches = 3'000'000'000;
  o.metrics.numel = 4'000'000'000;
  o.metrics.max_ulp = -kInf;
  o.metrics.nan_inf_ok = false;
  o.metrics.worst = "grad.self[3]";
  o.rtol = 1.3e-6;
  o.atol = 1e-5;
  o.tolerance_profile = "tolerances.yaml:12";
  o.error =
      "RuntimeError: \"quoted\" 'single'\nline two\r\n<b>html</b> & <script>x</script>"
      "\ttab \xc3\xbcnic\xc3\xb6"
      "de nul\0byte"s;  // an embedded NUL too
  o.reason = "xfail: known <issue #12>";
  o.timing = {123.5, 45.25, 40.0, kNaN, 0.25, 17, 0, {45.25, 44.5, 1e-3, 3.5e7}};
  o.peak_mem_bytes = std::int64_t{1} << 40;
  o.fallback_ops = {"aten::_foo", "aten::bar.out", "weird \"op\"\n"};
  o.executed_ops = {
      executed_op_text({"aten::_convolution", "input=f32[1,3,8,8]@[192,1,24,3], stride=[2,2], mode='reflect'", 3}),
      executed_op_text({"aten::relu_", "self=f32[4]+2", 1})};
  o.attempt = 3;
  o.work_items = 6'000'000'000;
  return o;
}

Outcome with_status(Status s) {
  Outcome o;
  o.status = s;
  return o;
}

bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

void expect_same(const Outcome& got, const Outcome& want) {
  EXPECT_EQ(got.status, want.status);
  EXPECT_PRED2(same, got.metrics.max_abs_err, want.metrics.max_abs_err);
  EXPECT_PRED2(same, got.metrics.max_rel_err, want.metrics.max_rel_err);
  EXPECT_EQ(got.metrics.mismatches, want.metrics.mismatches);
  EXPECT_EQ(got.metrics.numel, want.metrics.numel);
  EXPECT_PRED2(same, got.metrics.max_ulp, want.metrics.max_ulp);
  EXPECT_EQ(got.metrics.nan_inf_ok, want.metrics.nan_inf_ok);
  EXPECT_EQ(got.metrics.worst, want.metrics.worst);
  EXPECT_PRED2(same, got.rtol, want.rtol);
  EXPECT_PRED2(same, got.atol, want.atol);
  EXPECT_EQ(got.tolerance_profile, want.tolerance_profile);
  EXPECT_EQ(got.error, want.error);
  EXPECT_EQ(got.reason, want.reason);
  EXPECT_PRED2(same, got.timing.first_us, want.timing.first_us);
  EXPECT_PRED2(same, got.timing.median_us, want.timing.median_us);
  EXPECT_PRED2(same, got.timing.p10_us, want.timing.p10_us);
  EXPECT_PRED2(same, got.timing.p90_us, want.timing.p90_us);
  EXPECT_EQ(got.timing.reps, want.timing.reps);
  EXPECT_PRED2(same, got.timing.cv, want.timing.cv);
  ASSERT_EQ(got.timing.samples_us.size(), want.timing.samples_us.size());
  for (std::size_t i = 0; i < want.timing.samples_us.size(); ++i) {  // stored as float32
    EXPECT_FLOAT_EQ(got.timing.samples_us[i], want.timing.samples_us[i]);
  }
  EXPECT_EQ(got.peak_mem_bytes, want.peak_mem_bytes);
  EXPECT_EQ(got.fallback_ops, want.fallback_ops);
  EXPECT_EQ(got.executed_ops, want.executed_ops);
  EXPECT_EQ(got.attempt, want.attempt);
  EXPECT_EQ(got.work_items, want.work_items);
}

constexpr const char* kAdd = "op/add/f32/8x8,8x8/contig/eager/alpha=2.5";
constexpr const char* kMul = "op/mul/bf16/_,4/t/eager-bwd";
constexpr const char* kSub = "op/sub/f64/3/cl/eager";

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

  EXPECT_EQ(open_error(path, Mode::ReadWrite), path + ": not a SQLite database");
  EXPECT_EQ(open_error(path, Mode::ReadOnly), path + ": not a SQLite database");
  EXPECT_EQ(read_bytes(path), bytes);

  const std::string tiny = file("tiny.db");
  write_bytes(tiny, "hi\n");
  EXPECT_EQ(open_error(tiny, Mode::ReadWrite), tiny + ": not a SQLite database");
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
