// What the store tests share (store_test.cpp, store_schema_test.cpp): a fresh folder per test,
// plain sqlite3 access to a file, and an Outcome with every field set to an awkward value.
#pragma once

#include <gtest/gtest.h>
#include <sqlite3.h>
#include <stdlib.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#include "gauntlet/base/outcome_fields.h"
#include "gauntlet/run/worker_protocol.h"
#include "gauntlet/store/store.h"

namespace gauntlet::store_testing {

namespace fs = std::filesystem;
using namespace std::string_literals;

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
inline constexpr double kInf = std::numeric_limits<double>::infinity();

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

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

// The message Store::open throws, or "(no error)".
inline std::string open_error(const std::string& path, Store::OpenMode mode) {
  try {
    Store::open(path, mode);
  } catch (const StoreError& e) {
    return e.what();
  }
  return "(no error)";
}

inline CaseKey key(const char* text) { return CaseKey::parse(text); }

inline RunInfo sample_run() {
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
inline Outcome sample_outcome() {
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

inline Outcome with_status(Status s) {
  Outcome o;
  o.status = s;
  return o;
}

inline bool same(double a, double b) {
  return (std::isnan(a) && std::isnan(b)) || (a == b && std::signbit(a) == std::signbit(b));
}

inline void expect_same(const Outcome& got, const Outcome& want) {
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

inline constexpr const char* kAdd = "op/add/f32/8x8,8x8/contig/eager/alpha=2.5";
inline constexpr const char* kMul = "op/mul/bf16/_,4/t/eager-bwd";
inline constexpr const char* kSub = "op/sub/f64/3/cl/eager";

}  // namespace gauntlet::store_testing
