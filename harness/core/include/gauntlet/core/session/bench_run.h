// `gauntlet bench` (Note [Bench] in harness/core/session/bench_run.cpp): a suite's cases timed by
// Google Benchmark and stored as a run (docs/regressions.md).
#pragma once

#include <string>

#include "gauntlet/base/command_line.h"

namespace gauntlet {

// Its options (Note [Options beside their fields]).
struct BenchOptions {
  std::string suite, backend = "cpu", db, filter, shard, release, build_id, suites_dir;
  std::string price;  // --price-per-device-hour
  std::string out;    // Google Benchmark's JSON
  bool skip_db_check = false;
  int repetitions = 10;
  double min_time_s = 0.01;
  bool quiet = false;
};
void describe_options(OptionSink& s, BenchOptions& o);
// Runs the bench (Google Benchmark's lines on stdout unless quiet) and stores it as a run; the
// line that says so ("" for an empty shard). Throws gauntlet::Error for bad input.
std::string run_bench(const BenchOptions& o);

}  // namespace gauntlet
