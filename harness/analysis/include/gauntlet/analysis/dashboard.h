// `gauntlet dashboard`: the data of the static trend site (dashboards/FORMAT.md), exported from a
// results database opened read-only. No torch. The site's page and assets are written by the
// caller (the CLI embeds them); this writes DIR/data/**. See docs/dashboard.md and Note
// [Dashboard aggregates] in harness/analysis/dashboard.cpp.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <string_view>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/base/command_line.h"
#include "gauntlet/base/error.h"

namespace gauntlet {

// An export that cannot be made: no such database, not a gauntlet database, a bad --since, an
// output directory that cannot be written. One line.
class DashboardError : public Error {
 public:
  using Error::Error;
};

struct DashboardOptions {
  std::string since;           // YYYY-MM-DD: only runs that started that day or later ("" all)
  std::string backend, suite;  // only this backend / suite ("" every one)
  CompareOptions compare;      // how regressions are judged (the latest pairs, with compare_runs)
  int compare_pairs = 8;       // the newest pairs of releases judged by compare_runs (at least 1)
  int per_file = 500;          // cases per lazy case file
  int grid_releases = 50;      // the newest releases in the status grid (grid.js)
  int max_regressions = 5000;  // regressions listed in latest.js (all are counted)
  // The op family of a case ("unary", "model", ...), from the op table; "" when unknown.
  std::function<std::string(std::string_view kind, std::string_view target)> family;
  std::string gauntlet_version;
  std::string generated_at;  // ISO 8601 UTC; the caller's clock, so that tests can fix it
};

struct DashboardSummary {
  std::int64_t groups = 0, releases = 0, cases = 0, results = 0, files = 0, bytes = 0;
};

// The payload of a data file as the page receives it: `gauntletData("<name>", <json>);` with
// `<`, `>`, `&`, U+2028 and U+2029 escaped (dashboards/FORMAT.md). Public for tests.
std::string dashboard_script(std::string_view name, std::string_view json);

// Reads `db_path` and writes `out_dir`/data/** (creating directories, replacing earlier data).
// Throws DashboardError.
DashboardSummary write_dashboard_data(const std::string& db_path, const std::string& out_dir,
                                      const DashboardOptions& options);

// `gauntlet dashboard`'s options (Note [Options beside their fields]); DashboardOptions above are
// the exporter's, made from these.
struct DashboardRequest {
  std::string db, out, since, backend, suite;
  std::string metric = "auto";
  int compare_pairs = 8;
  int grid_releases = 50;
};
void describe_options(OptionSink& s, DashboardRequest& o);

}  // namespace gauntlet
