// End-to-end tests of the golden store (docs/golden.md): the real gauntlet binary, real SQLite files.
#include <gtest/gtest.h>
#include <sqlite3.h>
#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "e2e_support.h"
#include "gauntlet/base/case_key.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/golden/golden.h"
#include "gauntlet/golden/golden_store.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/store/store.h"

namespace fs = std::filesystem;
using e2e::E2E;
using e2e::Result;
using e2e::slurp;
using gauntlet::Status;

namespace {

std::map<std::string, gauntlet::Outcome> outcomes_of(const std::string& db) {
  auto store = gauntlet::Store::open(db, gauntlet::Store::OpenMode::ReadOnly);
  std::map<std::string, gauntlet::Outcome> out;
  for (const auto& r : store->results(*store->latest_run())) out[r.outcome.key] = r.outcome;
  return out;
}

void expect_same_verdicts(const std::map<std::string, gauntlet::Outcome>& a,
                          const std::map<std::string, gauntlet::Outcome>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (const auto& [key, x] : a) {
    const auto& y = b.at(key);
    EXPECT_EQ(x.status, y.status) << key;
    EXPECT_EQ(x.metrics.mismatches, y.metrics.mismatches) << key;
    EXPECT_EQ(x.metrics.numel, y.metrics.numel) << key;
    EXPECT_EQ(x.metrics.max_ulp, y.metrics.max_ulp) << key;
    EXPECT_EQ(x.metrics.worst, y.metrics.worst) << key;
    EXPECT_TRUE(x.metrics.max_abs_err == y.metrics.max_abs_err ||
                (std::isnan(x.metrics.max_abs_err) && std::isnan(y.metrics.max_abs_err)))
        << key;
    EXPECT_TRUE(x.metrics.max_rel_err == y.metrics.max_rel_err ||
                (std::isnan(x.metrics.max_rel_err) && std::isnan(y.metrics.max_rel_err)))
        << key;
    EXPECT_EQ(x.error, y.error) << key;
  }
}

const char* kGoldenFilter = "'op/mm/*:op/exp/*:op/layer_norm/*:op/sum/*:op/sort/*:op/hardswish/*'";

TEST_F(E2E, GoldenStoreGivesIdenticalResultsAndSurvivesCorruption) {
  const std::string store = (dir_ / "goldens").string();
  Result build =
      gauntlet("golden build --suite smoke --store " + store + " --filter " + kGoldenFilter + " --workers 2");
  ASSERT_EQ(build.code, 0) << build.out << build.err;
  EXPECT_NE(build.out.find(" 0 already stored, 0 without a golden"), std::string::npos) << build.out;
  Result again = gauntlet("golden build --suite smoke --store " + store + " --filter " + kGoldenFilter);
  ASSERT_EQ(again.code, 0);
  EXPECT_NE(again.out.find(": 0 computed, "), std::string::npos) << again.out;  // incremental

  const std::string plain = (dir_ / "plain.db").string(), stored = (dir_ / "stored.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --quiet --db " + plain + " --filter " + kGoldenFilter).code, 0);
  ASSERT_EQ(gauntlet("run --suite smoke --quiet --db " + stored + " --filter " + kGoldenFilter + " --golden-store " +
                     store + " --golden-always")
                .code,
            0);
  auto a = outcomes_of(plain), b = outcomes_of(stored);
  expect_same_verdicts(a, b);
  std::size_t from_store = 0;
  for (const auto& [key, o] : b) {
    if (o.status == Status::Skip) continue;
    EXPECT_EQ(o.golden_source, "store") << key;
    EXPECT_EQ(o.golden_entry.size(), 32u) << key;
    ++from_store;
    EXPECT_EQ(a.at(key).golden_source, "computed");
  }
  EXPECT_GT(from_store, 50u);

  // Without --golden-always, goldens cheaper to compute than to read (all of these small cases)
  // are recomputed, with the same verdicts.
  const std::string automatic = (dir_ / "auto.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --quiet --db " + automatic + " --filter " + kGoldenFilter + " --golden-store " +
                     store)
                .code,
            0);
  auto d = outcomes_of(automatic);
  expect_same_verdicts(a, d);
  for (const auto& [key, o] : d) {
    if (o.status != Status::Skip) {
      EXPECT_TRUE(o.golden_source == "recomputed" || o.golden_source == "store") << key << " " << o.golden_source;
    }
  }

  // Flip one byte of one object: the entry is detected as corrupt, never used, and recomputed.
  auto gs = gauntlet::GoldenStore::open(store, gauntlet::GoldenStore::Mode::ReadOnly);
  const auto entries = gs->entries();
  ASSERT_FALSE(entries.empty());
  // A victim whose object no other entry shares (equal goldens share one object).
  std::map<std::string, int> users;
  for (const auto& e : entries) ++users[e.object];
  auto it = std::find_if(entries.begin(), entries.end(), [&](const auto& e) { return users[e.object] == 1; });
  ASSERT_NE(it, entries.end());
  const auto& victim = *it;
  fs::path object;
  for (const auto& f : fs::recursive_directory_iterator(fs::path(store) / "objects")) {
    if (f.path().filename().string().rfind(victim.object, 0) == 0) object = f.path();
  }
  ASSERT_FALSE(object.empty());
  {
    std::fstream f(object, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(static_cast<std::streamoff>(fs::file_size(object) / 2));
    char c = 0;
    f.read(&c, 1);
    f.seekp(static_cast<std::streamoff>(fs::file_size(object) / 2));
    c = static_cast<char>(c ^ 0x5a);
    f.write(&c, 1);
  }
  const std::string after = (dir_ / "after.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --quiet --db " + after + " --filter " + kGoldenFilter + " --golden-store " +
                     store + " --golden-always")
                .code,
            0);
  auto c = outcomes_of(after);
  expect_same_verdicts(a, c);
  EXPECT_EQ(c.at(victim.key).golden_source, "computed") << victim.key;
  Result verify = gauntlet("golden verify --store " + store + " --sample 5");
  EXPECT_EQ(verify.code, 1);
  EXPECT_NE(verify.out.find("CORRUPT     " + victim.key), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("1 corrupt"), std::string::npos) << verify.out;
}

TEST_F(E2E, GoldenVerifyReportsDrift) {
  const std::string store = (dir_ / "goldens").string();
  ASSERT_EQ(gauntlet("golden build --suite smoke --store " + store + " --filter 'op/exp/*:op/mm/*'").code, 0);
  Result clean = gauntlet("golden verify --store " + store + " --sample -1");
  EXPECT_EQ(clean.code, 0) << clean.out;
  EXPECT_NE(clean.out.find(" 0 drifted"), std::string::npos) << clean.out;

  // Inject a changed reference: one entry holds slightly different values, another was made by
  // an older golden method.
  const std::string changed = "op/mm/f32/17x31,31x8/contig/eager";
  const std::string old_method = "op/sum/f32/17x31/contig/eager";  // stored by the old method only
  {
    auto gs = gauntlet::GoldenStore::open(store, gauntlet::GoldenStore::Mode::ReadWrite);
    const auto key = gauntlet::CaseKey::parse(changed);
    const auto& def = *gauntlet::find_op_def(key.target);
    auto golden = gauntlet::compute_golden(def, key, gauntlet::make_inputs(key, def.spec));
    golden[0].value = golden[0].value * (1 + 1e-9);
    gs->put(changed, gauntlet::kGoldenMethodVersion, gauntlet::reference_identity(), golden);
    const auto k2 = gauntlet::CaseKey::parse(old_method);
    const auto& d2 = *gauntlet::find_op_def(k2.target);
    gs->put(old_method, gauntlet::kGoldenMethodVersion - 1, gauntlet::reference_identity(),
            gauntlet::compute_golden(d2, k2, gauntlet::make_inputs(k2, d2.spec)));
  }
  Result verify = gauntlet("golden verify --store " + store + " --sample -1");
  EXPECT_EQ(verify.code, 1);
  EXPECT_NE(verify.out.find("DRIFT       " + changed), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("DRIFT       " + old_method), std::string::npos) << verify.out;
  EXPECT_NE(verify.out.find("2 drifted"), std::string::npos) << verify.out;
  // The old-method entry is never used for the current method.
  Result repro = gauntlet("repro '" + old_method + "' --json --golden-store " + store);
  ASSERT_EQ(repro.code, 0) << repro.err;
  EXPECT_EQ(nlohmann::json::parse(repro.out).at("golden_source"), "computed");
}

TEST_F(E2E, FrozenReleaseKeepsItsGoldens) {
  const std::string store = (dir_ / "goldens").string();
  const std::string filter = "'op/mm/f32/*'";
  ASSERT_EQ(gauntlet("golden build --suite smoke --store " + store + " --filter " + filter).code, 0);
  Result freeze = gauntlet("golden freeze --store " + store + " --release r1 --suite smoke --filter " + filter);
  ASSERT_EQ(freeze.code, 0) << freeze.err;
  EXPECT_TRUE(fs::exists(fs::path(store) / "manifests" / "r1.json"));
  expect_one_line_error(gauntlet("golden freeze --store " + store + " --release r1 --suite smoke --filter " + filter),
                        "already frozen");
  expect_one_line_error(gauntlet("golden freeze --store " + store + " --release r2 --suite smoke --filter 'op/exp/*'"),
                        "no golden of suite smoke is stored");
  expect_one_line_error(gauntlet("golden verify --store " + (dir_ / "nowhere").string()), "no such golden store");
  // A case whose golden cannot be computed is listed, not a build failure. The real suites have
  // none (GoldenCheck, golden_check_test.cpp): a suite of its own makes one (a valid key, but a
  // max over an empty dim, which the CPU op refuses even in fp64; a dim out of range no longer
  // makes a valid key).
  const fs::path nog_suites =
      suites_with({{"nogolden.yaml",
                    "suite: nogolden\ndescription: a case without a golden\ngroups:\n"
                    "  - ops: [max_dim]\n    dtypes: [f32]\n    shapes: [\"0x4\"]\n    args: [{dim: 0}]\n"}});
  Result nog = gauntlet("golden build --suite nogolden --suites-dir " + nog_suites.string() + " --store " + store);
  EXPECT_EQ(nog.code, 0) << nog.err;
  EXPECT_NE(
      nog.out.find(
          "NO GOLDEN   op/max_dim/f32/0x4/contig/eager/dim=0: max(): Expected reduction dim 0 to have non-zero size"),
      std::string::npos)
      << nog.out;

  // The current golden of one case changes afterwards (a new reference, say)...
  const std::string key_text = "op/mm/f32/64x64,64x64/contig/eager";
  {
    auto gs = gauntlet::GoldenStore::open(store, gauntlet::GoldenStore::Mode::ReadWrite);
    const auto key = gauntlet::CaseKey::parse(key_text);
    const auto& def = *gauntlet::find_op_def(key.target);
    auto golden = gauntlet::compute_golden(def, key, gauntlet::make_inputs(key, def.spec));
    golden[0].value = golden[0].value + 1.0;
    gs->put(key_text, gauntlet::kGoldenMethodVersion, gauntlet::reference_identity(), golden);
  }
  // ...the current goldens now fail that case, while release r1's frozen goldens still pass it.
  Result now = gauntlet("repro '" + key_text + "' --json --golden-store " + store);
  EXPECT_EQ(nlohmann::json::parse(now.out).at("status"), "FAIL");
  Result frozen = gauntlet("repro '" + key_text + "' --json --golden-store " + store + " --golden-release r1");
  EXPECT_EQ(nlohmann::json::parse(frozen.out).at("status"), "PASS") << frozen.out;
  const std::string db = (dir_ / "r1.db").string();
  ASSERT_EQ(gauntlet("run --suite smoke --quiet --db " + db + " --filter " + filter + " --golden-store " + store +
                     " --golden-release r1 --gate")
                .code,
            0);
}

}  // namespace
