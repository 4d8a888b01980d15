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

namespace {

class FailedKeysReporter final : public RunListener {
 public:
  explicit FailedKeysReporter(std::string path) : path_(std::move(path)) {}
  void run_ended(const RunContext&, const RunEnd& end) override {
    std::vector<std::string> keys;
    for (const Outcome& o : end.report().results) {
      if (is_failure(o.status)) keys.push_back(o.key);
    }
    std::sort(keys.begin(), keys.end());
    std::string text;
    for (const std::string& k : keys) text += k + "\n";
    write_report_file(path_, text, "failed keys");
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<RunListener> failed_keys_reporter(const std::string& path) {
  return std::make_unique<FailedKeysReporter>(path);
}

}  // namespace gauntlet
