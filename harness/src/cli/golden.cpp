// gauntlet golden build | verify | freeze | gc: the golden store (Note [Golden store]).
#include "gauntlet/golden.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <set>
#include <thread>

#include "cli.h"
#include "gauntlet/backend.h"
#include "gauntlet/golden_store.h"
#include "gauntlet/inputs.h"
#include "gauntlet/runner.h"

namespace gauntlet::cli {

namespace {

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

std::vector<NamedTensor> compute_for(const CaseKey& key) {
  const OpDef* def = find_op_def(key.target);
  if (!def) throw std::invalid_argument("unknown op " + key.target);
  return compute_golden(*def, key, make_inputs(key, def->spec));
}

void progress(bool on, std::size_t done, std::size_t total, const char* what) {
  if (!on) return;
  fmt::print(stderr, "\r\033[K[{}/{}] {}", done, total, what);
  std::fflush(stderr);
}

int build(const GoldenOptions& o) {
  const std::string dir = suites_dir_or_default(o.suites_dir);
  if (o.suite.empty()) throw UsageError("golden build needs --suite NAME");
  if (o.workers < 1) throw UsageError("--workers must be >= 1");
  Suite suite = load_suite(o.suite, dir);
  const auto cases = select_cases(suite, o.filter, o.shard);
  auto store = GoldenStore::open(o.store, GoldenStore::Mode::ReadWrite);
  const std::string reference = reference_identity();
  const bool show = !o.quiet && isatty(STDERR_FILENO);

  // Incremental: an intact entry for this method and reference is not recomputed.
  std::vector<const Case*> todo;
  for (const Case* c : cases) {
    // A collective's golden is computed by each rank from every rank's inputs (Note [Collective
    // ranks]): nothing to store.
    if (c->key.kind != "op") continue;
    if (!store->contains_valid(c->text, kGoldenMethodVersion, reference)) todo.push_back(c);
  }
  const std::size_t reused = cases.size() - todo.size();

  // Workers compute goldens in parallel; writes to the store are serialised.
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex write_mutex;
  std::vector<std::string> failures;
  auto t0 = Clock::now();
  auto work = [&] {
    for (std::size_t i = next++; i < todo.size(); i = next++) {
      const Case& c = *todo[i];
      try {
        // CPU time of this thread: the other workers' load does not inflate it.
        // Only the golden's computation is timed: a run makes the inputs either way.
        const OpDef* def = find_op_def(c.key.target);
        if (!def) throw std::invalid_argument("unknown op " + c.key.target);
        const auto inputs = make_inputs(c.key, def->spec);
        timespec t0{}, t1{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t0);
        auto outputs = compute_golden(*def, c.key, inputs);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t1);
        const double compute_us = double(t1.tv_sec - t0.tv_sec) * 1e6 + double(t1.tv_nsec - t0.tv_nsec) / 1e3;
        std::lock_guard<std::mutex> lock(write_mutex);
        store->put(c.text, kGoldenMethodVersion, reference, outputs, compute_us);
      } catch (const std::exception& e) {
        std::string msg = e.what();
        std::lock_guard<std::mutex> lock(write_mutex);
        failures.push_back(c.text + ": " + msg.substr(0, msg.find('\n')));
      }
      std::size_t n = ++done;
      if (show && (n % 64 == 0 || n == todo.size())) {
        std::lock_guard<std::mutex> lock(write_mutex);
        progress(true, n + reused, cases.size(), "computing goldens");
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < o.workers; ++w) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  if (show) fmt::print(stderr, "\r\033[K");

  // A golden that cannot be computed (the CPU op raises even in fp64) is not a build failure:
  // such a case ends ERROR (or XFAIL) in every run, store or not. It is listed so it is seen.
  std::sort(failures.begin(), failures.end());
  for (const auto& f : failures) fmt::print("NO GOLDEN   {}\n", f);
  fmt::print(
      "golden store {}: suite {}, {} cases: {} computed, {} already stored, {} without a golden, {:.1f} s ({} "
      "workers)\n",
      o.store, suite.name, cases.size(), todo.size() - failures.size(), reused, failures.size(), seconds_since(t0),
      o.workers);
  fmt::print("reference {}, golden method version {}\n", reference, kGoldenMethodVersion);
  return 0;
}

// The largest difference between two goldens, or "" when they agree to within 1e-12 relative.
std::string difference(const std::vector<NamedTensor>& stored, const std::vector<NamedTensor>& now) {
  if (stored.size() != now.size()) return fmt::format("{} outputs stored, {} now", stored.size(), now.size());
  for (std::size_t i = 0; i < stored.size(); ++i) {
    const at::Tensor& a = stored[i].value;
    const at::Tensor& b = now[i].value;
    if (stored[i].name != now[i].name) return "output " + stored[i].name + " is now " + now[i].name;
    if (a.sizes() != b.sizes() || a.scalar_type() != b.scalar_type()) {
      return fmt::format("{}: shape or dtype changed", stored[i].name);
    }
    if (a.numel() == 0) continue;
    at::Tensor ad = a.to(at::kDouble), bd = b.to(at::kDouble);
    at::Tensor same_nan = at::isnan(ad) == at::isnan(bd);
    at::Tensor diff = (ad - bd).abs().nan_to_num(0.0, 0.0, 0.0);
    at::Tensor inf_diff = at::isinf(ad) != at::isinf(bd);
    const double max_diff = diff.max().item<double>();
    const double scale = std::max(1.0, ad.abs().nan_to_num(0.0, 0.0, 0.0).max().item<double>());
    if (!same_nan.all().item<bool>() || inf_diff.any().item<bool>() || max_diff > 1e-12 * scale) {
      return fmt::format("{}: max abs difference {:.3g} (NaN/Inf pattern {})", stored[i].name, max_diff,
                         same_nan.all().item<bool>() && !inf_diff.any().item<bool>() ? "same" : "changed");
    }
  }
  return "";
}

int verify(const GoldenOptions& o) {
  auto store = GoldenStore::open(o.store, GoldenStore::Mode::ReadOnly);
  const std::string reference = reference_identity();
  const auto entries = store->entries();
  const bool show = !o.quiet && isatty(STDERR_FILENO);
  std::size_t corrupt = 0, drifted = 0, n = 0;
  for (const auto& e : entries) {
    if (auto problem = store->check(e)) {
      fmt::print("CORRUPT     {}  object {}: {}\n", e.key, e.object, *problem);
      ++corrupt;
    }
    ++n;
    progress(show && n % 256 == 0, n, entries.size(), "checking objects");
  }
  // Recompute a deterministic sample with this host's reference.
  std::vector<const GoldenEntry*> sample;
  for (const auto& e : entries) sample.push_back(&e);
  SplitMix64 rng(o.seed);
  for (std::size_t i = sample.size(); i > 1; --i)
    std::swap(sample[i - 1], sample[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(i)))]);
  if (o.sample >= 0 && sample.size() > static_cast<std::size_t>(o.sample))
    sample.resize(static_cast<std::size_t>(o.sample));
  std::sort(sample.begin(), sample.end(), [](const GoldenEntry* a, const GoldenEntry* b) { return a->key < b->key; });
  n = 0;
  for (const GoldenEntry* e : sample) {
    ++n;
    progress(show && n % 16 == 0, n, sample.size(), "recomputing a sample");
    if (store->check(*e)) continue;  // already reported
    std::string why;
    try {
      why = difference(store->load(*e), compute_for(CaseKey::parse(e->key)));
    } catch (const std::exception& ex) {
      why = std::string("recomputing failed: ") + ex.what();
    }
    const bool method_changed = e->method_version != kGoldenMethodVersion;
    if (why.empty() && !method_changed) continue;
    ++drifted;
    fmt::print("DRIFT       {}\n            stored by {} (method {}), now {} (method {}): {}\n", e->key, e->reference,
               e->method_version, reference, kGoldenMethodVersion, why.empty() ? "same values, other method" : why);
  }
  if (show) fmt::print(stderr, "\r\033[K");
  fmt::print("golden store {}: {} entries, {} corrupt; {} recomputed with {} (method {}), {} drifted\n", o.store,
             entries.size(), corrupt, sample.size(), reference, kGoldenMethodVersion, drifted);
  return (corrupt || drifted) ? 1 : 0;
}

int freeze(const GoldenOptions& o) {
  if (o.release.empty()) throw UsageError("golden freeze needs --release NAME");
  if (o.suite.empty()) throw UsageError("golden freeze needs --suite NAME (the cases the release was qualified on)");
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
    throw UsageError(fmt::format("{}: no golden of suite {} is stored for {} (run gauntlet golden build first)",
                                 o.store, suite.name, reference));
  }
  std::size_t n = store->freeze(o.release, keys, kGoldenMethodVersion, reference);
  fmt::print("golden store {}: release {} frozen with {} entries ({}/manifests/{}.json)\n", o.store, o.release, n,
             o.store, o.release);
  if (!missing.empty()) {
    fmt::print("{} cases have no golden and were not frozen (first: {})\n", missing.size(), missing.front());
  }
  return 0;
}

int gc(const GoldenOptions& o) {
  const std::string dir = suites_dir_or_default(o.suites_dir);
  std::vector<std::string> live;
  for (const auto& name : list_suites(dir)) {
    for (const auto& c : load_suite(name, dir).cases) live.push_back(c.text);
  }
  std::sort(live.begin(), live.end());
  live.erase(std::unique(live.begin(), live.end()), live.end());
  auto store = GoldenStore::open(o.store, GoldenStore::Mode::ReadWrite);
  auto [entries, objects] = store->gc(live, kGoldenMethodVersion);
  fmt::print("golden store {}: dropped {} entries and {} objects (kept what a manifest or a suite in {} references)\n",
             o.store, entries, objects, dir);
  return 0;
}

}  // namespace

int golden(const GoldenOptions& o) {
  if (o.action == "build") return build(o);
  if (o.action == "verify") return verify(o);
  if (o.action == "freeze") return freeze(o);
  if (o.action == "gc") return gc(o);
  throw UsageError("unknown golden action '" + o.action + "' (build, verify, freeze, gc)");
}

}  // namespace gauntlet::cli
