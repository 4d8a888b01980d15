// `gauntlet report --weekly` (docs/regressions.md#a-weekly-report): a database's releases of the
// last 7 days, per backend and suite (gauntlet/analysis/weekly.h). It reads only and gates nothing. No torch.
#pragma once

#include <string>

#include "gauntlet/base/command_line.h"

namespace gauntlet {

// Its options (Note [Options beside their fields]); gauntlet::WeeklyOptions (weekly.h) are the
// report's own, made from these.
struct ReportRequest {
  bool weekly = false;  // the only report so far
  std::string db;
  std::string since, until;  // YYYY-MM-DD; default: the 7 days ending today (GAUNTLET_TODAY)
  std::string backend, suite;
  std::string markdown, json;  // report files ("-": stdout)
};
void describe_options(OptionSink& s, ReportRequest& o);
// Writes the report files; returns what the terminal shows: the window and a line per backend and
// suite. Throws gauntlet::Error for bad input.
std::string weekly_command(const ReportRequest& o);

}  // namespace gauntlet
