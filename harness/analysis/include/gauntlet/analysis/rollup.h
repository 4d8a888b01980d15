// Rollups: a comparison's findings grouped the way a person triages them (Note [Rollups] in
// rollup.cpp). "op/add/f32/eager: 80 of 80 cases slower, median +20.0%" instead of 80 rows; a
// failure's root cause (the op and its error's signature) once with its count.
#pragma once

#include <cmath>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/analysis/regress.h"

namespace gauntlet {

// The group a case belongs to, from its key (docs/case-keys.md): an op case's kind, op, dtype and
// mode ("op/add/f32/eager", shapes, layout and arguments dropped); a collective's kind, name,
// dtype and world ("coll/all_reduce/f32/w4"); a model case's key without its arguments
// ("model/mlp/f32/tiny/compile/infer"). A key with too few fields is its own group.
std::string case_group(std::string_view key);
// The op (or model, collective) a case runs: its kind and target ("op/exp"): the group of a
// failure's root cause, whatever its dtype and mode.
std::string case_target(std::string_view key);

struct FindingGroup {
  Change change = Change::StatusChange;
  // case_group of its cases; a status change's: case_target (a root cause spans dtypes and modes)
  std::string group;
  // Status changes: the cause, the detail of the group's first case (its error's first line);
  // its signature (numbers blanked) is what the cases share.
  std::string cause;
  std::int64_t cases = 0;   // cases of the group in both runs (0: not known, e.g. built by hand)
  std::int64_t moved = 0;   // its findings of this change, waived ones included
  std::int64_t waived = 0;  // ... of which waived (listed apart, gating only when expired)
  // The findings' ratios (candidate / baseline) where the change has one (time, memory, error
  // growth): median and quartiles; NaN otherwise.
  double median = NAN, q1 = NAN, q3 = NAN;
  std::vector<const Finding*> findings;  // worst first (the comparison's own order)
  // Acknowledged findings group apart (gauntlet/analysis/triage.h): the ack of the group's first
  // case when the group's cases are acknowledged, else null.
  const AckRef* ack = nullptr;
  std::int64_t reopened = 0;  // open findings whose ack they grew past (Finding::ack grown)
};

// The findings of `c` grouped by change and group (status changes by op and error signature),
// acknowledged ones apart from the open ones, in gate order (accuracy, speed, coverage), then the most cases moved
// first, then the largest median change. New cases are left out. Points into `c`.
std::vector<FindingGroup> group_findings(const RunComparison& c);

// "+20.0%" for a time or memory ratio, "x12.3" for an error's growth; "" where the change has no ratio.
std::string group_change_text(Change change, double ratio);
// One line: "op/mm/f32/eager: 40 of 40 cases slower, median +20.0% (middle half +19.8% .. +20.3%),
// worst op/mm/f32/64x64,64x64/contig/eager +20.9%". Status changes name the cause.
std::string group_line(const FindingGroup& g);
// "[ack 3 by alice on 2026-12-07, until r3: known: the tile retune]"
std::string ack_text(const AckRef& a);
// The regressions by group as a Markdown table (compare's Markdown report, GitHub step summary):
// at most `per_gate` rows per gate, each gate's rest counted; "None." when there is no regression.
std::string rollup_markdown(const RunComparison& c, std::size_t per_gate);

}  // namespace gauntlet
