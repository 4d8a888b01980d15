// Outcomes as JSON: `repro --json`, `show --json` and the worker protocol share these field
// names, which are the database's column names (docs/database.md).
#pragma once

#include <nlohmann/json.hpp>

#include "gauntlet/outcome.h"

namespace gauntlet {

inline constexpr int kJsonSchemaVersion = 1;

nlohmann::json to_json(const Outcome& o);
Outcome outcome_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

}  // namespace gauntlet
