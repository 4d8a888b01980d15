// Shard plans: cases assigned to N shards by expected cost, written once and read by every host,
// so that all hosts of a Slurm array run the same split (docs/scaling.md). No torch here.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "gauntlet/base/command_line.h"
#include "gauntlet/core/catalog/catalog.h"

namespace gauntlet {

class Store;

// Expected cost of a case in microseconds: the median duration of the case in past runs of the
// backend when a history database has it, else an estimate from its size.
double estimated_case_us(const CaseKey& key);
// Median duration (first call + timed repetitions + golden) per case id over the runs of
// `backend` in the history database.
std::map<std::uint64_t, double> history_costs(const Store& history, const std::string& backend);
// What the progress display weighs a case of run `run` by (Note [ETA from history]): what it took
// in the latest finished run of the same backend and suite in `store`, else estimated_case_us
// scaled to that run's measured costs; estimated_case_us alone without such a run.
std::function<double(const CaseKey&)> expected_case_cost(const Store& store, const std::string& backend,
                                                         const std::string& suite, std::int64_t run);

struct Plan {
  static constexpr int kFormatVersion = 1;
  std::string suite, suite_file, filter, cost_source;
  int shards = 1;
  std::vector<std::vector<std::uint64_t>> assignment;  // per shard, case ids
  std::vector<double> shard_cost_us;

  // Largest expected cost first, each onto the least-loaded shard (ties: lowest index).
  static Plan make(const Suite& suite, const std::vector<const Case*>& cases, int shards,
                   const std::map<std::uint64_t, double>& history, const std::string& cost_source);
  void save(const std::string& path) const;
  static Plan load(const std::string& path);  // throws std::invalid_argument naming the file
  // The suite's cases of one shard, in suite order, after a filter; throws std::invalid_argument
  // when the plan names a case the suite no longer has.
  std::vector<const Case*> cases_of(const Suite& suite, int shard, const std::string& filter) const;
};

// `gauntlet plan`'s options (Note [Options beside their fields]).
struct PlanOptions {
  std::string suite, filter, suites_dir, history, backend = "cpu", out;
  int shards = 1;
};
void describe_options(OptionSink& s, PlanOptions& o);
// Makes the plan `o` asks for and saves it to o.out; what `gauntlet plan` prints of it.
std::string write_plan(const PlanOptions& o);

}  // namespace gauntlet
