// `run --junit FILE` (Note [Run reporters] in gauntlet/run/reporters.h): JUnit XML of every result
// of the run, read back from the database when the run ends or stops.
#include "gauntlet/run/reporters.h"
#include "gauntlet/run_reports.h"

namespace gauntlet {

namespace {

class JunitReporter final : public RunListener {
 public:
  explicit JunitReporter(std::string path) : path_(std::move(path)) {}
  void run_ended(const RunContext&, const RunEnd& end) override {
    write_report_file(path_, run_junit_report(end.report()), "JUnit");
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<RunListener> junit_reporter(const std::string& path) { return std::make_unique<JunitReporter>(path); }

}  // namespace gauntlet
