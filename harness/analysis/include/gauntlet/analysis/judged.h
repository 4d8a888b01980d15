// What compare judged for one case (Note [What was judged] in judged.cpp): the baseline's figures,
// the stored candidate's, compare's findings and thresholds; and a new measurement judged the same
// way. `repro --db` prints it; a repro bundle carries it for its repro.py. No torch.
#pragma once

#include <cmath>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/analysis/regress.h"

namespace gauntlet {

// One result's figures under every timer compare judges.
struct CaseFigures {
  bool present = false;
  Status status = Status::Pass;
  double sim_us = NAN;             // the backend's device time of the first call (simulated on `sim`)
  double median_us = NAN;          // host time, median of the repetitions
  double first_us = NAN;           // the first call, host time (compile included)
  double compile_ms = NAN;         // compile cases
  std::int64_t peak_mem = 0;       // bytes above the case's baseline
  std::vector<double> samples_us;  // the host repetitions
};

struct CaseJudgement {
  RunRef baseline, candidate;
  CaseFigures base, stored;
  std::vector<Finding> findings;  // compare's findings of this case, every kind
  CompareOptions options;
};

// Compare's judgement of `key` in run `run` (0: the latest) against its automatic baseline, with
// compare's default options. Nullopt when the run has no baseline (or the case no result in it).
// Throws CompareError for an unreadable database.
std::optional<CaseJudgement> judge_case(const std::string& db_path, std::int64_t run, std::string_view key);

// Whether compare flags `change` from `base` to `now`, by the rule of its check with the
// comparison's thresholds (the single-case part: minimum effect, significance of the samples,
// minimum absolute change); the suite-level parts (drift, population noise) need the whole run.
// "" when no time of that kind is on both sides.
struct NowVerdict {
  double ratio = NAN;   // now / baseline
  double p_value = -1;  // host time: Mann-Whitney U of the repetitions (-1: none)
  bool flagged = false;
  std::string rule;  // "flagged past +5.0% (--min-effect) with p < 0.01 (--significance)"
};
NowVerdict judge_now(Change change, const CaseFigures& base, const CaseFigures& now, const CompareOptions& o);

// Whether a `slower` finding of the case was judged on the backend's device time (simulated time):
// then only the device itself can replay it.
bool judged_on_device_time(const CaseJudgement& j);

// The lines `repro` prints: for each speed, memory, compile-time or first-run finding, the
// baseline's figure, the stored one and `now`'s under the same timer, and the verdicts; one line
// when there is none.
std::string judged_text(const CaseJudgement& j, const CaseFigures& now);

// For a bundle's manifest (`judged`): the runs, the figures, the findings and the thresholds, so
// that its repro.py judges its own timing by the same rule.
nlohmann::json judged_json(const CaseJudgement& j);

}  // namespace gauntlet
