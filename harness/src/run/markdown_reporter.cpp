// `run --markdown FILE` (Note [Run reporters] in gauntlet/run/reporters.h): the run's Markdown
// report, read back from the database when the run ends or stops.
#include "gauntlet/run/reporters.h"
#include "gauntlet/run_reports.h"

namespace gauntlet {

namespace {

class MarkdownReporter final : public RunListener {
 public:
  explicit MarkdownReporter(std::string path) : path_(std::move(path)) {}
  void run_ended(const RunContext&, const RunEnd& end) override {
    write_report_file(path_, run_markdown_report(end.report()), "Markdown");
  }

 private:
  std::string path_;
};

}  // namespace

std::unique_ptr<RunListener> markdown_reporter(const std::string& path) {
  return std::make_unique<MarkdownReporter>(path);
}

}  // namespace gauntlet
