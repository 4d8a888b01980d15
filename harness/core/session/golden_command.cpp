// `gauntlet golden` (gauntlet/core/session/golden_command.h).
#include "gauntlet/core/session/golden_command.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <set>

#include "gauntlet/base/error.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/golden/golden.h"
#include "gauntlet/golden/golden_jobs.h"
#include "gauntlet/golden/golden_store.h"
#include "gauntlet/run/selection.h"

namespace gauntlet {

namespace {

void progress(std::size_t done, std::size_t total, const char* what) {
  fmt::print(stderr, "\r\033[K[{}/{}] {}", done, total, what);
  std::fflush(stderr);
}

GoldenDone build(const GoldenOptions& o) {
  GoldenDone d;
  const std::string dir = suites_dir_or_default(o.suites_dir);
  if (o.suite.empty()) throw Error("golden build needs --suite NAME");
  if (o.workers < 1) throw Error("--workers must be >= 1");
  Suite suite = load_suite(o.suite, dir);
  std::vector<CaseKey> keys;
  for (const Case* c : select_cases(suite, o.filter, o.shard)) keys.push_back(c->key);
  auto store = GoldenStore::open(o.store, GoldenStore::Mode::ReadWrite);
  const bool show = !o.quiet && isatty(STDERR_FILENO);
  const GoldenBuild b = build_goldens(*store, keys, o.workers, show ? GoldenProgress(progress) : GoldenProgress());
  if (show) fmt::print(stderr, "\r\033[K");
  // A golden that cannot be computed is not a build failure: such a case ends ERROR (or XFAIL) in
  // every run, store or not. It is listed so it is seen.
  for (const auto& f : b.failures) d.text += fmt::format("NO GOLDEN   {}\n", f);
  d.text += fmt::format(
      "golden store {}: suite {}, {} cases: {} computed, {} already stored, {} without a golden, {:.1f} s ({} "
      "workers)\n",
      o.store, suite.name, b.cases, b.computed, b.reused, b.failures.size(), b.seconds, o.workers);
  d.text += fmt::format("reference {}, golden method version {}\n", reference_identity(), kGoldenMethodVersion);
  return d;
}

GoldenDone verify(const GoldenOptions& o) {
  GoldenDone d;
  auto store = GoldenStore::open(o.store, GoldenStore::Mode::ReadOnly);
  const bool show = !o.quiet && isatty(STDERR_FILENO);
  const GoldenVerify v = verify_goldens(*store, o.sample, o.seed, show ? GoldenProgress(progress) : GoldenProgress());
  if (show) fmt::print(stderr, "\r\033[K");
  for (const std::string& c : v.corrupt) d.text += fmt::format("CORRUPT     {}\n", c);
  for (const std::string& f : v.drifted) d.text += fmt::format("DRIFT       {}\n", f);
  d.text +=
      fmt::format("golden store {}: {} entries, {} corrupt; {} recomputed with {} (method {}), {} drifted\n", o.store,
                  v.entries, v.corrupt.size(), v.sampled, reference_identity(), kGoldenMethodVersion, v.drifted.size());
  d.exit_code = (!v.corrupt.empty() || !v.drifted.empty()) ? 1 : 0;
  return d;
}

GoldenDone freeze(const GoldenOptions& o) {
  GoldenDone d;
  if (o.release.empty()) throw Error("golden freeze needs --release NAME");
  if (o.suite.empty()) throw Error("golden freeze needs --suite NAME (the cases the release was qualified on)");
  Suite suite = load_suite(o.suite, suites_dir_or_default(o.suites_dir));
  auto store = GoldenStore::open(o.store, GoldenStore::Mode::ReadWrite);
  const std::string reference = reference_identity();
  // Cases without a golden (never built, or whose golden cannot be computed) are not frozen;
  // they are counted and named, and a manifest with nothing in it is refused.
  std::set<std::string> stored;
  for (const auto& e : store->entries()) {
    if (e.method_version == kGoldenMethodVersion && e.reference == reference) stored.insert(e.key);
  }
  std::vector<std::string> keys, missing;
  for (const Case* c : select_cases(suite, o.filter, o.shard))
    (stored.count(c->text) ? keys : missing).push_back(c->text);
  if (keys.empty()) {
    throw Error(fmt::format("{}: no golden of suite {} is stored for {} (run gauntlet golden build first)", o.store,
                            suite.name, reference));
  }
  std::size_t n = store->freeze(o.release, keys, kGoldenMethodVersion, reference);
  d.text += fmt::format("golden store {}: release {} frozen with {} entries ({}/manifests/{}.json)\n", o.store,
                        o.release, n, o.store, o.release);
  if (!missing.empty()) {
    d.text += fmt::format("{} cases have no golden and were not frozen (first: {})\n", missing.size(), missing.front());
  }
  return d;
}

GoldenDone gc(const GoldenOptions& o) {
  GoldenDone d;
  const std::string dir = suites_dir_or_default(o.suites_dir);
  std::vector<std::string> live;
  for (const auto& name : list_suites(dir)) {
    for (const auto& c : load_suite(name, dir).cases) live.push_back(c.text);
  }
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  auto store = GoldenStore::open(o.store, GoldenStore::Mode::ReadWrite);
  auto [entries, objects] = store->gc(live, kGoldenMethodVersion);
  d.text += fmt::format(
      "golden store {}: dropped {} entries and {} objects (kept what a manifest or a suite in {} references)\n",
      o.store, entries, objects, dir);
  return d;
}

}  // namespace

void describe_options(OptionSink& s, GoldenOptions& o, const std::string& action) {
  s.option("--store", o.store, "golden store folder").required();
  s.option("--suites-dir", o.suites_dir, "where suites live");
  s.flag("--quiet", o.quiet, "no progress line");
  if (action == "build") {
    s.option("--suite", o.suite, "suite name or .yaml path").required();
    s.option("--filter", o.filter, "gtest-style globs on case keys");
    s.option("--shard", o.shard, "i/N: only the i-th of N shards");
    s.option("--workers", o.workers, "threads computing goldens").show_default();
  } else if (action == "verify") {
    s.option("--sample", o.sample, "entries to recompute (-1: all)").show_default();
    s.option("--seed", o.seed, "which sample").show_default();
  } else if (action == "freeze") {
    s.option("--release", o.release, "release name").required();
    s.option("--suite", o.suite, "the suite the release was qualified on").required();
    s.option("--filter", o.filter, "gtest-style globs on case keys");
  }
}

GoldenDone golden_command(const GoldenOptions& o) {
  if (o.action == "build") return build(o);
  if (o.action == "verify") return verify(o);
  if (o.action == "freeze") return freeze(o);
  if (o.action == "gc") return gc(o);
  throw Error("unknown golden action '" + o.action + "' (build, verify, freeze, gc)");
}

}  // namespace gauntlet
