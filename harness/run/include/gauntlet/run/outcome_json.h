// Outcomes as JSON: `repro --json`, `show --json` and the worker protocol share these field
// names, which are the database's column names (docs/database.md).
#pragma once

#include <nlohmann/json.hpp>

#include "gauntlet/base/outcome.h"

namespace gauntlet {

inline constexpr int kJsonSchemaVersion = 1;

nlohmann::json to_json(const Outcome& o);
// to_json(o) as compact text, written directly: what a worker sends after every case, where
// building the JSON tree cost more than a trivial case itself (ci/orchestrator_bench.sh).
std::string to_json_text(const Outcome& o);
// `s` as a JSON string literal, quotes included (invalid UTF-8 replaced, as to_json's dump does).
void append_json_string(std::string& out, std::string_view s);
// JSON has no NaN or Infinity: non-finite numbers travel as the strings "nan", "inf", "-inf".
nlohmann::json json_number(double v);
double number_from_json(const nlohmann::json& j);
Outcome outcome_from_json(const nlohmann::json& j);  // throws nlohmann::json::exception

}  // namespace gauntlet
