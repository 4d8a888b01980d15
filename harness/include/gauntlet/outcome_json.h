// Outcomes as JSON: `repro --json`, `show --json` and the worker protocol share these field
// names, which are the database's column names (docs/database.md).
#pragma once

#include <nlohmann/json.hpp>

#include "gauntlet/outcome.h"

namespace gauntlet {

inline constexpr int kJsonSchemaVersion = 1;

nlohmann::json to_json(const Outcome& o);
// JSON has no NaN or Infinity: non-finite numbers travel as the strings "nan", "inf", "-inf".
nlohmann::json json_number(double v);
double number_from_json(const nlohmann::json& j);
Outcome outcome_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

}  // namespace gauntlet
