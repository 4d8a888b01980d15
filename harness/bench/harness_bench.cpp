// Harness benchmarks. BM_HarnessCase/<op> runs a case through run_case (inputs, golden, device
// run, comparison) with no timing repetitions; BM_BareLoop/<op> does the same work written
// directly with ATen (random inputs, fp64 golden, the op in the case dtype, allclose). Their
// ratio is the harness's overhead per case (ci/bench.sh prints it).
#include <benchmark/benchmark.h>

#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "gauntlet/catalog.h"
#include "gauntlet/runner.h"
#include "gauntlet/store.h"

namespace gauntlet {
namespace {

const std::string kSuitesDir = std::string(GAUNTLET_SOURCE_DIR) + "/suites/yaml";

// The largest suite there is: full, else nightly, else smoke.
std::string biggest_suite() {
  auto names = list_suites(kSuitesDir);
  for (const char* n : {"full", "nightly", "smoke"}) {
    for (const auto& s : names) {
      if (s == n) return s;
    }
  }
  return "smoke";
}

void BM_ExpandFullCatalog(benchmark::State& state) {
  const std::string name = biggest_suite();
  std::size_t cases = 0;
  for (auto _ : state) {
    Suite s = load_suite(name, kSuitesDir);
    cases = s.cases.size();
    benchmark::DoNotOptimize(s.cases.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * cases));
  state.SetLabel(name + ": " + std::to_string(cases) + " cases");
}
BENCHMARK(BM_ExpandFullCatalog)->Unit(benchmark::kMillisecond);

void BM_ParseKeys(benchmark::State& state) {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& c : load_suite("smoke", kSuitesDir).cases) out.push_back(c.text);
    return out;
  }();
  for (auto _ : state) {
    for (const auto& k : keys) {
      CaseKey key = CaseKey::parse(k);
      benchmark::DoNotOptimize(key.shapes.data());
    }
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * keys.size()));
}
BENCHMARK(BM_ParseKeys);

// ---- Per-case overhead ----

struct Work {
  const char* name;
  const char* key;
  std::vector<std::vector<std::int64_t>> shapes;
  std::function<at::Tensor(const std::vector<at::Tensor>&)> op;
};

const std::vector<Work>& works() {
  static const std::vector<Work> w = {
      {"add", "op/add/f32/8x8,8x8/contig/eager", {{8, 8}, {8, 8}},
       [](const std::vector<at::Tensor>& t) { return at::add(t[0], t[1]); }},
      {"exp", "op/exp/f32/64x64/contig/eager", {{64, 64}},
       [](const std::vector<at::Tensor>& t) { return at::exp(t[0]); }},
      {"mm", "op/mm/f32/64x64,64x64/contig/eager", {{64, 64}, {64, 64}},
       [](const std::vector<at::Tensor>& t) { return at::mm(t[0], t[1]); }},
  };
  return w;
}

void BM_HarnessCase(benchmark::State& state, const Work& w) {
  auto backend = make_backend("cpu");
  const CaseKey key = CaseKey::parse(w.key);
  RunnerConfig cfg;
  cfg.max_reps = 0;
  for (auto _ : state) {
    Outcome o = run_case(key, *backend, cfg);
    if (o.status != Status::Pass) {
      state.SkipWithError(("case did not pass: " + o.error).c_str());
      break;
    }
    benchmark::DoNotOptimize(o.metrics.max_abs_err);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_BareLoop(benchmark::State& state, const Work& w) {
  at::Generator gen = at::detail::createCPUGenerator(42);
  for (auto _ : state) {
    gen.set_current_seed(42);  // deterministic inputs, as the harness's
    std::vector<at::Tensor> in, up;
    for (const auto& s : w.shapes) {
      at::Tensor t = at::rand(s, gen, at::kFloat) * 4 - 2;
      in.push_back(t);
      up.push_back(t.to(at::kDouble));
    }
    at::Tensor golden = w.op(up);
    at::Tensor actual = w.op(in);
    bool ok = at::allclose(actual.to(at::kDouble), golden, 1.3e-6, 1e-5);
    if (!ok) {
      state.SkipWithError("bare loop result not close");
      break;
    }
    benchmark::DoNotOptimize(ok);
  }
  state.SetItemsProcessed(state.iterations());
}

const bool kRegistered = [] {
  for (const Work& w : works()) {
    benchmark::RegisterBenchmark((std::string("BM_HarnessCase/") + w.name).c_str(), BM_HarnessCase, w)
        ->Unit(benchmark::kMicrosecond);
    benchmark::RegisterBenchmark((std::string("BM_BareLoop/") + w.name).c_str(), BM_BareLoop, w)
        ->Unit(benchmark::kMicrosecond);
  }
  return true;
}();

// Ingestion into SQLite: what the orchestrator does with every result (batched transactions,
// INSERT OR IGNORE of the case, INSERT OR REPLACE of the result). Items are rows.
void BM_StoreIngest(benchmark::State& state) {
  const Suite suite = load_suite(biggest_suite(), kSuitesDir);
  const std::size_t n = static_cast<std::size_t>(state.range(0));
  Outcome o;
  o.status = Status::Pass;
  o.metrics.max_abs_err = 1e-7;
  o.metrics.numel = 527;
  o.timing.first_us = 12;
  o.timing.median_us = 10;
  o.fallback_ops = {"aten::cumsum.out"};
  const std::string path = "/tmp/gauntlet_bench_ingest.sqlite";
  std::vector<const CaseKey*> keys;
  for (std::size_t i = 0; i < n && i < suite.cases.size(); ++i) keys.push_back(&suite.cases[i].key);
  std::unique_ptr<Store> store;
  for (auto _ : state) {
    state.PauseTiming();
    store.reset();  // closing checkpoints the WAL into the file: once per run, not per row
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
    store = Store::open(path, Store::OpenMode::ReadWrite);
    RunInfo info;
    info.suite = suite.name;
    const std::int64_t run = store->begin_run(info);
    if (state.range(1) > 0) store->set_batch_size(static_cast<int>(state.range(1)));
    if (state.range(2) > 0) store->add_cases(keys);  // as `run` does before its cases start
    state.ResumeTiming();
    for (std::size_t i = 0; i < n; ++i) {  // as `run` does: with the key text the catalog keeps
      const Case& c = suite.cases[i % suite.cases.size()];
      store->add_result(run, c.key, c.text, o);
    }
    store->flush();
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n));
  store.reset();
  for (const char* suffix : {"", "-wal", "-shm"}) std::remove((path + suffix).c_str());
}
// Args: results, batch size (0: the default), cases registered first (as `run` does).
BENCHMARK(BM_StoreIngest)
    ->Args({100000, 0, 0})
    ->Args({100000, 0, 1})
    ->Args({100000, 100000, 1})
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gauntlet

BENCHMARK_MAIN();
