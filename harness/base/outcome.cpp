#include "gauntlet/base/outcome.h"

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cmath>
#include <iterator>

namespace gauntlet {

namespace {

// Indexed by Status; these spellings are stored in the database and printed in reports.
constexpr std::string_view kStatusNames[] = {"PASS",        "FAIL", "ERROR", "CRASH", "TIMEOUT",
                                             "UNSUPPORTED", "SKIP", "XFAIL", "XPASS"};
static_assert(std::size(kStatusNames) == std::size(kAllStatuses));

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::toupper(static_cast<unsigned char>(x)) == std::toupper(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::string_view status_name(Status s) { return kStatusNames[static_cast<unsigned>(s)]; }

std::optional<Status> parse_status(std::string_view s) {
  // The stored spelling first: every stored result's status is read through here.
  for (Status status : kAllStatuses) {
    if (s == status_name(status)) return status;
  }
  for (Status status : kAllStatuses) {
    if (iequals(s, status_name(status))) {
      return status;
    }
  }
  return std::nullopt;
}

bool is_failure(Status s) {
  switch (s) {
    case Status::Fail:
    case Status::Error:
    case Status::Crash:
    case Status::Timeout:
    case Status::XPass:  // an expected failure that passes means the catalog is stale
      return true;
    case Status::Pass:
    case Status::Unsupported:
    case Status::Skip:
    case Status::XFail:
      return false;
  }
  return false;
}

void record_repetitions(Timing& t, std::vector<double> samples_us) {
  t.samples_us = std::move(samples_us);
  t.reps = static_cast<int>(t.samples_us.size());
  t.cv = 0;
  if (t.samples_us.empty()) {
    t.median_us = t.p10_us = t.p90_us = t.first_us;
    return;
  }
  std::vector<double> sorted = t.samples_us;
  std::sort(sorted.begin(), sorted.end());
  auto at = [&](double q) {
    // A nonnegative index rounded half up, as every stored result was.
    // NOLINTNEXTLINE(bugprone-incorrect-roundings)
    return sorted[static_cast<std::size_t>(q * static_cast<double>(sorted.size() - 1) + 0.5)];
  };
  t.median_us = at(0.5);
  t.p10_us = at(0.1);
  t.p90_us = at(0.9);
  if (sorted.size() >= 2) {
    double mean = 0;
    for (double x : sorted) mean += x;
    mean /= static_cast<double>(sorted.size());
    double ss = 0;
    for (double x : sorted) ss += (x - mean) * (x - mean);
    if (mean > 0) t.cv = std::sqrt(ss / static_cast<double>(sorted.size() - 1)) / mean;
  }
}

void bound_error_text(std::string& text) {
  if (text.size() <= kMaxErrorBytes) return;
  if (const std::size_t mark = text.find(kStderrMark); mark != std::string::npos && mark < kMaxErrorBytes / 2) {
    // Keep the head and the end of the stderr tail (Note [Bounded error texts]).
    const std::size_t head = mark + kStderrMark.size();
    const std::string note = "[" + std::to_string(text.size() - head) + " bytes of stderr, cut to its end]\n";
    std::size_t from = text.size() - (kMaxErrorBytes - head - note.size());
    while (from < text.size() && (static_cast<unsigned char>(text[from]) & 0xC0) == 0x80) ++from;  // UTF-8
    if (const std::size_t nl = text.find('\n', from); nl != std::string::npos && nl + 1 < text.size()) from = nl + 1;
    text = text.substr(0, head) + note + text.substr(from);
    return;
  }
  const std::string suffix_fmt = " ... [" + std::to_string(text.size()) + " bytes, cut]";
  std::size_t keep = kMaxErrorBytes - suffix_fmt.size();
  while (keep > 0 && (static_cast<unsigned char>(text[keep]) & 0xC0) == 0x80) --keep;  // a UTF-8 boundary
  text.resize(keep);
  text += suffix_fmt;
}

std::string executed_op_text(const ExecutedOp& e) { return e.op + "\t" + e.inputs + "\t" + std::to_string(e.calls); }

std::optional<ExecutedOp> parse_executed_op(std::string_view record) {
  const std::size_t a = record.find('\t');
  const std::size_t b = record.rfind('\t');
  if (a == std::string_view::npos || a == b || a == 0) return std::nullopt;
  ExecutedOp e;
  e.op = std::string(record.substr(0, a));
  e.inputs = std::string(record.substr(a + 1, b - a - 1));
  const std::string_view calls = record.substr(b + 1);
  auto [p, ec] = std::from_chars(calls.data(), calls.data() + calls.size(), e.calls);
  if (ec != std::errc() || p != calls.data() + calls.size() || e.calls < 1) return std::nullopt;
  return e;
}

}  // namespace gauntlet
