#include "gauntlet/outcome.h"

#include <algorithm>
#include <cctype>
#include <iterator>

namespace gauntlet {

namespace {

// Indexed by Status; these spellings are stored in the database and printed in reports.
constexpr std::string_view kStatusNames[] = {"PASS",        "FAIL", "ERROR", "CRASH", "TIMEOUT",
                                             "UNSUPPORTED", "SKIP", "XFAIL", "XPASS"};
static_assert(std::size(kStatusNames) == std::size(kAllStatuses));

bool iequals(std::string_view a, std::string_view b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](char x, char y) {
    return std::toupper(static_cast<unsigned char>(x)) ==
           std::toupper(static_cast<unsigned char>(y));
  });
}

}  // namespace

std::string_view status_name(Status s) { return kStatusNames[static_cast<unsigned>(s)]; }

std::optional<Status> parse_status(std::string_view s) {
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

}  // namespace gauntlet
