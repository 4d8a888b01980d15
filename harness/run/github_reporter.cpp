// Note [GitHub Actions]: with --github, or when $GITHUB_ACTIONS is "true" (GitHub sets it in every
// job), run and compare append a short Markdown summary to the file $GITHUB_STEP_SUMMARY names
// (the job's summary page) and print workflow commands on stdout, one per gating finding:
// `::error title=...::message` (run: each failing case with --gate, ::warning without; compare:
// each gating regression, ::warning for an unwaived one outside the gates asked), at most
// kMaxAnnotations, then one ::notice with how many were left out. docs/ci.md has a workflow.
// Run's side is a run listener (github_run_reporter); compare's is write_compare_github.
#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "gauntlet/analysis/github.h"
#include "gauntlet/analysis/reports.h"
#include "gauntlet/base/text.h"
#include "gauntlet/run/reporters.h"

namespace gauntlet {

namespace fs = std::filesystem;

bool github_enabled(bool flag) {
  const char* env = std::getenv("GITHUB_ACTIONS");
  return flag || (env && std::string(env) == "true");
}

void append_step_summary(const std::string& markdown) {
  const char* path = std::getenv("GITHUB_STEP_SUMMARY");
  if (!path || !*path) {
    fmt::print(stderr, "gauntlet: note: $GITHUB_STEP_SUMMARY is not set: no step summary written\n");
    return;
  }
  std::ofstream out(path, std::ios::binary | std::ios::app);
  out << markdown << "\n";
  out.close();
  if (!out) fmt::print(stderr, "gauntlet: warning: cannot append the step summary to {}\n", path);
}

std::string repository_path(const std::string& file) {
  if (file.empty()) return "";
  std::error_code ec;
  const char* ws = std::getenv("GITHUB_WORKSPACE");
  const fs::path root = fs::weakly_canonical(ws && *ws ? fs::path(ws) : fs::current_path(ec), ec);
  const fs::path abs = fs::weakly_canonical(file, ec);
  if (ec) return "";
  const fs::path rel = abs.lexically_relative(root);
  if (rel.empty() || rel.begin()->string() == "..") return "";
  return rel.generic_string();
}

namespace {

class GithubRunReporter final : public RunListener {
 public:
  void run_ended(const RunContext& run, const RunEnd& end) override {
    if (run.run_id == 0) return;  // an empty shard: no run, nothing to annotate
    const RunReport& r = end.report();
    append_step_summary(run_step_summary(r));
    std::cout << annotation_lines(
        run_annotations(r, repository_path(run.suite_file)), kMaxAnnotations,
        fmt::format("gauntlet show --db {} --run {}", shell_argument(run.db_path), run.run_id));
    std::cout.flush();
  }
};

}  // namespace

std::unique_ptr<RunListener> github_run_reporter() { return std::make_unique<GithubRunReporter>(); }

void write_compare_github(const RunComparison& c, const ReportOptions& ro, const std::string& hollow) {
  std::string verdict = gate_verdict(c, ro.gates).summary;
  std::vector<Annotation> annotations = compare_annotations(c, ro);
  if (!hollow.empty()) {
    verdict = fmt::format("gate: FAIL: run {} is hollow: {}; {}", c.candidate.id, hollow, verdict);
    annotations.insert(annotations.begin(), Annotation{Annotation::Level::Error, "",
                                                       fmt::format("gauntlet compare: run {} hollow", c.candidate.id),
                                                       fmt::format("run {} is hollow: {}", c.candidate.id, hollow)});
  }
  append_step_summary(compare_step_summary(c, ro, verdict));
  std::cout << annotation_lines(annotations, kMaxAnnotations,
                                fmt::format("gauntlet compare --db {} --run {} --baseline {} --markdown -",
                                            shell_argument(ro.db_path), c.candidate.id, c.baseline.id));
  std::cout.flush();
}

}  // namespace gauntlet
