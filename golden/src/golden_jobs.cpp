#include "gauntlet/golden/golden_jobs.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <ctime>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "gauntlet/base/host.h"
#include "gauntlet/base/splitmix.h"
#include "gauntlet/golden/golden.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

std::vector<NamedTensor> compute_for(const CaseKey& key) {
  const OpDef* def = find_op_def(key.target);
  if (!def) throw std::invalid_argument("unknown op " + key.target);
  return compute_golden(*def, key, make_inputs(key, def->spec));
}

}  // namespace

GoldenBuild build_goldens(GoldenStore& store, const std::vector<CaseKey>& keys, int workers,
                          const GoldenProgress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  const std::string reference = reference_identity();
  GoldenBuild b;
  b.cases = keys.size();
  // Incremental: an intact entry for this method and reference is not recomputed.
  std::vector<std::pair<const CaseKey*, std::string>> todo;
  for (const CaseKey& key : keys) {
    // A collective's golden is computed by each rank from every rank's inputs (Note [Collective
    // ranks]): nothing to store.
    if (key.kind != "op") continue;
    std::string text = key.str();
    if (!store.contains_valid(text, kGoldenMethodVersion, reference)) todo.emplace_back(&key, std::move(text));
  }
  b.reused = keys.size() - todo.size();

  // Workers compute goldens in parallel; writes to the store are serialised.
  std::atomic<std::size_t> next{0}, done{0};
  std::mutex write_mutex;
  auto work = [&] {
    at::set_num_threads(case_intra_op_threads());  // as a run's cases: Note [Intra-op threads]
    for (std::size_t i = next++; i < todo.size(); i = next++) {
      const CaseKey& key = *todo[i].first;
      const std::string& text = todo[i].second;
      try {
        // CPU time of this thread: the other workers' load does not inflate it.
        // Only the golden's computation is timed: a run makes the inputs either way.
        const OpDef* def = find_op_def(key.target);
        if (!def) throw std::invalid_argument("unknown op " + key.target);
        const auto inputs = make_inputs(key, def->spec);
        timespec c0{}, c1{};
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c0);
        auto outputs = compute_golden(*def, key, inputs);
        clock_gettime(CLOCK_THREAD_CPUTIME_ID, &c1);
        const double compute_us = double(c1.tv_sec - c0.tv_sec) * 1e6 + double(c1.tv_nsec - c0.tv_nsec) / 1e3;
        std::lock_guard<std::mutex> lock(write_mutex);
        store.put(text, kGoldenMethodVersion, reference, outputs, compute_us);
      } catch (const std::exception& e) {
        const std::string msg = e.what();
        std::lock_guard<std::mutex> lock(write_mutex);
        b.failures.push_back(text + ": " + msg.substr(0, msg.find('\n')));
      }
      const std::size_t n = ++done;
      if (progress && (n % 64 == 0 || n == todo.size())) {
        std::lock_guard<std::mutex> lock(write_mutex);
        progress(n + b.reused, keys.size(), "computing goldens");
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work);
  for (auto& t : threads) t.join();
  std::sort(b.failures.begin(), b.failures.end());
  b.computed = todo.size() - b.failures.size();
  b.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return b;
}

GoldenVerify verify_goldens(const GoldenStore& store, long long sample_size, std::uint64_t seed,
                            const GoldenProgress& progress) {
  GoldenVerify v;
  const std::string reference = reference_identity();
  const auto entries = store.entries();
  v.entries = entries.size();
  std::size_t n = 0;
  for (const auto& e : entries) {
    if (auto problem = store.check(e)) v.corrupt.push_back(fmt::format("{}  object {}: {}", e.key, e.object, *problem));
    ++n;
    if (progress && n % 256 == 0) progress(n, entries.size(), "checking objects");
  }
  // Recompute a deterministic sample with this host's reference.
  std::vector<const GoldenEntry*> sample;
  for (const auto& e : entries) sample.push_back(&e);
  SplitMix64 rng(seed);
  for (std::size_t i = sample.size(); i > 1; --i) {
    std::swap(sample[i - 1], sample[static_cast<std::size_t>(rng.below(static_cast<std::int64_t>(i)))]);
  }
  if (sample_size >= 0 && sample.size() > static_cast<std::size_t>(sample_size)) {
    sample.resize(static_cast<std::size_t>(sample_size));
  }
  std::sort(sample.begin(), sample.end(), [](const GoldenEntry* a, const GoldenEntry* b) { return a->key < b->key; });
  v.sampled = sample.size();
  n = 0;
  for (const GoldenEntry* e : sample) {
    ++n;
    if (progress && n % 16 == 0) progress(n, sample.size(), "recomputing a sample");
    if (store.check(*e)) continue;  // already reported
    std::string why;
    try {
      why = golden_difference(store.load(*e), compute_for(CaseKey::parse(e->key)));
    } catch (const std::exception& ex) {
      why = std::string("recomputing failed: ") + ex.what();
    }
    const bool method_changed = e->method_version != kGoldenMethodVersion;
    if (why.empty() && !method_changed) continue;
    v.drifted.push_back(fmt::format("{}\n            stored by {} (method {}), now {} (method {}): {}", e->key,
                                    e->reference, e->method_version, reference, kGoldenMethodVersion,
                                    why.empty() ? "same values, other method" : why));
  }
  return v;
}

std::string golden_difference(const std::vector<NamedTensor>& stored, const std::vector<NamedTensor>& now) {
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

}  // namespace gauntlet
