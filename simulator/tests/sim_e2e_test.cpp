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
  StoredRun run_sim(const std::string& name, const std::string& env, const std::string& filter = "",
                    const std::string& extra = "") {
    const fs::path db = dir_ / (name + ".db");
    Result r = gauntlet("run --suite smoke --backend sim --quiet --db " + db.string() +
                            (filter.empty() ? "" : " --filter '" + filter + "'") + " " + extra,
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
    return affected_by({{selector, "aten::mm"}}).at("aten::mm");
  }
  // Per op: the cases that dispatch it (selector -> the op name it records when forced to fall back).
  std::map<std::string, std::set<std::string>> affected_by(const std::map<std::string, std::string>& selectors) {
    std::string rules;
    for (const auto& [sel, op] : selectors) rules += (rules.empty() ? "" : ";") + sel + ",kind=fallback";
    StoredRun forced = run_sim("forced", "GAUNTLET_SIM_NUMERICS=none GAUNTLET_SIM_FAULTS='" + rules + "'");
    std::map<std::string, std::set<std::string>> sets;
    for (const auto& [sel, op] : selectors) {
      sets[op];
      for (const auto& [key, o] : forced.by_key) {
        if (std::find(o.fallback_ops.begin(), o.fallback_ops.end(), op) != o.fallback_ops.end()) sets[op].insert(key);
      }
    }
    return sets;
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

// ---- Through the orchestrator: worker processes, retries, resume, plans and merges.

// Three faults that kill or stop a worker, each in its own op: exactly the cases of those ops
// end CRASH or TIMEOUT (after a retry alone), and every other case is as in a fault-free run.
TEST_F(SimE2E, CrashesAndHangsInWorkersCostExactlyTheirCases) {
  const auto sets = affected_by({{"op=aten::mm,dtype=f32", "aten::mm"},
                                 {"op=aten::sort.stable,dtype=f32", "aten::sort.stable"},
                                 {"op=aten::topk,dtype=f32", "aten::topk"}});
  for (const auto& [op, keys] : sets) ASSERT_FALSE(keys.empty()) << op;
  StoredRun base = run_sim("base", kExact);
  StoredRun hit = run_sim("hit",
                          kExact + std::string("GAUNTLET_SIM_FAULTS='op=aten::mm,dtype=f32,kind=segv; "
                                               "op=aten::sort.stable,dtype=f32,kind=abort; "
                                               "op=aten::topk,dtype=f32,kind=hang'"),
                          "", "--timeout 2 --workers 2");
  ASSERT_EQ(hit.by_key.size(), base.by_key.size());
  auto in = [&](const char* op, const std::string& key) { return sets.at(op).count(key) > 0; };
  for (const auto& [key, b] : base.by_key) {
    const Outcome& h = hit.by_key.at(key);
    const int n = in("aten::mm", key) + in("aten::sort.stable", key) + in("aten::topk", key);
    if (n == 0) {
      EXPECT_TRUE(same_metrics(b, h)) << key << ": " << h.error;
      EXPECT_EQ(h.attempt, 1) << key;
      continue;
    }
    EXPECT_EQ(h.attempt, 2) << key;
    EXPECT_FALSE(h.flaky) << key;
    if (n > 1) {
      EXPECT_TRUE(h.status == Status::Crash || h.status == Status::Timeout) << key;
    } else if (in("aten::mm", key)) {
      EXPECT_EQ(h.status, Status::Crash) << key;
      EXPECT_NE(h.error.find("worker died with SIGSEGV"), std::string::npos) << key << ": " << h.error;
    } else if (in("aten::sort.stable", key)) {
      EXPECT_EQ(h.status, Status::Crash) << key;
      EXPECT_NE(h.error.find("worker died with SIGABRT"), std::string::npos) << key << ": " << h.error;
    } else {
      EXPECT_EQ(h.status, Status::Timeout) << key;
      EXPECT_NE(h.error.find("timeout: no result after 2 s"), std::string::npos) << h.error;
    }
  }
}

TEST_F(SimE2E, KilledOrchestratorLosesNothingCommittedAndResumeFinishesTheRun) {
  StoredRun base = run_sim("base", kExact);
  const fs::path db = dir_ / "killed.db", pid_file = dir_ / "pid";
  const std::string cmd = std::string(kExact) + std::string(GAUNTLET_BIN) +
                          " run --suite smoke --backend sim --quiet --run-id 7 --db " + db.string() +
                          " >/dev/null 2>&1 & echo $! > " + pid_file.string();
  ASSERT_EQ(std::system(cmd.c_str()), 0);
  // Kill it (SIGKILL: no cleanup) once it has committed a few hundred results.
  auto committed = [&] {
    sqlite3* h = nullptr;
    long long n = -1;
    if (sqlite3_open_v2(db.c_str(), &h, SQLITE_OPEN_READONLY, nullptr) == SQLITE_OK) {
      sqlite3_stmt* st = nullptr;
      if (sqlite3_prepare_v2(h, "SELECT count(*) FROM results", -1, &st, nullptr) == SQLITE_OK &&
          sqlite3_step(st) == SQLITE_ROW) {
        n = sqlite3_column_int64(st, 0);
      }
      sqlite3_finalize(st);
    }
    sqlite3_close(h);
    return n;
  };
  for (int i = 0; i < 3000 && committed() < 300; ++i) ::usleep(10000);
  const pid_t pid = std::stoi(e2e::slurp(pid_file));
  ASSERT_EQ(::kill(pid, SIGKILL), 0);
  for (int i = 0; i < 500 && ::kill(pid, 0) == 0; ++i) ::usleep(10000);
  const long long before = committed();
  ASSERT_GT(before, 0);
  ASSERT_LT(static_cast<std::size_t>(before), base.by_key.size()) << "killed too late to test a resume";

  Result resumed = gauntlet("run --resume 7 --quiet --db " + db.string(), kExact);
  ASSERT_EQ(resumed.code, 0) << resumed.err;
  EXPECT_NE(resumed.err.find("resuming run 7: " + std::to_string(before) + " of "), std::string::npos) << resumed.err;
  StoredRun done = read(db);
  EXPECT_EQ(done.info.id, 7);
  EXPECT_FALSE(done.info.finished_at.empty());
  EXPECT_EQ(done.order.size(), base.by_key.size()) << "one row per case: nothing lost, nothing twice";
  for (const auto& [key, b] : base.by_key) {
    ASSERT_TRUE(done.by_key.count(key)) << key;
    EXPECT_TRUE(same_metrics(b, done.by_key.at(key))) << key;
  }
  // Resuming a finished run has nothing left to do; the same command with --run-id resumes too.
  Result again = gauntlet("run --suite smoke --backend sim --quiet --run-id 7 --db " + db.string(), kExact);
  EXPECT_EQ(again.code, 0) << again.err;
  EXPECT_NE(again.err.find(", 0 to run"), std::string::npos) << again.err;
  Result other = gauntlet("run --suite nightly --backend sim --quiet --run-id 7 --db " + db.string(), kExact);
  expect_one_line_error(other, "run 7 used --suite smoke, not nightly");
  // Another release of the backend (default numerics, not the run's exact ones) is refused.
  Result release = gauntlet("run --resume 7 --quiet --db " + db.string());
  expect_one_line_error(release, "resume it with the same backend release and configuration");
}

TEST_F(SimE2E, PlannedShardsMergeIntoTheSingleRun) {
  StoredRun base = run_sim("base", kExact);
  const fs::path plan = dir_ / "plan.json";
  Result p = gauntlet("plan --suite smoke --shards 2 --out " + plan.string());
  ASSERT_EQ(p.code, 0) << p.err;
  std::vector<std::string> shard_dbs;
  for (int i = 0; i < 2; ++i) {
    const std::string db = (dir_ / ("shard" + std::to_string(i) + ".db")).string();
    Result r = gauntlet("run --suite smoke --backend sim --quiet --release r1 --plan " + plan.string() + " --shard " +
                            std::to_string(i) + "/2 --db " + db,
                        kExact);
    ASSERT_EQ(r.code, 0) << r.err;
    shard_dbs.push_back(db);
  }
  const std::string all = (dir_ / "all.db").string();
  Result m = gauntlet("merge " + shard_dbs[0] + " " + shard_dbs[1] + " --into " + all);
  ASSERT_EQ(m.code, 0) << m.err;
  Result m2 = gauntlet("merge " + shard_dbs[1] + " --into " + all);  // again: idempotent
  ASSERT_EQ(m2.code, 0) << m2.err;
  StoredRun merged = read(all);
  EXPECT_EQ(merged.info.release, "r1");
  EXPECT_EQ(merged.info.shard, "merged 2 of 2");
  EXPECT_EQ(merged.order.size(), base.by_key.size());
  for (const auto& [key, b] : base.by_key) {
    ASSERT_TRUE(merged.by_key.count(key)) << key;
    EXPECT_TRUE(same_metrics(b, merged.by_key.at(key))) << key;
  }
  EXPECT_FALSE(merged.info.finished_at.empty());
  // A shard that did not finish keeps the merged run unfinished, whichever order they come in.
  {
    sqlite3* h = nullptr;
    ASSERT_EQ(sqlite3_open(shard_dbs[0].c_str(), &h), SQLITE_OK);
    ASSERT_EQ(sqlite3_exec(h, "UPDATE runs SET finished_at = ''", nullptr, nullptr, nullptr), SQLITE_OK);
    sqlite3_close(h);
  }
  const std::string partial = (dir_ / "partial.db").string();
  ASSERT_EQ(gauntlet("merge " + shard_dbs[0] + " " + shard_dbs[1] + " --into " + partial).code, 0);
  EXPECT_TRUE(read(partial).info.finished_at.empty());
  // A shard of another run is refused, and the merged database is left as it was.
  const std::string other = (dir_ / "other.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --backend cpu --quiet --filter 'op/add/*' --db " + other).code, 0);
  Result bad = gauntlet("merge " + other + " --into " + all);
  expect_one_line_error(bad, "refusing to merge");
  EXPECT_EQ(read(all).order.size(), base.by_key.size());
}

}  // namespace
