// Compile time and first-run latency judged against their drift and the noise of the other
// compile cases (Note [Compile-time noise] in harness/analysis/regress.cpp), on databases written
// through the Store: 40 compile cases of `sim`, each with its compile time and first call.
//   r1: the baseline, ±5% noise a case
//   r2: the same release on a loaded host: every case 1.8x to 2.4x slower    -> nothing
//   r3: the same release on a quiet host, 8 cases' compiles 1.6x slower       -> those 8 only
//   r4, r5: a simulator's modelled cost (the same figures in both runs), 8 cases 1.3x in r5, by
//   well under 1 ms                                                          -> those 8 only
//   r6, r7: inductor's cache cold for every case in r6; in r7 it serves the even cases (20x
//   faster compiles), and 4 odd (cold) cases compile 1.6x slower          -> those 4 only, and
//   the 20 even cases counted as not judged (Note [Compile time across caches])
// The backend reports no simulated time in r1 to r3, so first runs are judged too.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <functional>
#include <map>
#include <optional>
#include <set>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/base/splitmix.h"
#include "gauntlet/store/store.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

constexpr int kCases = 40;

std::string key_of(int n) { return "op/add/f32/" + std::to_string(n) + "x8,8/contig/compile"; }

double uniform(int a, int b) {
  return SplitMix64(static_cast<std::uint64_t>(a) * 1000003u + static_cast<std::uint64_t>(b)).uniform();
}

class CompileNoiseTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = ::testing::TempDir() + "gauntlet_compile_noise_XXXXXX";
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
    db_ = (dir_ / "c.db").string();
    auto store = Store::open(db_, Store::OpenMode::ReadWrite);
    add_run(*store, 1, [](int n) { return 0.95 + 0.1 * uniform(1, n); });
    add_run(*store, 2, [](int n) { return 1.8 + 0.6 * uniform(2, n); });
    add_run(*store, 3, [](int n) { return (0.95 + 0.1 * uniform(3, n)) * (n % 5 == 0 ? 1.6 : 1.0); });
    add_run(
        *store, 4, [](int n) { return 0.1 * (0.95 + 0.1 * uniform(1, n)); }, true);
    add_run(
        *store, 5, [](int n) { return 0.1 * (0.95 + 0.1 * uniform(1, n)) * (n % 5 == 0 ? 1.3 : 1.0); }, true);
    add_run(
        *store, 6, [](int n) { return 0.95 + 0.1 * uniform(6, n); }, false, [](int) { return 0; });
    add_run(
        *store, 7,
        [](int n) {
          const double noise = 0.95 + 0.1 * uniform(7, n);
          if (n % 2 == 0) return noise / 20;  // served by the cache
          return noise * (n % 5 == 0 ? 1.6 : 1.0);
        },
        false, [](int n) { return n % 2 == 0 ? 1 : 0; });
  }
  void TearDown() override { fs::remove_all(dir_); }

  template <typename Factor>
  static void add_run(Store& store, int release, Factor factor, bool simulated = false,
                      const std::function<std::optional<std::int64_t>(int)>& cache_hits = {}) {
    RunInfo info;
    info.release = "r" + std::to_string(release);
    info.backend = "sim";
    info.backend_version = "sim-1.0";
    info.suite = "compile_smoke";
    info.started_at = "2026-11-0" + std::to_string(release) + "T10:00:00Z";
    const std::int64_t run = store.begin_run(info);
    for (int n = 1; n <= kCases; ++n) {
      Outcome o;
      o.status = Status::Pass;
      o.atol = 1e-5;
      o.rtol = 1.3e-6;
      if (simulated) o.sim_time_us = 10.0 + n;
      o.timing.median_us = 5;
      const double compile_ms = (4.0 + n) * factor(n);
      o.compile_ms = compile_ms;
      o.graph_breaks = 0;
      o.recompiles = 0;
      o.timing.first_us = compile_ms * 1e3 + 300;
      if (cache_hits) o.cache_hits = cache_hits(n);
      store.add_result(run, CaseKey::parse(key_of(n)), o);
    }
    store.flush();
    store.finish_run(run, info.started_at);
  }

  std::set<std::string> found(std::int64_t candidate, Change change, std::int64_t baseline = 1) const {
    const RunComparison c = compare_runs(db_, candidate, baseline, CompareOptions{});
    std::set<std::string> keys;
    for (const Finding& f : c.findings) {
      if (f.change == change) keys.insert(f.key);
    }
    return keys;
  }

  fs::path dir_;
  std::string db_;
};

TEST_F(CompileNoiseTest, ALoadedHostSlowingEveryCaseAlikeIsDriftNotAFinding) {
  EXPECT_TRUE(found(2, Change::CompileTime).empty());
  EXPECT_TRUE(found(2, Change::FirstRun).empty());
  const RunComparison c = compare_runs(db_, 2, 1, CompareOptions{});
  EXPECT_GT(c.compile_drift, 1.8);
  EXPECT_LT(c.compile_drift, 2.4);
}

TEST_F(CompileNoiseTest, SomeCasesCompilingSlowerAreFoundAndNoOther) {
  std::set<std::string> slowed;
  for (int n = 5; n <= kCases; n += 5) slowed.insert(key_of(n));
  EXPECT_EQ(found(3, Change::CompileTime), slowed);
  EXPECT_EQ(found(3, Change::FirstRun), slowed);
  const RunComparison c = compare_runs(db_, 3, 1, CompareOptions{});
  for (const Finding& f : c.findings) {
    if (f.change != Change::CompileTime) continue;
    EXPECT_NE(f.detail.find("after drift"), std::string::npos) << f.detail;
    EXPECT_NE(f.detail.find("noise ±"), std::string::npos) << f.detail;
  }
}

TEST_F(CompileNoiseTest, AModelledCompileCostIsJudgedExactly) {
  std::set<std::string> slowed;
  for (int n = 5; n <= kCases; n += 5) slowed.insert(key_of(n));
  EXPECT_EQ(found(5, Change::CompileTime, 4), slowed);
  EXPECT_TRUE(found(5, Change::FirstRun, 4).empty());  // host time on a simulator: not judged
}

TEST_F(CompileNoiseTest, CompilesACacheServedInOneRunOnlyAreCountedNotJudged) {
  const std::set<std::string> slowed = {key_of(5), key_of(15), key_of(25), key_of(35)};
  EXPECT_EQ(found(7, Change::CompileTime, 6), slowed);
  EXPECT_EQ(found(7, Change::FirstRun, 6), slowed);
  const RunComparison c = compare_runs(db_, 7, 6, CompareOptions{});
  EXPECT_EQ(c.compile_cache_differs, kCases / 2);
  // results that do not say (r1: no compiler cache consulted) are judged as ever
  EXPECT_EQ(compare_runs(db_, 6, 1, CompareOptions{}).compile_cache_differs, 0);
}

// Note [New graph break reasons]: a case whose count of graph breaks stays the same (or falls)
// while one of its breaks is new is flagged, with the new reason; the same breaks in another
// order, or fewer of the same, are not.
TEST(GraphBreakReasons, ANewReasonAtTheSameCountIsFlaggedAndNothingElse) {
  std::string pattern = ::testing::TempDir() + "gauntlet_break_reasons_XXXXXX";
  ASSERT_NE(mkdtemp(pattern.data()), nullptr);
  const fs::path dir = pattern;
  const std::string db = (dir / "b.db").string();
  {
    auto store = Store::open(db, Store::OpenMode::ReadWrite);
    // case -> its graph breaks in the baseline (r1) and in the candidate (r2)
    const std::vector<std::pair<std::vector<std::string>, std::vector<std::string>>> cases = {
        {{"aten::mish (<traced op>:2): no kernel on the device"},
         {"aten::erfinv (<traced op>:2): no kernel on the device"}},    // swapped: flagged
        {{"A (m.py:3)", "B (m.py:9)"}, {"B (m.py:9)", "A (m.py:3)"}},   // reordered: not
        {{"A (m.py:3)", "B (m.py:9)"}, {"A (m.py:3)"}},                 // fewer: not
        {{"A (m.py:3)", "B (m.py:9)"}, {"A (m.py:3)", "C (m.py:12)"}},  // one new: flagged
        {{}, {}},                                                       // none: not
    };
    for (int release = 1; release <= 2; ++release) {
      RunInfo info;
      info.release = "r" + std::to_string(release);
      info.backend = "sim";
      info.suite = "compile_smoke";
      info.started_at = "2026-11-0" + std::to_string(release) + "T10:00:00Z";
      const std::int64_t run = store->begin_run(info);
      for (std::size_t n = 0; n < cases.size(); ++n) {
        const std::vector<std::string>& breaks = release == 1 ? cases[n].first : cases[n].second;
        Outcome o;
        o.status = Status::Pass;
        o.timing.median_us = 5;
        o.compile_ms = 10;
        o.graph_breaks = static_cast<std::int64_t>(breaks.size());
        o.recompiles = 1;
        if (!breaks.empty()) o.reason = "graph breaks: " + fmt::format("{}", fmt::join(breaks, "; "));
        o.reason += (o.reason.empty() ? "" : "; ") + std::string("recompiles: size mismatch at index 0");
        store->add_result(run, CaseKey::parse(key_of(static_cast<int>(n + 1))), o);
      }
      store->flush();
      store->finish_run(run, info.started_at);
    }
  }
  std::map<std::string, std::string> flagged;
  for (const Finding& f : compare_runs(db, 2, 1, CompareOptions{}).findings) {
    if (f.change == Change::GraphBreaks) flagged[f.key] = f.detail;
  }
  ASSERT_EQ(flagged.size(), 2u);
  EXPECT_EQ(flagged[key_of(1)], "graph breaks 1 -> 1, new: aten::erfinv (<traced op>:2): no kernel on the device");
  EXPECT_EQ(flagged[key_of(4)], "graph breaks 2 -> 2, new: C (m.py:12)");
  fs::remove_all(dir);
}

}  // namespace
}  // namespace gauntlet
