// Note [Option values]: every numeric or path option is checked where it enters, by name, for
// every subcommand that has it, so that a value that would disable a safeguard (--timeout 0 or
// nan: no timeout at all), lose data (--db ""), or be silently clamped (--run-id past 2^53) is a
// one-line error and exit 2 before anything runs or is written. CLI11 parses numbers with strtod
// and strtoll, which accept "nan" and saturate on overflow, so the checks parse the text
// themselves.
#include <fmt/format.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/cli/cli.h"
#include "gauntlet/run/reporters.h"

namespace gauntlet::cli {

namespace {

// The largest id or count an option takes: integers JSON and SQLite both keep exactly.
constexpr long long kMaxInteger = (1LL << 53) - 1;

std::optional<long long> parse_integer(const std::string& text) {
  std::string_view t = text;
  if (!t.empty() && t.front() == '+') t.remove_prefix(1);
  long long v = 0;
  const auto [end, ec] = std::from_chars(t.data(), t.data() + t.size(), v);
  if (t.empty() || ec != std::errc() || end != t.data() + t.size()) return std::nullopt;
  return v;
}

std::optional<double> parse_real(const std::string& text) {
  if (text.empty()) return std::nullopt;
  char* end = nullptr;
  errno = 0;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || errno == ERANGE || !std::isfinite(v)) return std::nullopt;
  return v;
}

CLI::Validator integer_at_least(long long low) {
  return CLI::Validator(
      [low](std::string& text) -> std::string {
        const auto v = parse_integer(text);
        if (!v || *v > kMaxInteger) return fmt::format("'{}' is not an integer from {} to {}", text, low, kMaxInteger);
        if (*v < low) return fmt::format("{} is below the smallest value, {}", text, low);
        return "";
      },
      fmt::format("INT>={}", low));
}

CLI::Validator real_in(double low, bool low_open, double high, const char* what) {
  return CLI::Validator(
      [=](std::string& text) -> std::string {
        const auto v = parse_real(text);
        if (!v || *v < low || (low_open && *v == low) || *v > high) return fmt::format("'{}' is not {}", text, what);
        return "";
      },
      what);
}

CLI::Validator not_empty() {
  return CLI::Validator([](std::string& text) -> std::string { return text.empty() ? "must not be empty" : ""; },
                        "NOT EMPTY");
}

// Text that is printed on one line and stored (a release name): no newline, tab or other
// control character, which would split a summary line or a report's row.
CLI::Validator one_line_text() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        for (const char c : text) {
          const auto u = static_cast<unsigned char>(c);
          if (u < 0x20 || u == 0x7f) return "must be one line, without control characters";
        }
        return "";
      },
      "ONE LINE");
}

// A --filter: gtest-style globs, POS1:POS2:-NEG1:NEG2. One with no pattern at all ("", ":", "-")
// would select every case of the suite, which nobody typing a filter meant.
CLI::Validator filter_patterns() {
  return CLI::Validator(
      [](std::string& text) -> std::string {
        if (text.empty()) return "must not be empty (leave --filter out to run every case)";
        for (const char c : text) {
          if (c != ':' && c != '-') return "";
        }
        return fmt::format("'{}' holds no pattern (gtest-style globs: POS1:POS2:-NEG1:NEG2)", text);
      },
      "FILTER");
}

void visit(CLI::App& app, const std::function<void(CLI::App&)>& f) {
  f(app);
  for (CLI::App* sub : app.get_subcommands([](CLI::App*) { return true; })) visit(*sub, f);
}

}  // namespace

void add_value_checks(CLI::App& app) {
  const double kHuge = 1e12;
  const std::pair<const char*, CLI::Validator> by_name[] = {
      // Paths: an empty one is never meant (run --db "" would discard every result).
      {"--db", not_empty()},
      {"--into", not_empty()},
      {"--out", not_empty()},
      {"--store", not_empty()},
      {"--golden-store", not_empty()},
      {"--bundle", not_empty()},
      {"--suites-dir", not_empty()},
      {"--plan", not_empty()},
      {"--model", not_empty()},
      {"--suite", not_empty()},
      {"--junit", not_empty()},
      {"--markdown", not_empty()},
      {"--keys-file", not_empty()},
      // Time limits: zero, negative or not a number would disable them.
      {"--timeout", real_in(0, true, kHuge, "a positive number of seconds")},
      {"--collective-timeout", real_in(0, true, kHuge, "a positive number of seconds")},
      {"--store-timeout", real_in(0, true, kHuge, "a positive number of seconds")},
      {"--startup-timeout", real_in(0, true, kHuge, "a positive number of seconds")},
      // Counts.
      {"--workers", integer_at_least(0)},
      {"--retries", integer_at_least(0)},
      {"--reps", integer_at_least(0)},
      {"--warmup", integer_at_least(0)},
      {"--top", integer_at_least(0)},
      {"--compare-pairs", integer_at_least(1)},
      {"--grid-releases", integer_at_least(1)},
      {"--min-samples", integer_at_least(1)},
      {"--confirm-rounds", integer_at_least(1)},
      {"--shards", integer_at_least(1)},
      {"--repetitions", integer_at_least(1)},
      {"--max-failures", integer_at_least(1)},
      {"--rank", integer_at_least(0)},
      {"--max-candidates", integer_at_least(1)},
      // Run ids.
      {"--run-id", integer_at_least(1)},
      {"--resume", integer_at_least(1)},
      {"--run", integer_at_least(1)},
      // Fractions and factors.
      {"--min-ran", real_in(0, false, 1, "a fraction from 0 to 1")},
      {"--max-ran-drop", real_in(0, false, 1, "a fraction from 0 to 1")},
      {"--min-effect", real_in(0, false, kHuge, "a non-negative number")},
      {"--significance", real_in(0, true, 1, "a p-value above 0, at most 1")},
      {"--error-growth", real_in(1, false, kHuge, "a factor of at least 1")},
  };
  visit(app, [&](CLI::App& sub) {
    const std::string n = sub.get_name();
    if (n == "run") {  // every registered reporter's file (Note [Run reporters])
      for (const RunReporterEntry& e : run_reporters()) {
        if (CLI::Option* opt = sub.get_option_no_throw("--" + e.flag)) opt->check(not_empty());
      }
    }
    for (const auto& [name, check] : by_name) {
      CLI::Option* opt = sub.get_option_no_throw(name);
      if (!opt) continue;
      // golden build's --workers are threads, reduce's always processes: at least one.
      opt->check((n == "build" || n == "reduce") && std::string(name) == "--workers" ? integer_at_least(1) : check);
    }
    for (const char* name : {"--release", "--build-id"}) {
      if (CLI::Option* opt = sub.get_option_no_throw(name)) opt->check(one_line_text());
    }
    if (CLI::Option* opt = sub.get_option_no_throw("--filter")) opt->check(filter_patterns());
    // Options that take a value in these commands (a flag elsewhere): an empty value means nothing.
    if (n == "compare" || n == "report") {
      for (const char* name : {"--gate", "--json"}) {
        if (CLI::Option* opt = sub.get_option_no_throw(name)) opt->check(not_empty());
      }
    }
    // Options whose meaning differs between subcommands (compare's --history is a count, plan's a
    // database; bench's --min-time is seconds, run's milliseconds).
    if (CLI::Option* opt = sub.get_option_no_throw("--min-time")) {
      opt->check(real_in(0, n == "bench", kHuge,
                         n == "bench" ? "a positive number of seconds" : "a non-negative number of ms"));
    }
    if (CLI::Option* opt = sub.get_option_no_throw("--max-time"))
      opt->check(real_in(0, false, kHuge, "a non-negative number of ms"));
    if (CLI::Option* opt = sub.get_option_no_throw("--history")) {
      opt->check(n == "plan" ? not_empty() : integer_at_least(0));
    }
    if (CLI::Option* opt = sub.get_option_no_throw("--port")) {
      opt->check(CLI::Validator(
          [](std::string& text) -> std::string {
            const auto v = parse_integer(text);
            return v && *v >= 1 && *v <= 65535 ? "" : fmt::format("'{}' is not a port from 1 to 65535", text);
          },
          "PORT"));
    }
  });
}

void check_profile_name(const std::string& profile, const std::string& where) {
  const bool ok = !profile.empty() && std::all_of(profile.begin(), profile.end(), [](char c) {
    return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' || c == '.';
  });
  if (!ok) throw UsageError(where + " '" + one_line(profile) + "': use letters, digits, '_', '-' and '.' only");
}

}  // namespace gauntlet::cli
