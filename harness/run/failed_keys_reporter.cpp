// `run --failed-keys FILE` (Note [Run reporters] in gauntlet/run/reporters.h): the keys of the
// run's failing cases (is_failure: FAIL, XPASS, ERROR, CRASH, TIMEOUT), one a line, sorted, read
// back from the database when the run ends or stops (a resumed run's earlier failures too). The
// file is what `run --keys-file` reads, so the failures of one run are run again alone with
// `gauntlet run --suite S --keys-file FILE`; a run with no failure leaves it empty.
#include <algorithm>
#include <string>
#include <vector>

#include "gauntlet/run/reporters.h"

namespace gauntlet {

std::string failed_keys_text(const RunReport& r) {
  std::vector<std::string> keys;
  for (const Outcome& o : r.results) {
    if (is_failure(o.status)) keys.push_back(o.key);
  }
  std::sort(keys.begin(), keys.end());
  std::string text;
  for (const std::string& k : keys) text += k + "\n";
  return text;
}

std::unique_ptr<RunListener> failed_keys_reporter(const std::string& path) {
  return report_at_end(path, "failed keys", [](const RunEnd& end) { return failed_keys_text(end.report()); });
}

}  // namespace gauntlet
