#include "gauntlet/analysis/dates.h"

#include <fmt/format.h>

namespace gauntlet::dates {

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d) {
  y -= m <= 2;
  const std::int64_t era = (y >= 0 ? y : y - 399) / 400;
  const auto yoe = static_cast<unsigned>(y - era * 400);
  const unsigned doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const unsigned doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + static_cast<std::int64_t>(doe) - 719468;
}

namespace {

struct Civil {
  std::int64_t y;
  unsigned m, d;
};

Civil civil(std::int64_t z) {
  z += 719468;
  const std::int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const auto doe = static_cast<unsigned>(z - era * 146097);
  const unsigned yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const unsigned doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const unsigned mp = (5 * doy + 2) / 153;
  const unsigned d = doy - (153 * mp + 2) / 5 + 1;
  const unsigned m = mp < 10 ? mp + 3 : mp - 9;
  return {static_cast<std::int64_t>(yoe) + era * 400 + (m <= 2), m, d};
}

}  // namespace

std::string civil_from_days(std::int64_t days) {
  const Civil c = civil(days);
  return fmt::format("{:04d}-{:02d}-{:02d}", c.y, c.m, c.d);
}

std::optional<std::int64_t> parse_date(const std::string& s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return std::nullopt;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9}) {
    if (s[i] < '0' || s[i] > '9') return std::nullopt;
  }
  const int y = std::stoi(s.substr(0, 4));
  const auto m = static_cast<unsigned>(std::stoi(s.substr(5, 2)));
  const auto d = static_cast<unsigned>(std::stoi(s.substr(8, 2)));
  if (m < 1 || m > 12 || d < 1) return std::nullopt;
  constexpr unsigned kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  const bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  if (d > kDays[m - 1] + (m == 2 && leap)) return std::nullopt;
  return days_from_civil(y, m, d);
}

// ISO 8601: weeks start on Monday, and week 1 of a year is the week holding its first Thursday;
// so a week belongs to the year of its Thursday. 1970-01-01 was a Thursday.
IsoWeek iso_week(std::int64_t days) {
  const std::int64_t weekday = ((days + 3) % 7 + 7) % 7;  // Monday = 0
  const std::int64_t monday = days - weekday;
  const std::int64_t thursday = monday + 3;
  const std::int64_t year = civil(thursday).y;
  const std::int64_t week = (thursday - days_from_civil(year, 1, 1)) / 7 + 1;
  return {fmt::format("{:04d}-W{:02d}", year, week), monday};
}

}  // namespace gauntlet::dates
