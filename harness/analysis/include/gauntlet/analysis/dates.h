// Calendar dates as the reports use them: "YYYY-MM-DD" (UTC, the dates runs.started_at carry),
// days since 1970-01-01 in the proleptic Gregorian calendar (Howard Hinnant's civil-date
// algorithms), and ISO 8601 weeks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gauntlet::dates {

std::int64_t days_from_civil(std::int64_t y, unsigned m, unsigned d);
std::string civil_from_days(std::int64_t days);  // "YYYY-MM-DD"
// "YYYY-MM-DD" that names a day of the calendar -> days since the epoch; nullopt otherwise.
std::optional<std::int64_t> parse_date(const std::string& s);

struct IsoWeek {
  std::string name;    // "2026-W48"
  std::int64_t start;  // its Monday, days since the epoch
};
IsoWeek iso_week(std::int64_t days);

}  // namespace gauntlet::dates
