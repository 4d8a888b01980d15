// gauntlet show: a stored run's summary by status, then its failures with repro commands
// (gauntlet/run/run_summary.h); --json: every result of the statuses asked for.
#include <fmt/format.h>

#include <iostream>

#include "cli.h"
#include "gauntlet/run/run_summary.h"
#include "gauntlet/store.h"

namespace gauntlet::cli {

int show(const ShowOptions& o) {
  auto store = Store::open(o.db, Store::OpenMode::ReadOnly);
  long long run_id = o.run;
  if (run_id == 0) {
    auto latest = store->latest_run();
    if (!latest) throw UsageError(o.db + ": the database holds no run yet");
    run_id = *latest;
  }
  const std::vector<std::string> statuses = parse_status_list(o.statuses);
  if (o.json) {
    std::cout << run_json(*store, run_id, statuses, o.db).dump(1) << "\n";
  } else {
    fmt::print("{}", run_summary_text(summarize_run(*store, run_id, statuses), o.db));
  }
  return 0;
}

}  // namespace gauntlet::cli
