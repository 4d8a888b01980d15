// GitHub Actions output (Note [GitHub Actions] in harness/run/github_reporter.cpp): workflow
// command lines (`::error file=F,title=T::message`) that GitHub turns into annotations on the job
// and the pull request, and the Markdown of compare's step summary. Pure functions; no torch.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/analysis/reports.h"
#include "gauntlet/analysis/run_reports.h"

namespace gauntlet {

// GitHub's escaping of workflow commands (@actions/core's command.ts): in the message, % CR LF as
// %25 %0D %0A; in a property value (file, title) also ':' and ',' as %3A and %2C.
std::string github_escape_data(std::string_view s);
std::string github_escape_property(std::string_view s);

struct Annotation {
  enum class Level { Error, Warning, Notice };
  Level level = Level::Error;
  std::string file;   // a path relative to the repository ("": none)
  std::string title;  // one line ("": none)
  std::string message;
};

// One workflow command line, newline included: "::error file=F,title=T::message\n".
std::string annotation_line(const Annotation& a);

// The lines of at most `cap` annotations, in the order given, then, when some were left out, one
// ::notice line saying how many and where to see them (`more`, e.g. the show command).
std::string annotation_lines(const std::vector<Annotation>& all, std::size_t cap, std::string_view more);

// A run's annotations: one per failing case (is_failure), an ::error when --gate was asked (it
// gates), else a ::warning; a hollow gated run is one more ::error. `file`: the suite's file, for
// GitHub to attach the annotations to ("" when it lies outside the repository).
std::vector<Annotation> run_annotations(const RunReport& r, const std::string& file);

// compare's annotations: an ::error per regression that gates (reports.h, "gating"), a ::warning
// per unwaived regression in a gate not asked for; known failures and waived regressions none.
std::vector<Annotation> compare_annotations(const RunComparison& c, const ReportOptions& o);

// compare's step summary: title, the verdict, counts by status and of findings by kind, the first
// `top` gating regressions with their repro commands, and the number of known failures.
std::string compare_step_summary(const RunComparison& c, const ReportOptions& o, const std::string& verdict_line,
                                 int top = 20);

// How many annotations a command prints before it stops (GitHub shows at most 10 errors and 10
// warnings of a step anyway, and 50 per job on a pull request).
inline constexpr std::size_t kMaxAnnotations = 50;

}  // namespace gauntlet
