// `gauntlet compare` (docs/regressions.md): a run judged against a baseline release, its reports
// written, --confirm's A/B re-runs, waivers, the hollow check and the gate. No torch.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "gauntlet/base/command_line.h"
#include "gauntlet/run/run_summary.h"
#include "gauntlet/run/worker_protocol.h"

namespace gauntlet {

// Its options (Note [Options beside their fields]); gauntlet::CompareOptions (regress.h) are the
// comparison's own, made from these.
struct CompareRequest {
  std::string db;
  std::int64_t run = 0;           // 0: the latest run
  std::string baseline = "auto";  // a run id, or auto: the previous release
  std::string metric = "auto";    // auto | sim | host
  double min_effect = 0.05;
  double significance = 0.01;
  int min_samples = 5;
  double error_growth = 4.0;
  int history = 8;
  std::string waivers;       // waivers file (none: nothing is waived)
  std::string gate;          // accuracy,speed,coverage (empty: report only)
  bool honour_acks = false;  // acknowledged regressions (gauntlet triage) do not gate
  double min_ran = kDefaultMinRan, max_ran_drop = kDefaultMaxRanDrop;  // Note [Hollow runs]
  std::string markdown, junit, json;                                   // report files ("-": stdout)
  int top = 50;
  bool quiet = false;
  bool github = false;  // --github (also when GITHUB_ACTIONS=true): Note [GitHub Actions] (run/github_reporter.cpp)
  // --confirm (Note [Confirmation] in confirm.cpp)
  bool confirm = false;
  std::string baseline_backend, candidate_backend;  // default: the runs' backends
  std::vector<std::string> baseline_env, candidate_env;
  int confirm_rounds = 16;
  TimingOptions confirm_timing{10, 5, 200, 1};
};
void describe_options(OptionSink& s, CompareRequest& o);

// Compares, confirms (printing its progress unless quiet), writes the report files and the GitHub
// output; returns what the terminal shows after them (the summary unless quiet, then the gate's
// verdict) and the exit code (1: the gate failed). Throws gauntlet::Error for bad input, before
// any work.
struct Judged {
  std::string text;
  int exit_code = 0;
};
Judged judge_run(const CompareRequest& o);

}  // namespace gauntlet
