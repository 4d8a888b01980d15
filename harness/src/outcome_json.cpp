#include "gauntlet/outcome_json.h"

#include <cmath>
#include <limits>

namespace gauntlet {

nlohmann::json json_number(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  return v;
}
double number_from_json(const nlohmann::json& j) {
  if (j.is_string()) {
    const auto& s = j.get_ref<const std::string&>();
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    return s == "-inf" ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  }
  return j.get<double>();
}

namespace {
nlohmann::json num(double v) { return json_number(v); }
double num_of(const nlohmann::json& j) { return number_from_json(j); }
}  // namespace

nlohmann::json to_json(const Outcome& o) {
  const Metrics& m = o.metrics;
  return {
      {"key", o.key},
      {"status", status_name(o.status)},
      {"attempt", o.attempt},
      {"rtol", num(o.rtol)},
      {"atol", num(o.atol)},
      {"tolerance_profile", o.tolerance_profile},
      {"max_abs_err", num(m.max_abs_err)},
      {"max_rel_err", num(m.max_rel_err)},
      {"mismatches", m.mismatches},
      {"numel", m.numel},
      {"mismatch_frac", num(m.mismatch_frac())},
      {"max_ulp", num(m.max_ulp)},
      {"nan_inf_ok", m.nan_inf_ok},
      {"worst", m.worst},
      {"error", o.error},
      {"reason", o.reason},
      {"first_us", num(o.timing.first_us)},
      {"median_us", num(o.timing.median_us)},
      {"p10_us", num(o.timing.p10_us)},
      {"p90_us", num(o.timing.p90_us)},
      {"reps", o.timing.reps},
      {"peak_mem_bytes", o.peak_mem_bytes},
      {"fallback_ops", o.fallback_ops},
      {"golden_source", o.golden_source},
      {"golden_entry", o.golden_entry},
      {"golden_us", num(o.timing.golden_us)},
      {"sim_time_us", o.sim_time_us ? num(*o.sim_time_us) : nlohmann::json(nullptr)},
      {"device_slot", o.device_slot},
      {"flaky", o.flaky},
      {"samples_us", o.timing.samples_us},
  };
}

Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  o.key = j.at("key").get<std::string>();
  auto st = parse_status(j.at("status").get<std::string>());
  if (!st) throw std::invalid_argument("unknown status " + j.at("status").get<std::string>());
  o.status = *st;
  o.attempt = j.value("attempt", 1);
  o.rtol = num_of(j.at("rtol"));
  o.atol = num_of(j.at("atol"));
  o.tolerance_profile = j.value("tolerance_profile", "");
  o.metrics.max_abs_err = num_of(j.at("max_abs_err"));
  o.metrics.max_rel_err = num_of(j.at("max_rel_err"));
  o.metrics.mismatches = j.at("mismatches").get<std::int64_t>();
  o.metrics.numel = j.at("numel").get<std::int64_t>();
  o.metrics.max_ulp = num_of(j.at("max_ulp"));
  o.metrics.nan_inf_ok = j.at("nan_inf_ok").get<bool>();
  o.metrics.worst = j.value("worst", "");
  o.error = j.value("error", "");
  o.reason = j.value("reason", "");
  o.timing.first_us = num_of(j.at("first_us"));
  o.timing.median_us = num_of(j.at("median_us"));
  o.timing.p10_us = num_of(j.at("p10_us"));
  o.timing.p90_us = num_of(j.at("p90_us"));
  o.timing.reps = j.value("reps", 0);
  o.peak_mem_bytes = j.value("peak_mem_bytes", std::int64_t{0});
  o.fallback_ops = j.value("fallback_ops", std::vector<std::string>{});
  o.golden_source = j.value("golden_source", std::string("computed"));
  o.golden_entry = j.value("golden_entry", std::string());
  o.timing.golden_us = j.contains("golden_us") ? num_of(j.at("golden_us")) : 0.0;
  if (j.contains("sim_time_us") && !j.at("sim_time_us").is_null()) o.sim_time_us = num_of(j.at("sim_time_us"));
  o.device_slot = j.value("device_slot", std::string());
  o.flaky = j.value("flaky", false);
  o.timing.samples_us = j.value("samples_us", std::vector<double>{});
  return o;
}

}  // namespace gauntlet
