// End-to-end tests of the simulator as the harness sees it: the real gauntlet binary loading
// libgauntlet_sim.so, the real smoke suite, real SQLite files. Each fault kind is injected into
// one op and must change exactly the cases that dispatch that op, and no other.
#include <gtest/gtest.h>

#include <sqlite3.h>

#include <cmath>
#include <csignal>
#include <nlohmann/json.hpp>
#include <set>

#include "e2e_support.h"
#include "gauntlet/outcome.h"
#include "gauntlet/store.h"

namespace {

using e2e::Result;
using gauntlet::Outcome;
using gauntlet::Status;
namespace fs = std::filesystem;

// The op the fault tests target: f32 matrix products reach it from mm, matmul, linear, einsum
// and the backward of most matmul-family ops, and no other dtype's cases do.
constexpr const char* kSelector = "op=aten::mm,dtype=f32";

struct StoredRun {
  gauntlet::RunInfo info;
  std::map<std::string, Outcome> by_key;
  std::vector<std::string> order;  // as the run executed them
};

class SimE2E : public e2e::E2E {
 protected:
  // Runs the smoke suite (or a filtered part) on the simulator into its own database.
  StoredRun run_sim(const std::string& name, const std::string& env, const std::string& filter = "") {
    const fs::path db = dir_ / (name + ".db");
    Result r = gauntlet("run --suite smoke --backend sim --quiet --db " + db.string() +
                            (filter.empty() ? "" : " --filter '" + filter + "'"),
                        env);
    EXPECT_EQ(r.code, 0) << name << ": " << r.err;
    return read(db);
  }
  StoredRun run_cpu(const std::string& name) {
    const fs::path db = dir_ / (name + ".db");
    Result r = gauntlet("run --suite smoke --backend cpu --quiet --db " + db.string());
    EXPECT_EQ(r.code, 0) << r.err;
    return read(db);
  }
  static StoredRun read(const fs::path& db) {
    StoredRun run;
    auto store = gauntlet::Store::open(db.string(), gauntlet::Store::OpenMode::ReadOnly);
    const auto id = store->latest_run();
    if (!id) {
      ADD_FAILURE() << db << " holds no run";
      return run;
    }
    run.info = *store->run(*id);
    for (const auto& r : store->results(*id)) run.by_key[r.outcome.key] = r.outcome;
    // results() orders by key; the order the run executed is the order of insertion.
    sqlite3* h = nullptr;
    EXPECT_EQ(sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr), SQLITE_OK);
    sqlite3_stmt* st = nullptr;
    sqlite3_prepare_v2(h, "SELECT cases.key FROM results JOIN cases ON cases.id = results.case_id ORDER BY results.rowid",
                       -1, &st, nullptr);
    while (sqlite3_step(st) == SQLITE_ROW) run.order.emplace_back(reinterpret_cast<const char*>(sqlite3_column_text(st, 0)));
    sqlite3_finalize(st);
    sqlite3_close(h);
    return run;
  }
  std::set<std::string> kernels() {
    Result r = gauntlet("backend-info --backend sim --json");
    EXPECT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    return j.at("kernels").get<std::set<std::string>>();
  }
  // The cases that dispatch the selected op: forcing it to fall back makes each of them record it.
  std::set<std::string> affected_by(const std::string& selector) {
    StoredRun forced = run_sim("forced", "GAUNTLET_SIM_NUMERICS=none GAUNTLET_SIM_FAULTS='" + selector + ",kind=fallback'");
    std::set<std::string> keys;
    for (const auto& [key, o] : forced.by_key) {
      if (std::find(o.fallback_ops.begin(), o.fallback_ops.end(), "aten::mm") != o.fallback_ops.end()) keys.insert(key);
    }
    return keys;
  }
};

bool same_metrics(const Outcome& a, const Outcome& b) {
  auto same = [](double x, double y) { return (std::isnan(x) && std::isnan(y)) || x == y; };
  return a.status == b.status && same(a.metrics.max_abs_err, b.metrics.max_abs_err) &&
         same(a.metrics.max_rel_err, b.metrics.max_rel_err) && a.metrics.mismatches == b.metrics.mismatches &&
         a.metrics.nan_inf_ok == b.metrics.nan_inf_ok && a.fallback_ops == b.fallback_ops;
}

TEST_F(SimE2E, HarnessDoesNotLinkTheSimulator) {
  const fs::path out = dir_ / "ldd";
  ASSERT_EQ(std::system(("ldd " + std::string(GAUNTLET_BIN) + " > " + out.string()).c_str()), 0);
  const std::string libs = e2e::slurp(out);
  EXPECT_NE(libs.find("libtorch"), std::string::npos) << libs;  // ldd worked
  EXPECT_EQ(libs.find("gauntlet_sim"), std::string::npos) << libs;
}

TEST_F(SimE2E, SmokeGivesEveryCaseAStatusAndFallbacksAreExactlyTheOpsWithoutKernels) {
  Result count = gauntlet("list --suite smoke --count");
  ASSERT_EQ(count.code, 0);
  StoredRun run = run_sim("default", "");
  ASSERT_EQ(run.by_key.size(), std::stoul(count.out));
  EXPECT_EQ(run.info.backend, "sim");
  EXPECT_EQ(run.info.backend_version, "sim-0.3.1");
  const auto config = nlohmann::json::parse(run.info.config_json);
  EXPECT_EQ(config.at("backend_config").at("version"), "sim-0.3.1");
  for (const auto& [key, o] : run.by_key) {
    EXPECT_FALSE(gauntlet::is_failure(o.status)) << key << ": " << o.error;
  }

  // Every op the device sees, per case: all of them fall back when forced to.
  const std::set<std::string> native = kernels();
  ASSERT_GE(native.size(), 100u);
  StoredRun all_fall_back = run_sim("forced", "GAUNTLET_SIM_FAULTS='kind=fallback'");
  std::size_t cases_with_native_ops = 0, not_comparable = 0;
  std::set<std::string> ops_with_kernels;  // op-table ops whose eager cases never fell back
  std::set<std::string> ops_with_fallbacks;
  for (const auto& [key, o] : run.by_key) {
    const Outcome& forced = all_fall_back.by_key.at(key);
    // Forcing every op onto the CPU fallback breaks a few cases the way real fallbacks break
    // (in-place updates the schema does not annotate, like batch norm's running statistics, are
    // lost): where it changed the status, the two runs did not dispatch the same ops.
    if (forced.status != o.status) {
      ++not_comparable;
      continue;
    }
    std::vector<std::string> expected;
    for (const auto& op : forced.fallback_ops) {
      if (!native.count(op)) expected.push_back(op);
    }
    EXPECT_EQ(o.fallback_ops, expected) << key;
    if (forced.fallback_ops.size() > expected.size()) ++cases_with_native_ops;
    const std::string target = key.substr(3, key.find('/', 3) - 3);
    if (key.find("/eager/") == std::string::npos && key.rfind("/eager") != key.size() - 6) continue;
    if (o.status == Status::Unsupported || o.status == Status::Skip) continue;
    (o.fallback_ops.empty() ? ops_with_kernels : ops_with_fallbacks).insert(target);
  }
  for (const auto& op : ops_with_fallbacks) ops_with_kernels.erase(op);
  EXPECT_GT(cases_with_native_ops, run.by_key.size() / 2);
  EXPECT_LT(not_comparable, run.by_key.size() / 100) << "cases the forced fallback broke";
  EXPECT_GE(ops_with_kernels.size(), 60u) << "op-table ops whose eager cases run without fallback";
  RecordProperty("op_table_ops_without_fallback", static_cast<int>(ops_with_kernels.size()));
}

TEST_F(SimE2E, ExactNumericsMatchCpuAndDefaultNumericsCarryBf16Errors) {
  StoredRun cpu = run_cpu("cpu");
  StoredRun exact = run_sim("exact", "GAUNTLET_SIM_NUMERICS=none");
  ASSERT_EQ(cpu.by_key.size(), exact.by_key.size());
  for (const auto& [key, o] : cpu.by_key) {
    EXPECT_EQ(gauntlet::status_name(exact.by_key.at(key).status), gauntlet::status_name(o.status)) << key;
  }
  EXPECT_NE(exact.info.backend_version, "sim-0.3.1");  // another configuration, another release

  StoredRun accel = run_sim("default", "", "op/mm/f32/*:op/matmul/f32/*:op/linear/f32/*");
  ASSERT_GT(accel.by_key.size(), 5u);
  for (const auto& [key, o] : accel.by_key) {
    const Outcome& e = exact.by_key.at(key);
    EXPECT_EQ(o.status, Status::Pass) << key << ": " << o.error;
    // bf16 operands: errors of bf16 size (2^-9 relative per operand) where exact numerics
    // leave fp32 rounding only.
    EXPECT_GT(o.metrics.max_abs_err, std::max(1e-6, 30 * e.metrics.max_abs_err)) << key;
    EXPECT_LT(e.metrics.max_abs_err, 1e-4) << key;
    EXPECT_EQ(o.tolerance_profile.rfind("sim:tolerances.yaml:", 0), 0u) << key << " " << o.tolerance_profile;
  }
}

// One fault kind injected into aten::mm for f32: exactly the cases that dispatch it change. The
// runs use exact numerics, so that every result is at fp32 accuracy and only the fault moves it.
constexpr const char* kExact = "GAUNTLET_SIM_NUMERICS=none ";

class SimFault : public SimE2E, public ::testing::WithParamInterface<const char*> {};

TEST_P(SimFault, ChangesExactlyTheCasesThatDispatchTheOp) {
  const std::string kind = GetParam();
  const std::set<std::string> affected = affected_by(kSelector);
  ASSERT_GT(affected.size(), 10u);
  StoredRun base = run_sim("base", kExact);
  const std::string rule = std::string(kSelector) + ",kind=" + kind + (kind == "sleep" ? ",factor=30" : "") +
                           (kind == "slow" ? ",factor=1.25" : "");
  StoredRun hit = run_sim("hit", kExact + std::string("GAUNTLET_SIM_FAULTS='") + rule + "'");
  ASSERT_EQ(base.by_key.size(), hit.by_key.size());
  for (const auto& [key, b] : base.by_key) {
    const Outcome& h = hit.by_key.at(key);
    if (!affected.count(key)) {
      EXPECT_TRUE(same_metrics(b, h)) << key << " changed: " << h.error;
      ASSERT_EQ(b.sim_time_us.has_value(), h.sim_time_us.has_value()) << key;
      if (b.sim_time_us) {
        EXPECT_EQ(*b.sim_time_us, *h.sim_time_us) << key << ": simulated time is deterministic";
      }
      continue;
    }
    if (kind == "slow") {
      EXPECT_TRUE(same_metrics(b, h)) << key;
      EXPECT_GT(*h.sim_time_us, *b.sim_time_us) << key;
      // Where aten::mm is the case's only kernel, its time is exactly the factor.
      if (key.rfind("op/mm/f32/", 0) == 0 && key.find("/eager-bwd") == std::string::npos) {
        EXPECT_NEAR(*h.sim_time_us / *b.sim_time_us, 1.25, 1e-12) << key;
      }
    } else if (kind == "sleep") {
      EXPECT_TRUE(same_metrics(b, h)) << key;
      EXPECT_GE(h.timing.first_us, 30000) << key;  // a lower bound that sleep guarantees
      EXPECT_EQ(*b.sim_time_us, *h.sim_time_us) << key;
    } else if (kind == "oom") {
      EXPECT_EQ(h.status, Status::Error) << key;
      EXPECT_NE(h.error.find("out of memory"), std::string::npos) << h.error;
    } else if (kind == "fallback") {
      EXPECT_NE(std::find(h.fallback_ops.begin(), h.fallback_ops.end(), "aten::mm"), h.fallback_ops.end()) << key;
    } else {
      EXPECT_FALSE(same_metrics(b, h)) << key << " did not change under kind=" << kind;
    }
  }
  if (kind == "oom") {
    // The case after an out-of-memory error runs normally.
    for (std::size_t i = 0; i + 1 < hit.order.size(); ++i) {
      if (affected.count(hit.order[i]) && !affected.count(hit.order[i + 1])) {
        EXPECT_EQ(hit.by_key.at(hit.order[i + 1]).status, base.by_key.at(hit.order[i + 1]).status);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Kinds, SimFault,
                         ::testing::Values("bias", "flip", "precision", "nan", "slow", "sleep", "fallback", "oom"),
                         [](const auto& info) { return std::string(info.param); });

// Faults that kill or stop the process, in a child process (the orchestrator isolates them in
// workers once it lands).
TEST_F(SimE2E, SegvAbortAndHangStopTheProcessRunningTheCase) {
  const std::string one_case = " --filter 'op/mm/f32/64x64,64x64/contig/eager'";
  const std::string db = " --db " + (dir_ / "crash.db").string();
  Result segv = gauntlet("run --suite smoke --backend sim --quiet" + one_case + db,
                         "GAUNTLET_SIM_FAULTS='" + std::string(kSelector) + ",kind=segv'");
  EXPECT_EQ(segv.code, 128 + SIGSEGV) << segv.err;
  Result abrt = gauntlet("run --suite smoke --backend sim --quiet" + one_case + db,
                         "GAUNTLET_SIM_FAULTS='" + std::string(kSelector) + ",kind=abort'");
  EXPECT_EQ(abrt.code, 128 + SIGABRT) << abrt.err;
  const std::string hang_cmd = "timeout -s KILL 20 " + std::string(GAUNTLET_BIN) +
                               " run --suite smoke --backend sim --quiet" + one_case + db;
  const std::string env = "GAUNTLET_SIM_FAULTS='" + std::string(kSelector) + ",kind=hang' ";
  const int status = std::system((env + hang_cmd + " >/dev/null 2>&1").c_str());
  EXPECT_EQ(WEXITSTATUS(status), 137) << "the hung run was killed by timeout";
  // A case the rule does not reach still runs.
  Result other = gauntlet("run --suite smoke --backend sim --quiet --filter 'op/add/f32/*'" + db,
                          "GAUNTLET_SIM_FAULTS='" + std::string(kSelector) + ",kind=segv'");
  EXPECT_EQ(other.code, 0) << other.err;
}

TEST_F(SimE2E, PeakMemoryIsWhatTheDeviceTensorsNeed) {
  for (int n : {64, 256, 1024}) {
    const std::string key = "op/add/f32/" + std::to_string(n) + "x" + std::to_string(n) + "," + std::to_string(n) +
                            "x" + std::to_string(n) + "/contig/eager";
    Result r = gauntlet("repro '" + key + "' --backend sim --json");
    ASSERT_EQ(r.code, 0) << r.err;
    const auto j = nlohmann::json::parse(r.out);
    const double need = 3.0 * n * n * 4;  // two inputs and the output
    const double peak = j.at("peak_mem_bytes").get<double>();
    EXPECT_NEAR(peak / need, 1.0, 0.05) << key << ": peak " << peak << " need " << need;
  }
}

TEST_F(SimE2E, AllocationPastCapacityIsAnErrorAndTheNextCaseRuns) {
  // 4 KiB: the inputs of a 17x31 f32 add (2 x 2108 bytes) do not fit, those of a 4x4 one do.
  StoredRun run = run_sim("small", "GAUNTLET_SIM_MEMORY=4KiB", "op/add/f32/*");
  int oom = 0, pass_after_oom = 0;
  for (std::size_t i = 0; i < run.order.size(); ++i) {
    const Outcome& o = run.by_key.at(run.order[i]);
    if (o.status != Status::Error) continue;
    EXPECT_NE(o.error.find("out of memory"), std::string::npos) << o.error;
    ++oom;
    if (i + 1 < run.order.size() && run.by_key.at(run.order[i + 1]).status == Status::Pass) ++pass_after_oom;
  }
  EXPECT_GT(oom, 0);
  EXPECT_GT(pass_after_oom, 0);
}

TEST_F(SimE2E, BadConfigurationIsAOneLineErrorNamingThePosition) {
  Result r = gauntlet("run --suite smoke --backend sim --db " + (dir_ / "x.db").string(),
                      "GAUNTLET_SIM_FAULTS='op=aten::mm,kind=segfault'");
  expect_one_line_error(r, "GAUNTLET_SIM_FAULTS: rule 1 (column 18): unknown kind 'segfault'");
  EXPECT_FALSE(fs::exists(dir_ / "x.db"));
  Result numerics = gauntlet("backend-info --backend sim", "GAUNTLET_SIM_NUMERICS=bf16_matmul=maybe");
  expect_one_line_error(numerics, "GAUNTLET_SIM_NUMERICS (column 1): bf16_matmul must be on or off");
  Result missing = gauntlet("backend-info --backend sim", "GAUNTLET_SIM_LIB=/nonexistent/libx.so");
  expect_one_line_error(missing, "backend library not found: /nonexistent/libx.so");
}

}  // namespace
