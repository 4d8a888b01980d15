// Note [Bench]: each case first runs as `run` runs it (accuracy, first call, peak memory,
// fallbacks), in this process; the cases that ran are then registered with Google Benchmark at
// run time, one benchmark per case key, and timed in repetitions of at least --min-time each.
// Every repetition's time per iteration becomes one sample (samples_us), its median, p10 and p90
// the case's steady state, so that `gauntlet compare --metric host` judges them. Google
// Benchmark's own JSON is kept (--out). Timing in one process with no isolation: bench is for
// cases that pass `run`. Results are stored when the timing ends: a crash loses the bench (its
// run stays recorded, unfinished and empty), never anything stored before it.
#include "gauntlet/core/session/bench_run.h"

#include <benchmark/benchmark.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>

#include "gauntlet/base/error.h"
#include "gauntlet/base/host.h"
#include "gauntlet/base/output_dir.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/backend/environment.h"
#include "gauntlet/core/cases/dispatch_probe.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/core/session/run_setup.h"
#include "gauntlet/run/recorded_env.h"
#include "gauntlet/run/run_config.h"
#include "gauntlet/run/selection.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

namespace {

// Collects every repetition Google Benchmark reports, and shows progress unless quiet.
class Collector : public benchmark::ConsoleReporter {
 public:
  // Colour only on a terminal: a reporter made by hand does not follow --benchmark_color.
  explicit Collector(bool quiet) : ConsoleReporter(::isatty(STDOUT_FILENO) ? OO_Defaults : OO_Tabular), quiet_(quiet) {}
  bool ReportContext(const Context& context) override { return quiet_ || ConsoleReporter::ReportContext(context); }
  void ReportRuns(const std::vector<Run>& runs) override {
    for (const Run& r : runs) {
      if (r.run_type != Run::RT_Iteration || r.error_occurred || r.iterations == 0) continue;
      // Seconds per iteration of this repetition, from the accumulated real time.
      samples_[r.run_name.function_name].push_back(r.real_accumulated_time / static_cast<double>(r.iterations) * 1e6);
    }
    if (!quiet_) ConsoleReporter::ReportRuns(runs);
  }
  std::map<std::string, std::vector<double>>& samples() { return samples_; }

 private:
  bool quiet_;
  std::map<std::string, std::vector<double>> samples_;
};

bool ran(Status s) { return s == Status::Pass || s == Status::Fail || s == Status::XFail || s == Status::XPass; }

}  // namespace

void describe_options(OptionSink& s, BenchOptions& o) {
  s.option("--suite", o.suite, "suite name or .yaml path").required();
  s.option("--db", o.db, "SQLite database to write (created if missing)").required();
  describe_backend(s, o.backend).show_default();
  s.option("--filter", o.filter, "gtest-style globs on case keys");
  s.option("--shard", o.shard, "i/N: only the i-th of N shards");
  s.option("--release", o.release, "release name recorded with the run");
  s.option("--build-id", o.build_id, "build id recorded with the run");
  describe_price(s, o.price);
  s.option("--suites-dir", o.suites_dir, "where suites live");
  s.option("--out", o.out, "write Google Benchmark's JSON here");
  s.option("--repetitions", o.repetitions, "repetitions per case (one sample each)").show_default();
  s.option("--min-time", o.min_time_s, "seconds each repetition runs at least").show_default();
  s.flag("--quiet", o.quiet, "no per-benchmark lines");
  describe_skip_db_check(s, o.skip_db_check);
}

std::string run_bench(const BenchOptions& o) {
  if (o.repetitions < 2) throw Error("--repetitions must be >= 2 (each repetition is one sample)");
  if (!(o.min_time_s > 0)) throw Error("--min-time must be > 0 (seconds per repetition)");
  const std::optional<double> price = price_per_device_hour(o.price);
  fallback_source_from_env();
  check_database_path(o.db);
  if (!o.out.empty()) check_output_file("--out", o.out);  // before the first case (Note [Run reporters])
  const std::string dir = suites_dir_or_default(o.suites_dir);
  const Suite suite = load_suite(o.suite, dir);
  const std::vector<const Case*> cases = select_cases(suite, o.filter, o.shard);
  if (cases.empty()) return "";  // Note [Empty shards] (selection.cpp): said, nothing written
  const Expectations expectations = Expectations::load(dir + "/expectations.yaml");
  const ToleranceTable tolerances = ToleranceTable::load(dir + "/tolerances.yaml");
  std::unique_ptr<Backend> backend = make_backend(o.backend);
  // A library that is not a backend is refused as `run` refuses it, before the run is recorded.
  if (const CapabilityCheck c = check_capabilities(*backend, cases, false); !c.cannot_run.empty())
    throw Error(c.cannot_run);
  auto store = Store::open(o.db, Store::write_mode(o.skip_db_check));

  RunInfo info = new_run_info(*backend, suite, o.release, o.build_id, o.filter);
  info.price_per_device_hour = price;
  RunConfig config;  // Note [Run record]
  config.suites_dir = dir;
  config.suite_file = o.suite;
  config.cases = static_cast<std::int64_t>(cases.size());
  config.other["bench"] = {
      {"repetitions", o.repetitions}, {"min_time_s", o.min_time_s}, {"google_benchmark_json", o.out}};
  config.backend_profile = backend->profile();
  config.set_backend_config(backend->config_json());
  config.environment_patterns = record_env_patterns({});
  config.environment = recorded_environment(config.environment_patterns);
  info.config_json = config.dump();
  const std::int64_t run_id = store->begin_run(info);

  // Accuracy and the first call, as `run` does (a few repetitions only: Google Benchmark times).
  TimingOptions quick;
  quick.reps = 2;
  const RunnerConfig cfg = runner_config(tolerances, expectations, quick, nullptr, false, false, "");
  std::vector<Outcome> outcomes;
  std::vector<std::unique_ptr<PreparedCase>> prepared(cases.size());
  for (std::size_t i = 0; i < cases.size(); ++i) {
    outcomes.push_back(run_case(cases[i]->key, *backend, cfg));
    if (!ran(outcomes.back().status)) continue;
    try {
      prepared[i] = prepare_case(cases[i]->key, *backend);
    } catch (const std::exception&) {
      continue;  // it ran once; whatever stops it now is in its outcome already
    }
    PreparedCase* p = prepared[i].get();
    benchmark::RegisterBenchmark(cases[i]->text.c_str(), [p](benchmark::State& state) {
      for (auto _ : state) p->call();
    })->UseRealTime();
  }

  // Google Benchmark reads its settings from argv.
  std::vector<std::string> args = {"gauntlet-bench", fmt::format("--benchmark_min_time={}", o.min_time_s),
                                   fmt::format("--benchmark_repetitions={}", o.repetitions)};
  if (!o.out.empty()) args.insert(args.end(), {"--benchmark_out=" + o.out, "--benchmark_out_format=json"});
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  int argc = static_cast<int>(argv.size());
  benchmark::Initialize(&argc, argv.data());
  // The JSON's "library_build_type" is Google Benchmark's own build (Debian's package says
  // "debug"), not Gauntlet's: the context says both.
#ifdef NDEBUG
  const char* ours = "release (NDEBUG)";
#else
  const char* ours = "debug (assertions on)";
#endif
  benchmark::AddCustomContext("gauntlet_build_type", ours);
  benchmark::AddCustomContext(
      "library_build_type_note",
      "library_build_type is the Google Benchmark library's build, not Gauntlet's (gauntlet_build_type)");
  Collector collector(o.quiet);
  benchmark::RunSpecifiedBenchmarks(&collector);
  benchmark::Shutdown();

  std::int64_t timed = 0;
  for (std::size_t i = 0; i < cases.size(); ++i) {
    Outcome& out = outcomes[i];
    auto it = collector.samples().find(cases[i]->text);
    if (it != collector.samples().end() && !it->second.empty()) {
      record_repetitions(out.timing, it->second);
      ++timed;
    }
    store->add_result(run_id, cases[i]->key, cases[i]->text, std::move(out));
  }
  store->finish_run(run_id, utc_now());
  return fmt::format("bench: run {} in {}: {} cases, {} timed by Google Benchmark ({} repetitions of >= {} s each){}\n",
                     run_id, o.db, cases.size(), timed, o.repetitions, o.min_time_s,
                     o.out.empty() ? "" : "; its JSON: " + o.out);
}

}  // namespace gauntlet
