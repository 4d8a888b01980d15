// `run --markdown FILE` (Note [Run reporters] in gauntlet/run/reporters.h): the run's Markdown
// report, read back from the database when the run ends or stops.
#include "gauntlet/analysis/run_reports.h"
#include "gauntlet/run/reporters.h"

namespace gauntlet {

std::unique_ptr<RunListener> markdown_reporter(const std::string& path) {
  return report_at_end(path, "Markdown", [](const RunEnd& end) { return run_markdown_report(end.report()); });
}

}  // namespace gauntlet
