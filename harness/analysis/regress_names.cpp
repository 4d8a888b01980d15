// The names of gates, changes and metrics (their spellings are part of the CLI and of every
// report), which gate each change belongs to, and RunComparison::gating_counts.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <iterator>
#include <sstream>

#include "gauntlet/analysis/regress.h"
#include "gauntlet/base/error.h"

namespace gauntlet {

namespace {

// Indexed by the enums; these spellings appear in --gate / --metric and in every report.
constexpr std::string_view kGateNames[] = {"accuracy", "speed", "coverage"};
static_assert(std::size(kGateNames) == std::size(kAllGates));

constexpr std::string_view kChangeNames[] = {"status-change", "error-growth", "xpass",        "new-fallback",
                                             "graph-breaks",  "recompiles",   "compile-time", "first-run",
                                             "peak-memory",   "missing",      "slower",       "faster",
                                             "fixed",         "new",          "error-shift",  "speed-shift"};
static_assert(std::size(kChangeNames) == static_cast<std::size_t>(kLastChange) + 1);

constexpr std::string_view kMetricNames[] = {"auto", "sim", "host"};
static_assert(std::size(kMetricNames) == static_cast<std::size_t>(Metric::Host) + 1);

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::string_view gate_name(Gate g) { return kGateNames[static_cast<unsigned>(g)]; }

std::optional<Gate> parse_gate(std::string_view name) {
  for (Gate g : kAllGates) {
    if (iequals(name, gate_name(g))) return g;
  }
  return std::nullopt;
}

std::vector<Gate> parse_gates(const std::string& spec) {
  std::vector<Gate> gates;
  std::stringstream in(spec);
  for (std::string name; std::getline(in, name, ',');) {
    if (name.empty()) continue;
    if (name == "all") return {std::begin(kAllGates), std::end(kAllGates)};
    auto g = parse_gate(name);
    if (!g) throw Error(fmt::format("--gate: unknown kind '{}' (accuracy, speed, coverage or all)", name));
    if (std::find(gates.begin(), gates.end(), *g) == gates.end()) gates.push_back(*g);
  }
  return gates;
}

std::string_view change_name(Change c) { return kChangeNames[static_cast<unsigned>(c)]; }

Gate change_gate(Change c) {
  switch (c) {
    case Change::StatusChange:
    case Change::ErrorGrowth:
    case Change::XPass:
    case Change::Fixed:
    case Change::ErrorShift:
      return Gate::Accuracy;
    case Change::Slower:
    case Change::Faster:
    case Change::SpeedShift:
      return Gate::Speed;
    case Change::NewFallback:
    case Change::GraphBreaks:
    case Change::Recompiles:
    case Change::CompileTime:
    case Change::FirstRun:
    case Change::PeakMemory:
    case Change::Missing:
    case Change::New:
      return Gate::Coverage;
  }
  return Gate::Coverage;  // unreachable: every enumerator is handled above
}

bool is_regression(Change c) {
  return c != Change::Faster && c != Change::Fixed && c != Change::New && c != Change::ErrorShift &&
         c != Change::SpeedShift;
}

std::string_view metric_name(Metric m) { return kMetricNames[static_cast<unsigned>(m)]; }

std::optional<Metric> parse_metric(std::string_view name) {
  for (unsigned i = 0; i < std::size(kMetricNames); ++i) {
    if (iequals(name, kMetricNames[i])) return static_cast<Metric>(i);
  }
  return std::nullopt;
}

std::map<Gate, std::int64_t> RunComparison::gating_counts() const {
  std::map<Gate, std::int64_t> counts;
  for (Gate g : kAllGates) counts[g] = 0;  // every gate present, so callers may use at()
  for (const Finding& f : findings) {
    if (f.gating()) ++counts[change_gate(f.change)];
  }
  return counts;
}

}  // namespace gauntlet
