#include "gauntlet/analysis/github.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "gauntlet/analysis/rollup.h"
#include "gauntlet/base/text.h"

namespace gauntlet {

namespace {

std::string escape(std::string_view s, bool property) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '%':
        out += "%25";
        break;
      case '\r':
        out += "%0D";
        break;
      case '\n':
        out += "%0A";
        break;
      case ':':
        out += property ? "%3A" : ":";
        break;
      case ',':
        out += property ? "%2C" : ",";
        break;
      default:
        out += ch;
    }
  }
  return out;
}

bool asked(const std::vector<Gate>& gates, Gate g) { return std::find(gates.begin(), gates.end(), g) != gates.end(); }

// reports.h's "gating": a regression not waived (or whose waiver expired) in a gate asked for.
bool gates_build(const Finding& f, const std::vector<Gate>& gates) {
  return f.gating() && asked(gates, change_gate(f.change));
}

std::string plural(std::size_t n, std::string_view noun) { return fmt::format("{} {}{}", n, noun, n == 1 ? "" : "s"); }

}  // namespace

std::string github_escape_data(std::string_view s) { return escape(s, false); }
std::string github_escape_property(std::string_view s) { return escape(s, true); }

std::string annotation_line(const Annotation& a) {
  constexpr std::string_view kLevels[] = {"error", "warning", "notice"};
  std::string line = "::" + std::string(kLevels[static_cast<unsigned>(a.level)]);
  std::vector<std::string> props;
  if (!a.file.empty()) props.push_back("file=" + github_escape_property(a.file));
  if (!a.title.empty()) props.push_back("title=" + github_escape_property(a.title));
  if (!props.empty()) line += " " + fmt::format("{}", fmt::join(props, ","));
  return line + "::" + github_escape_data(a.message) + "\n";
}

std::string annotation_lines(const std::vector<Annotation>& all, std::size_t cap, std::string_view more) {
  std::string out;
  const std::size_t shown = std::min(all.size(), cap);
  for (std::size_t i = 0; i < shown; ++i) out += annotation_line(all[i]);
  if (shown < all.size()) {
    Annotation n;
    n.level = Annotation::Level::Notice;
    n.title = "gauntlet";
    const std::size_t left = all.size() - shown;
    n.message = fmt::format("{} more {} not annotated (at most {} are){}{}", left, left == 1 ? "finding" : "findings",
                            cap, more.empty() ? "" : ": ", more);
    out += annotation_line(n);
  }
  return out;
}

std::vector<Annotation> run_annotations(const RunReport& r, const std::string& file) {
  std::vector<Annotation> out;
  const Annotation::Level level = r.gate ? Annotation::Level::Error : Annotation::Level::Warning;
  if (r.gate && !r.hollow.empty()) {
    out.push_back({Annotation::Level::Error, file, fmt::format("gauntlet run {}: hollow", r.id),
                   fmt::format("run {} is hollow: {}", r.id, r.hollow)});
  }
  std::vector<const Outcome*> failing;
  for (const Outcome& o : r.results) {
    if (is_failure(o.status)) failing.push_back(&o);
  }
  std::stable_sort(failing.begin(), failing.end(), [](const Outcome* a, const Outcome* b) { return a->key < b->key; });
  for (const Outcome* o : failing) {
    std::string why = first_line(o->error);
    if (why.empty()) why = first_line(o->reason);
    std::string message = fmt::format("{} {}", status_name(o->status), o->key);
    if (!why.empty()) message += ": " + why;
    message += "\nrepro: " + repro_command(o->key, r.db_path, r.id, r.backend);
    out.push_back({level, file, fmt::format("{} {}", status_name(o->status), o->key), message});
  }
  return out;
}

std::vector<Annotation> compare_annotations(const RunComparison& c, const ReportOptions& o) {
  std::vector<Annotation> errors, warnings;
  for (const Finding& f : c.findings) {
    if (!is_regression(f.change) || !f.gating()) continue;
    const bool gating = gates_build(f, o.gates);
    std::string message = fmt::format("{} {}: {}", change_name(f.change), f.key, f.detail);
    if (!gating) message += fmt::format(" (not gated: --gate {} not asked for)", gate_name(change_gate(f.change)));
    if (const std::string repro = repro_command(c, f); !repro.empty()) message += "\nrepro: " + repro;
    (gating ? errors : warnings)
        .push_back({gating ? Annotation::Level::Error : Annotation::Level::Warning, "",
                    fmt::format("{} {}", change_name(f.change), f.key), message});
  }
  errors.insert(errors.end(), warnings.begin(), warnings.end());
  return errors;
}

std::string compare_step_summary(const RunComparison& c, const ReportOptions& o, const std::string& verdict_line,
                                 int top) {
  auto title = [](const RunRef& r) { return r.release.empty() ? fmt::format("run {}", r.id) : r.release; };
  std::string out = fmt::format("### gauntlet compare: {} vs {} ({}, {})\n\n", markdown_text(title(c.candidate)),
                                markdown_text(title(c.baseline)), markdown_text(c.candidate.backend),
                                markdown_text(c.candidate.suite));
  const bool fail = verdict_line.find(": FAIL") != std::string::npos;
  out += fmt::format("**{}**: {}\n\n", fail ? "FAIL" : "PASS", markdown_text(verdict_line));
  out += fmt::format("Runs {} (baseline) and {} (candidate): {} in both.\n\n", c.baseline.id, c.candidate.id,
                     plural(static_cast<std::size_t>(c.common_cases), "case"));
  out += "| Status | Baseline | Candidate |\n|---|--:|--:|\n";
  for (Status s : kAllStatuses) {
    const auto b = c.baseline_counts.find(s), k = c.candidate_counts.find(s);
    if (b == c.baseline_counts.end() && k == c.candidate_counts.end()) continue;
    out += fmt::format("| {} | {} | {} |\n", status_name(s), b == c.baseline_counts.end() ? 0 : b->second,
                       k == c.candidate_counts.end() ? 0 : k->second);
  }
  out += "\n";
  std::map<Change, std::size_t> by_change;
  for (const Finding& f : c.findings) ++by_change[f.change];
  if (!by_change.empty()) {
    std::vector<std::string> parts;
    for (const auto& [ch, n] : by_change) parts.push_back(fmt::format("{} {}", change_name(ch), n));
    out += fmt::format("Findings: {}.\n\n", fmt::join(parts, ", "));
  }
  out += "Regressions by group:\n\n" + rollup_markdown(c, 5);  // Note [Rollups] in rollup.cpp
  std::vector<const Finding*> gating;
  for (const Finding& f : c.findings) {
    if (gates_build(f, o.gates)) gating.push_back(&f);
  }
  out += fmt::format("Gating regressions ({}):\n\n", gating.size());
  if (gating.empty()) {
    out += "None.\n\n";
  } else {
    out += "| Case | Change | Detail | Repro |\n|---|---|---|---|\n";
    const std::size_t shown = std::min(gating.size(), static_cast<std::size_t>(std::max(top, 0)));
    for (std::size_t i = 0; i < shown; ++i) {
      const Finding& f = *gating[i];
      out += fmt::format("| {} | {} | {} | {} |\n", markdown_code(f.key), change_name(f.change),
                         markdown_text(f.detail), markdown_code(repro_command(c, f)));
    }
    if (shown < gating.size())
      out += fmt::format("\n... and {} more (see the compare reports)\n", gating.size() - shown);
    out += "\n";
  }
  out += fmt::format("Known failures (failing in both runs; not regressions, not gating): {}.\n\n",
                     c.known_failures.size());
  return out;
}

}  // namespace gauntlet
