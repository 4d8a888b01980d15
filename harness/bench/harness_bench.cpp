// Harness benchmarks. BM_HarnessCase/<op> runs a case through run_case (inputs, golden, device
// run, comparison) with no timing repetitions; BM_BareLoop/<op> does the same work written
// directly with ATen (random inputs, fp64 golden, the op in the case dtype, allclose). Their
// ratio is the harness's overhead per case (ci/bench.sh prints it). BM_CompareRuns and
// BM_CompareReports time `gauntlet compare` on two runs of a million results (ci/compare_bench.sh).
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/glob.h"
#include "gauntlet/core/cases/compare.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/worker_protocol.h"
#include "gauntlet/store/store.h"

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

// Note [Filters at scale]: a filter of N exact keys and N/10 prefix globs (N = the argument) over
// every key of the biggest suite: the time per key should not grow with N (compare the rows).
const std::vector<std::string>& biggest_suite_keys() {
  static const std::vector<std::string> keys = [] {
    std::vector<std::string> out;
    for (const auto& c : load_suite(biggest_suite(), kSuitesDir).cases) out.push_back(c.text);
    return out;
  }();
  return keys;
}

// N exact keys of the suite and a prefix glob for every tenth.
std::vector<std::string> many_patterns(std::size_t n) {
  const auto& keys = biggest_suite_keys();
  std::vector<std::string> out;
  for (std::size_t i = 0; i < n; ++i) {
    const std::string& k = keys[(i * 7919) % keys.size()];
    if (k.find(':') != std::string::npos) continue;
    out.push_back(k);
    if (i % 10 == 0) out.push_back(k.substr(0, k.rfind('/')) + "/*");
  }
  return out;
}

template <class Match>
void filter_bench(benchmark::State& state, Match match) {
  const auto& keys = biggest_suite_keys();
  std::size_t matched = 0;
  for (auto _ : state) {
    matched = 0;
    for (const auto& k : keys) matched += match(k);
    benchmark::DoNotOptimize(matched);
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * keys.size()));
  state.SetLabel(std::to_string(keys.size()) + " keys, " + std::to_string(matched) + " matched");
}

void BM_FilterManyPatterns(benchmark::State& state) {
  std::string spec;
  for (const auto& p : many_patterns(static_cast<std::size_t>(state.range(0)))) spec += (spec.empty() ? "" : ":") + p;
  const Filter filter(spec);
  filter_bench(state, [&](const std::string& k) { return filter.matches(k); });
}
BENCHMARK(BM_FilterManyPatterns)->Arg(10)->Arg(100)->Arg(2350)->Arg(20000)->Unit(benchmark::kMillisecond);

// The baseline: every pattern tried in turn (the filter before Note [Filters at scale]).
void BM_FilterEachPatternInTurn(benchmark::State& state) {
  const std::vector<std::string> patterns = many_patterns(static_cast<std::size_t>(state.range(0)));
  filter_bench(state, [&](const std::string& k) {
    for (const auto& p : patterns) {
      if (glob_match(p, k)) return true;
    }
    return false;
  });
}
BENCHMARK(BM_FilterEachPatternInTurn)->Arg(10)->Arg(100)->Arg(2350)->Unit(benchmark::kMillisecond);

// ---- Per-case overhead ----

struct Work {
  const char* name;
  const char* key;
  std::vector<std::vector<std::int64_t>> shapes;
  std::function<at::Tensor(const std::vector<at::Tensor>&)> op;
};

const std::vector<Work>& works() {
  static const std::vector<Work> w = {
      {"add",
       "op/add/f32/8x8,8x8/contig/eager",
       {{8, 8}, {8, 8}},
       [](const std::vector<at::Tensor>& t) { return at::add(t[0], t[1]); }},
      {"exp",
       "op/exp/f32/64x64/contig/eager",
       {{64, 64}},
       [](const std::vector<at::Tensor>& t) { return at::exp(t[0]); }},
      {"mm",
       "op/mm/f32/64x64,64x64/contig/eager",
       {{64, 64}, {64, 64}},
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

// The worker protocol per result (Note [One field table]): the worker writes its outcome with
// to_json_text, the orchestrator reads the line with parse_worker_message. A typical op case:
// PASS, 10 timing samples, a tolerance profile, no error. Items are results.
Outcome typical_outcome() {
  Outcome o;
  o.key = "op/add/f32/64x64,64x64/contig/eager";
  o.rtol = 1.3e-6;
  o.atol = 1e-5;
  o.tolerance_profile = "default";
  o.metrics.max_abs_err = 2.384185791015625e-07;
  o.metrics.max_rel_err = 1.1920928955078125e-07;
  o.metrics.numel = 4096;
  o.metrics.max_ulp = 1;
  o.metrics.worst = "out0[1234]";
  std::vector<double> samples;
  for (int i = 0; i < 10; ++i) samples.push_back(12.5 + 0.37 * i);
  record_repetitions(o.timing, samples);
  o.timing.first_us = 40.25;
  o.timing.golden_us = 18.5;
  o.peak_mem_bytes = 49152;
  o.sim_time_us = 3.5;
  o.work_items = 4096;
  return o;
}
void BM_OutcomeJsonWrite(benchmark::State& state) {
  const Outcome o = typical_outcome();
  for (auto _ : state) benchmark::DoNotOptimize(to_json_text(o));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_OutcomeJsonWrite);
void BM_OutcomeJsonRead(benchmark::State& state) {
  const std::string line = R"({"type":"result","key":"k","outcome":)" + to_json_text(typical_outcome()) + "}";
  for (auto _ : state) benchmark::DoNotOptimize(parse_worker_message(line));
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()));
}
BENCHMARK(BM_OutcomeJsonRead);

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

// ---- Comparing two runs (gauntlet compare) ----

// Note [Compare benchmark database]: two runs of n results each on backend "sim", suite "bench":
// baseline release 2.4.0 (run 1) and candidate 2.5.0 (run 2), written through the Store one run
// after the other, as `run` writes them. Keys op/bench<i % 500>/f32/<i>/contig/eager (valid keys;
// the store never looks ops up). Cases 0 .. n-1 in the baseline, m .. n+m-1 in the candidate
// (m = n / 10,000: m missing, m new). Statuses: 1% FAIL or ERROR in both runs, about 300 cases
// changing status (nearly all PASS -> FAIL/ERROR). Timed cases have sim_time_us, median_us and 5
// samples; 0.5% of the candidate's cases are 10-30% slower, the others within 1% (sim and host;
// host samples spread 8%). Fallback ops on 0.1% of cases, about 100 new in the candidate; about 50
// errors grow 8x. Every timed case records its work (elements) and each run a price per
// device-hour, so that throughput and cost are computed too. Building it takes about half a minute for n = 1,000,000
// (500 MB), so it is kept in /tmp and rebuilt only when missing, of another schema, another row count or an older
// version of this generator (kCompareDbVersion, in the runs' config_json).
constexpr int kCompareDbVersion = 5;

std::string compare_db_path(std::int64_t n) {
  const std::string size = n % 1000000 == 0 ? std::to_string(n / 1000000) + "M"
                           : n % 1000 == 0  ? std::to_string(n / 1000) + "k"
                                            : std::to_string(n);
  return "/tmp/gauntlet_bench_compare_" + size + ".sqlite";
}

std::string compare_db_config(std::int64_t n) {
  return "{\"bench_compare_db\": " + std::to_string(kCompareDbVersion) + ", \"results\": " + std::to_string(n) + "}";
}

// A deterministic number in [0, 1) for case i and a salt (splitmix64).
double unit(std::int64_t i, std::uint64_t salt) {
  std::uint64_t z = static_cast<std::uint64_t>(i) * 0x9e3779b97f4a7c15ULL + salt * 0xbf58476d1ce4e5b9ULL + 1;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  z ^= z >> 31;
  return static_cast<double>(z >> 11) * 0x1.0p-53;
}

// Case i's result in run `cand` (false: the baseline) of a database of n results per run.
Outcome compare_outcome(std::int64_t i, bool cand, std::int64_t n) {
  Outcome o;
  const std::int64_t r = i % 200;
  o.status = r == 7 ? Status::Fail : r == 13 ? Status::Error : Status::Pass;
  if (cand && unit(i, 1) < 300.0 / static_cast<double>(n)) {  // a status change
    o.status = o.status != Status::Pass ? Status::Pass : unit(i, 2) < 0.5 ? Status::Fail : Status::Error;
  }
  o.rtol = 1.3e-6;
  o.atol = 1e-5;
  o.tolerance_profile = "default";
  o.metrics.numel = i;
  o.work_items = 1 + i % 4096;
  o.golden_source = "computed";
  o.device_slot = "sim:0";
  o.peak_mem_bytes = 4096 * (1 + i % 64);
  if (o.status == Status::Error) {
    o.error = "RuntimeError: sim: kernel launch failed (case " + std::to_string(i) + ")\n  at sim::launch";
    return o;  // never ran: no metrics, no timings
  }
  o.metrics.max_abs_err = 1e-7 * (1 + unit(i, 3));
  if (cand && unit(i, 4) < 50.0 / static_cast<double>(n)) o.metrics.max_abs_err *= 8;  // error growth
  if (o.status == Status::Fail) {
    o.metrics.max_abs_err = 0.5;
    o.metrics.mismatches = 1;
    o.metrics.worst = "out0[3]";
    o.error = "max_abs_err 0.5 > atol 1e-05 + rtol 1.3e-06 * |golden| at out0[3]";
  }
  o.metrics.max_rel_err = o.metrics.max_abs_err;
  if (i % 1000 == 3) o.fallback_ops.push_back("aten::cumsum.out");
  if (cand && unit(i, 5) < 100.0 / static_cast<double>(n)) o.fallback_ops.push_back("aten::sort.values");
  // Timings: the baseline's per-case time, the candidate's 0.5% slower by 10-30%, else within noise.
  const double base_us = 5 + 200 * unit(i, 6);
  const double slower = cand && unit(i, 7) < 0.005 ? 1.1 + 0.2 * unit(i, 8) : 1.0;
  o.sim_time_us = 0.8 * base_us * slower * (cand ? 1 + 0.02 * (unit(i, 9) - 0.5) : 1.0);
  const double host_us = base_us * slower * (1 + 0.02 * (unit(i, cand ? 10 : 11) - 0.5));
  for (std::uint64_t s = 0; s < 5; ++s) {
    o.timing.samples_us.push_back(host_us * (1 + 0.08 * (unit(i, (cand ? 20 : 30) + s) - 0.5)));
  }
  o.timing.first_us = 3 * host_us + 20;
  record_repetitions(o.timing, o.timing.samples_us);
  o.timing.golden_us = 2 * host_us;
  return o;
}

// Whether the file at `path` is a database this generator wrote for n results per run.
bool compare_db_ok(const std::string& path, std::int64_t n) {
  if (!std::filesystem::exists(path)) return false;
  try {
    auto store = Store::open(path, Store::OpenMode::ReadOnly);  // fails on another schema version
    const std::vector<RunInfo> runs = store->runs();
    if (runs.size() != 2) return false;
    for (const RunInfo& run : runs) {
      if (run.config_json != compare_db_config(n)) return false;
      std::int64_t rows = 0;
      for (const auto& [status, count] : store->status_counts(run.id)) rows += count;
      if (rows != n) return false;
    }
    return true;
  } catch (const StoreError&) {
    return false;
  }
}

// The path of the database of Note [Compare benchmark database] for n, built when needed (into
// a temporary file renamed at the end, so that an interrupted build leaves nothing to reuse).
std::string compare_db(std::int64_t n) {
  static std::map<std::int64_t, std::string> checked;  // once per process
  if (auto it = checked.find(n); it != checked.end()) return it->second;
  const std::string path = compare_db_path(n);
  if (!compare_db_ok(path, n)) {
    const std::string tmp = path + ".tmp";
    for (const char* suffix : {"", "-wal", "-shm"}) std::remove((tmp + suffix).c_str());
    {
      auto store = Store::open(tmp, Store::OpenMode::ReadWrite);
      store->set_batch_size(65536);
      RunInfo info;
      info.backend = "sim";
      info.backend_version = "sim 1.0";
      info.suite = "bench";
      info.config_json = compare_db_config(n);
      info.release = "2.4.0";
      info.started_at = "2025-01-01T00:00:00Z";
      info.price_per_device_hour = 4.5;
      const std::int64_t base = store->begin_run(info);
      info.release = "2.5.0";
      info.started_at = "2025-02-01T00:00:00Z";
      const std::int64_t cand = store->begin_run(info);
      const std::int64_t m = std::max<std::int64_t>(n / 10000, 1);
      // One run after the other, as two `gauntlet run`s write them (each run's rows together).
      constexpr std::int64_t kChunk = 65536;
      for (const std::int64_t run : {base, cand}) {
        const std::int64_t begin = run == base ? 0 : m, end = run == base ? n : n + m;
        for (std::int64_t first = begin; first < end; first += kChunk) {
          const std::int64_t last = std::min(first + kChunk, end);
          std::vector<CaseKey> keys(static_cast<std::size_t>(last - first));
          std::vector<const CaseKey*> pointers;
          for (std::int64_t i = first; i < last; ++i) {
            CaseKey& k = keys[static_cast<std::size_t>(i - first)];
            k.target = "bench" + std::to_string(i % 500);
            k.shapes = {{i}};
            pointers.push_back(&k);
          }
          store->add_cases(pointers);  // as `run` does; cases already there are skipped
          for (std::int64_t i = first; i < last; ++i) {
            const CaseKey& k = keys[static_cast<std::size_t>(i - first)];
            store->add_result(run, k, k.str(), compare_outcome(i, run == cand, n));
          }
        }
        store->finish_run(run, run == base ? "2025-01-01T01:00:00Z" : "2025-02-01T01:00:00Z");
      }
    }  // closing checkpoints the WAL into the file
    std::filesystem::rename(tmp, path);
    for (const char* suffix : {"-wal", "-shm"}) std::remove((path + suffix).c_str());
  }
  return checked[n] = path;
}

// Args: results per run, metric (0 auto, the default: sim time here; 2 host: a Mann-Whitney U
// test per case). Default options otherwise (history 8; the database has no earlier release).
// Items are results read, both runs.
void BM_CompareRuns(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  const std::string path = compare_db(n);
  CompareOptions opt;
  opt.metric = static_cast<Metric>(state.range(1));
  std::size_t findings = 0;
  for (auto _ : state) {
    RunComparison c = compare_runs(path, 0, std::nullopt, opt);
    findings = c.findings.size();
    benchmark::DoNotOptimize(c.findings.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations()) * 2 * n);
  state.SetLabel(std::string(metric_name(opt.metric)) + ": " + std::to_string(findings) + " findings");
}
BENCHMARK(BM_CompareRuns)
    ->Args({1000000, static_cast<int>(Metric::Auto)})
    ->Args({100000, static_cast<int>(Metric::Auto)})
    ->Args({1000000, static_cast<int>(Metric::Host)})
    ->Unit(benchmark::kMillisecond);

// The JSON and Markdown reports of BM_CompareRuns's comparison (metric auto), as `gauntlet
// compare --json --markdown` writes them with no gate. Items are findings.
void BM_CompareReports(benchmark::State& state) {
  const std::int64_t n = state.range(0);
  static std::map<std::int64_t, RunComparison> comparisons;
  if (!comparisons.count(n)) comparisons[n] = compare_runs(compare_db(n), 0, std::nullopt, CompareOptions{});
  const RunComparison& c = comparisons[n];
  ReportOptions ro;
  ro.db_path = compare_db_path(n);
  ro.gauntlet_version = "bench";
  std::size_t bytes = 0;
  for (auto _ : state) {
    const std::string json = json_report(c, ro);
    const std::string markdown = markdown_report(c, ro);
    bytes = json.size() + markdown.size();
    benchmark::DoNotOptimize(json.data());
    benchmark::DoNotOptimize(markdown.data());
  }
  state.SetItemsProcessed(static_cast<std::int64_t>(state.iterations() * c.findings.size()));
  state.SetLabel(std::to_string(c.findings.size()) + " findings, " + std::to_string(bytes / 1024) + " KiB");
}
BENCHMARK(BM_CompareReports)->Arg(1000000)->Arg(100000)->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace gauntlet

// One output of 2^20 elements compared with its golden (issue 24): the typed view a floating
// output goes through (Note [Typed comparison], [Vectorised comparison] in compare.cpp) against
// the widened view of the same values in the same run, the loop the runner used before (its three
// casts to make the widened arrays not counted). Outputs are the golden rounded to the dtype,
// every fifth moved by one or two ULPs: ordinary passing outputs.
static void BM_CompareOutput(benchmark::State& state) {
  const bool typed = state.range(0) == 1;
  const gauntlet::DType d = state.range(1) == 1 ? gauntlet::DType::BF16 : gauntlet::DType::F32;
  constexpr std::int64_t n = 1 << 20;
  std::vector<double> golden(n), cast(n), widened(n);
  std::vector<float> f32(n);
  std::vector<std::uint16_t> bf16(n);
  std::uint64_t x = 20261203;
  for (std::int64_t i = 0; i < n; ++i) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    golden[i] = (static_cast<double>(x >> 11) * 0x1.0p-53 * 2 - 1) * 4;
    cast[i] = gauntlet::round_to(golden[i], d);
    const float f = static_cast<float>(cast[i]);
    std::uint32_t bits;
    std::memcpy(&bits, &f, 4);
    const std::uint32_t moved =
        bits + static_cast<std::uint32_t>(i % 5 == 0 ? (d == gauntlet::DType::BF16 ? 1u << 16 : 2u) : 0u);
    float a;
    std::memcpy(&a, &moved, 4);
    f32[i] = a;
    bf16[i] = static_cast<std::uint16_t>(moved >> 16);
    widened[i] = a;
  }
  const gauntlet::Tolerance tol = gauntlet::default_tolerance(d);
  const void* stored =
      d == gauntlet::DType::BF16 ? static_cast<const void*>(bf16.data()) : static_cast<const void*>(f32.data());
  for (auto _ : state) {
    gauntlet::Comparison c;
    if (typed)
      c.add(gauntlet::TypedOutputView{"out0", stored, golden.data(), n, d}, tol);
    else
      c.add(gauntlet::OutputView{"out0", widened.data(), golden.data(), cast.data(), n, d}, tol);
    benchmark::DoNotOptimize(c.metrics().max_ulp);
  }
  state.SetItemsProcessed(state.iterations() * n);
  state.SetLabel(std::string(typed ? "typed" : "widened") + " " + std::string(gauntlet::dtype_name(d)));
}
BENCHMARK(BM_CompareOutput)->ArgsProduct({{0, 1}, {0, 1}})->ArgNames({"typed", "bf16"})->Unit(benchmark::kMillisecond);

BENCHMARK_MAIN();
