#include "gauntlet/analysis/rollup.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <tuple>

#include "gauntlet/base/text.h"

namespace gauntlet {

// Note [Rollups]: one fault moves many cases. A 20% slowdown of `add` makes 80 `add` cases
// slower, a bias in `exp` fails every case whose output goes through it; listed case by case, the
// one fault is 80 rows among 200, and the suite's speed index (+0.4%) hides it. So every place that
// lists regressions (compare's console, Markdown, JSON and GitHub summary, the dashboard) lists
// groups first, worst first, each with how many of its cases moved, the median change and its
// middle half, and the worst case; the per-case rows stay where they were. A group is what a
// developer would fix at once: one op in one dtype and mode (the shapes, layouts and arguments are
// what the suite varies). A failure groups by its root cause instead: the op, whatever its dtype
// and mode, and the signature of the error (its first line with the numbers blanked,
// gauntlet/base/text.h), as the release page groups failures by cause. The denominator ("80 of
// 80") is the group's cases in both runs, counted by compare_runs for the groups it names
// (RunComparison::group_cases), so "3 of 80" and "80 of 80" read differently.

namespace {

std::vector<std::string_view> key_fields(std::string_view key) {
  std::vector<std::string_view> out;
  std::size_t start = 0;
  while (true) {
    const std::size_t slash = key.find('/', start);
    out.push_back(key.substr(start, slash == std::string_view::npos ? std::string_view::npos : slash - start));
    if (slash == std::string_view::npos) return out;
    start = slash + 1;
  }
}

bool has_ratio(Change c) {
  switch (c) {
    case Change::ErrorGrowth:
    case Change::CompileTime:
    case Change::FirstRun:
    case Change::PeakMemory:
    case Change::Slower:
    case Change::Faster:
    case Change::ErrorShift:
    case Change::SpeedShift:
      return true;
    default:
      return false;
  }
}

// The q-quantile of sorted values, interpolated.
double quantile(const std::vector<double>& sorted, double q) {
  if (sorted.empty()) return NAN;
  const double at = q * static_cast<double>(sorted.size() - 1);
  const auto lo = static_cast<std::size_t>(at);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (sorted[hi] - sorted[lo]) * (at - static_cast<double>(lo));
}

// What the group's cases did, as the end of "12 of 40 cases ...".
std::string_view change_phrase(Change c) {
  switch (c) {
    case Change::StatusChange:
      return "fail";
    case Change::ErrorGrowth:
      return "with their error grown";
    case Change::XPass:
      return "pass against their expected failure";
    case Change::NewFallback:
      return "fall back to the CPU anew";
    case Change::GraphBreaks:
      return "with more graph breaks";
    case Change::Recompiles:
      return "recompiling more";
    case Change::CompileTime:
      return "compiling slower";
    case Change::FirstRun:
      return "slower on their first run";
    case Change::PeakMemory:
      return "using more memory";
    case Change::Missing:
      return "missing";
    case Change::Slower:
      return "slower";
    case Change::Faster:
      return "faster";
    case Change::Fixed:
      return "fixed";
    case Change::New:
      return "new";
    case Change::ErrorShift:
      return "whose error shifted earlier";
    case Change::SpeedShift:
      return "whose time shifted earlier";
  }
  return "changed";
}

}  // namespace

std::string case_group(std::string_view key) {
  const std::vector<std::string_view> f = key_fields(key);
  if (f.size() < 6) return std::string(key);
  if (f[0] == "model") return fmt::format("{}/{}/{}/{}/{}/{}", f[0], f[1], f[2], f[3], f[4], f[5]);
  return fmt::format("{}/{}/{}/{}", f[0], f[1], f[2], f[5]);
}

std::string case_target(std::string_view key) {
  const std::vector<std::string_view> f = key_fields(key);
  if (f.size() < 2) return std::string(key);
  return fmt::format("{}/{}", f[0], f[1]);
}

std::vector<FindingGroup> group_findings(const RunComparison& c) {
  // (change, group, signature) -> group; the signature is "" but for status changes.
  // Waived (by a waiver still in force) and acknowledged findings group apart from the open ones.
  std::map<std::tuple<Change, std::string, std::string, std::int64_t, bool>, FindingGroup> groups;
  for (const Finding& f : c.findings) {
    if (f.change == Change::New) continue;
    const bool by_cause = f.change == Change::StatusChange;
    std::string group = by_cause ? case_target(f.key) : case_group(f.key);
    const std::int64_t ack = f.acknowledged() ? f.ack->id : 0;
    const bool waived = f.waiver && !f.waiver->expired;
    FindingGroup& g = groups[{f.change, group, by_cause ? error_signature(f.detail) : "", ack, waived}];
    if (g.findings.empty()) {
      g.change = f.change;
      g.group = std::move(group);
      if (by_cause) g.cause = first_line_cut(f.detail, 200);
      const auto n = c.group_cases.find(g.group);
      g.cases = n != c.group_cases.end() ? n->second : 0;
      if (ack != 0) g.ack = &*f.ack;
    }
    g.findings.push_back(&f);
    ++g.moved;
    g.waived += waived;
    g.reopened += f.ack && f.ack->grown;
  }
  std::vector<FindingGroup> out;
  out.reserve(groups.size());
  for (auto& [_, g] : groups) {
    if (has_ratio(g.change)) {
      std::vector<double> ratios;
      for (const Finding* f : g.findings) {
        if (f->ratio > 0 && std::isfinite(f->ratio)) ratios.push_back(f->ratio);
      }
      std::sort(ratios.begin(), ratios.end());
      g.median = quantile(ratios, 0.5);
      g.q1 = quantile(ratios, 0.25);
      g.q3 = quantile(ratios, 0.75);
    }
    out.push_back(std::move(g));
  }
  const auto magnitude = [](const FindingGroup& g) {
    return std::isfinite(g.median) ? std::abs(std::log(g.median)) : 0;
  };
  std::stable_sort(out.begin(), out.end(), [&](const FindingGroup& a, const FindingGroup& b) {
    const bool ra = is_regression(a.change), rb = is_regression(b.change);
    if (ra != rb) return ra;
    if (change_gate(a.change) != change_gate(b.change)) return change_gate(a.change) < change_gate(b.change);
    // grown past its acknowledgement: flagged again, first (Note [Triage] in triage.cpp)
    if ((a.reopened > 0) != (b.reopened > 0)) return a.reopened > 0;
    if (a.moved != b.moved) return a.moved > b.moved;
    return magnitude(a) > magnitude(b);
  });
  return out;
}

std::string group_change_text(Change change, double ratio) {
  if (!has_ratio(change) || !(ratio > 0) || !std::isfinite(ratio)) return "";
  if (change == Change::ErrorGrowth || change == Change::ErrorShift) return fmt::format("x{:.3g}", ratio);
  return fmt::format("{:+.1f}%", (ratio - 1) * 100);
}

std::string group_line(const FindingGroup& g) {
  std::string out;
  if (g.cases > 0) {
    out = fmt::format("{}: {} of {} cases {}", g.group, g.moved, g.cases, change_phrase(g.change));
  } else if (g.moved == 1 && g.findings.front()->key == g.group) {
    out = fmt::format("{}: {}", g.group, change_phrase(g.change));  // not a case: the suite's own finding
  } else {
    out = fmt::format("{}: {} case{} {}", g.group, g.moved, g.moved == 1 ? "" : "s", change_phrase(g.change));
  }
  if (std::isfinite(g.median)) {
    out += fmt::format(", median {}", group_change_text(g.change, g.median));
    if (g.moved >= 4) {
      out +=
          fmt::format(" (middle half {} .. {})", group_change_text(g.change, g.q1), group_change_text(g.change, g.q3));
    }
  }
  if (!g.findings.empty()) {
    const Finding& worst = *g.findings.front();
    if (!g.cause.empty()) {
      out += fmt::format(": {}", g.cause);
    } else if (const std::string change = group_change_text(g.change, worst.ratio); !change.empty()) {
      if (g.moved > 1) out += fmt::format(", worst {} {}", worst.key, change);
    } else {
      out += fmt::format(", e.g. {}: {}", worst.key, first_line_cut(worst.detail, 160));
    }
  }
  if (g.waived > 0) out += fmt::format(" ({} waived)", g.waived);
  if (g.reopened > 0) {
    const auto grown =
        std::find_if(g.findings.begin(), g.findings.end(), [](const Finding* f) { return f->ack && f->ack->grown; });
    out += fmt::format(" (open again, {} acknowledged in ack {}: {})", g.reopened, (*grown)->ack->id,
                       (*grown)->ack->grown_why);
  }
  if (g.ack != nullptr) out += " " + ack_text(*g.ack);
  return out;
}

std::string ack_text(const AckRef& a) {
  return fmt::format("[ack {} by {} on {}{}: {}]", a.id, a.by, a.at.substr(0, 10),
                     a.until.empty() ? "" : fmt::format(", until {}", a.until), first_line_cut(a.note, 200));
}

std::string rollup_markdown(const RunComparison& c, std::size_t per_gate) {
  std::vector<FindingGroup> groups = group_findings(c);
  std::erase_if(groups, [](const FindingGroup& g) { return !is_regression(g.change); });
  // Note [Triage] in triage.cpp: acknowledged groups in a table of their own; waived ones are
  // counted (each is under Waived).
  std::string acked_rows;
  std::int64_t waived_findings = 0, waived_groups = 0;
  for (const FindingGroup& g : groups) {
    if (g.ack != nullptr) {
      acked_rows +=
          fmt::format("| {} | {} | {} | {} | {} | {} |\n", gate_name(change_gate(g.change)), markdown_code(g.group),
                      g.cases > 0 ? fmt::format("{} of {}", g.moved, g.cases) : std::to_string(g.moved),
                      change_name(g.change), group_change_text(g.change, g.median), markdown_text(ack_text(*g.ack)));
    } else if (g.waived == g.moved) {
      waived_findings += g.moved;
      ++waived_groups;
    }
  }
  std::erase_if(groups, [](const FindingGroup& g) { return g.ack != nullptr || g.waived == g.moved; });
  std::string tail;
  if (!acked_rows.empty()) {
    tail +=
        "Acknowledged (`gauntlet triage`): listed apart, and gating unless the gate honours acks "
        "(`--honour-acks`).\n\n| Gate | Group | Cases | Change | Median | Acknowledgement |\n"
        "|---|---|--:|---|--:|---|\n" +
        acked_rows + "\n";
  }
  if (waived_findings > 0) {
    tail += fmt::format("Waived, not listed here: {} regression{} in {} group{} (each under Waived).\n\n",
                        waived_findings, waived_findings == 1 ? "" : "s", waived_groups, waived_groups == 1 ? "" : "s");
  }
  if (groups.empty()) return tail.empty() ? "None.\n\n" : "None open.\n\n" + tail;
  std::string out =
      "A group is one op (model, collective) in one dtype and mode; a failure's group is its op and the signature of "
      "its error. Worst first in each gate: most cases moved, then largest median change.\n\n"
      "| Gate | Group | Cases | Change | Median | Middle half | Worst case, or cause |\n"
      "|---|---|--:|---|--:|---|---|\n";
  for (Gate gate : kAllGates) {
    std::size_t in = 0;
    std::int64_t rest = 0;
    for (const FindingGroup& g : groups) {
      if (change_gate(g.change) != gate) continue;
      if (in++ >= per_gate) {
        rest += g.moved;
        continue;
      }
      const Finding& worst = *g.findings.front();
      std::string what = g.cause.empty() ? markdown_code(worst.key) : markdown_text(g.cause);
      if (g.cause.empty()) {
        if (const std::string ch = group_change_text(g.change, worst.ratio); !ch.empty()) what += " " + ch;
      }
      if (g.waived > 0) what += fmt::format(" ({} waived)", g.waived);
      if (g.reopened > 0) what += fmt::format(" (open again: {} grew past their acknowledgement)", g.reopened);
      const std::string middle =
          g.moved >= 4 && std::isfinite(g.q1)
              ? fmt::format("{} .. {}", group_change_text(g.change, g.q1), group_change_text(g.change, g.q3))
              : "";
      out += fmt::format("| {} | {} | {} | {} | {} | {} | {} |\n", gate_name(gate), markdown_code(g.group),
                         g.cases > 0 ? fmt::format("{} of {}", g.moved, g.cases) : std::to_string(g.moved),
                         change_name(g.change), group_change_text(g.change, g.median), middle, what);
    }
    if (in > per_gate) {
      out += fmt::format("| {} | {} more groups | {} | | | | |\n", gate_name(gate), in - per_gate, rest);
    }
  }
  return out + "\n" + tail;
}

}  // namespace gauntlet
