// What `show` and the end of `run` say about a stored run: its counts, its fallbacks, its
// throughput, and its failures grouped (Note [Grouped failures] in harness/run/run_summary.cpp),
// each with the command that reproduces it; and Note [Hollow runs], the gate's floor. A value
// read from the store, then text: summarize_run reads, the *_text functions only format.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <vector>

#include "gauntlet/base/command_line.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

// "FAIL,CRASH" or "all" -> status names; "" -> every failing status. An unknown name is a
// gauntlet::Error listing the known ones.
std::vector<std::string> parse_status_list(const std::string& spec);

struct RunSummary {
  RunInfo info;
  std::map<Status, std::int64_t> counts;
  std::int64_t total = 0;    // results stored
  std::int64_t planned = 0;  // cases planned (more than total: unfinished)
  // Fallbacks are data, not failures: how many cases that ran (not SKIP) ran ops on the CPU, and
  // each op by how many cases, most first.
  std::int64_t ran = 0, fell_back = 0;
  std::int64_t fell_back_failed = 0;  // of fell_back, the cases a gate fails (fallback_ops are kept on failures)
  std::vector<std::pair<std::string, int>> fallback_ops;
  // Note [Throughput and cost] (gauntlet/analysis/regress.h): the geometric mean per unit (samples for
  // models, elements for the rest) over the cases that ran to the end.
  struct Throughput {
    std::string unit;
    std::int64_t cases = 0;
    double geomean = 0;
  };
  std::vector<Throughput> throughput;
  // Collectives' bus bandwidth (nccl-tests' busbw, GB/s) per collective: over its cases that
  // recorded one, the median and the best, with the best case's key.
  struct Bandwidth {
    std::string collective, best_key;
    std::int64_t cases = 0;
    double median_gbps = 0, best_gbps = 0, best_algbw_gbps = 0;
  };
  std::vector<Bandwidth> bandwidth;
  bool simulated = false;  // throughput in simulated time
  // The results of the statuses asked for, grouped by status and failure signature of the error (or
  // reason): its first line with numbers blanked (Note [Failure signature] in base/text.cpp).
  struct Member {
    std::string key, models;  // models: the models an op case was cut from ("" for none)
  };
  struct Group {
    std::string status, why;
    bool by_error = true;  // `why` is the first member's error's first line, else its reason
    std::vector<Member> members;
  };
  std::vector<Group> groups;
};
// Throws gauntlet::Error when the database has no run `run_id`.
RunSummary summarize_run(const Store& store, std::int64_t run_id, const std::vector<std::string>& statuses);
// The summary as `show` prints it: the run line, the counts, fallbacks, throughput, then each
// group with its repro command (`gauntlet repro KEY --db DB --run N`).
std::string run_summary_text(const RunSummary& s, const std::string& db_path);
// `show --json`: the run, its counts and every result of the statuses asked for, with its repro.
nlohmann::json run_json(const Store& store, std::int64_t run_id, const std::vector<std::string>& statuses,
                        const std::string& db_path);

// Note [Hollow runs]: a gate must not pass a qualification in which nothing was qualified. The
// floors: --min-ran, and compare's --max-ran-drop.
inline constexpr double kDefaultMinRan = 0.5;
inline constexpr double kDefaultMaxRanDrop = 0.05;
struct RanSummary {
  std::int64_t cases = 0, ran = 0, passed = 0;
  double fraction() const { return cases > 0 ? double(ran) / double(cases) : 0.0; }
};
RanSummary ran_summary(const Store& store, std::int64_t run_id);
// Why a run with these counts is hollow, or "" when it is not.
std::string hollow_reason(const RanSummary& s, double min_ran);
// compare's: why candidate run `candidate` is hollow on its own (min_ran) or against run
// `baseline` (its ran fraction fell more than `max_ran_drop` below the baseline's), or "". Throws
// gauntlet::Error for a fraction outside [0, 1].
std::string hollow_against(const Store& store, std::int64_t candidate, std::int64_t baseline, double min_ran,
                           double max_ran_drop);

// `gauntlet show`'s options (Note [Options beside their fields]).
struct ShowOptions {
  std::string db, statuses;
  long long run = 0;  // 0: the latest
  bool json = false;
};
void describe_options(OptionSink& s, ShowOptions& o);
// What `gauntlet show` prints: the run's summary (run_summary_text) or, with --json, run_json.
std::string show_run(const ShowOptions& o);

}  // namespace gauntlet
