#include "gauntlet/outcome_json.h"

#include "gauntlet/error.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <cmath>
#include <iterator>
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
      {"cv", num(o.timing.cv)},
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
      {"algbw_gbps", o.algbw_gbps ? num(*o.algbw_gbps) : nlohmann::json(nullptr)},
      {"busbw_gbps", o.busbw_gbps ? num(*o.busbw_gbps) : nlohmann::json(nullptr)},
      {"graph_breaks", o.graph_breaks ? nlohmann::json(*o.graph_breaks) : nlohmann::json(nullptr)},
      {"recompiles", o.recompiles ? nlohmann::json(*o.recompiles) : nlohmann::json(nullptr)},
      {"regions", o.regions ? nlohmann::json(*o.regions) : nlohmann::json(nullptr)},
      {"compile_ms", o.compile_ms ? num(*o.compile_ms) : nlohmann::json(nullptr)},
      {"work_items", o.work_items},
      {"executed_ops", o.executed_ops},
  };
}

void append_json_string(std::string& out, std::string_view s) {
  if (std::any_of(s.begin(), s.end(), [](char c) { return static_cast<unsigned char>(c) >= 0x80; })) {
    out += nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  for (const char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<unsigned>(c));
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

namespace {

// Builds one JSON object field by field, in the order to_json() lists them.
class ObjectWriter {
 public:
  explicit ObjectWriter(std::string& out) : out_(out) { out_ += '{'; }
  ~ObjectWriter() { out_ += '}'; }
  void field(std::string_view name, std::string_view v) { append_json_string(name_(name), v); }
  void field(std::string_view name, const std::string& v) { field(name, std::string_view(v)); }
  void field(std::string_view name, const char* v) { field(name, std::string_view(v)); }
  void field(std::string_view name, bool v) { name_(name) += v ? "true" : "false"; }
  void field(std::string_view name, int v) { fmt::format_to(std::back_inserter(name_(name)), "{}", v); }
  void field(std::string_view name, std::int64_t v) { fmt::format_to(std::back_inserter(name_(name)), "{}", v); }
  void field(std::string_view name, double v) { number(name_(name), v); }
  void field(std::string_view name, const std::vector<std::string>& v) {
    std::string& o = name_(name);
    o += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) o += ',';
      append_json_string(o, v[i]);
    }
    o += ']';
  }
  void field(std::string_view name, const std::vector<double>& v) {
    std::string& o = name_(name);
    o += '[';
    for (std::size_t i = 0; i < v.size(); ++i) {
      if (i) o += ',';
      number(o, v[i]);
    }
    o += ']';
  }
  void null(std::string_view name) { name_(name) += "null"; }

 private:
  std::string& name_(std::string_view name) {
    if (!first_) out_ += ',';
    first_ = false;
    append_json_string(out_, name);
    out_ += ':';
    return out_;
  }
  // As json_number(): non-finite values travel as strings; finite ones in the shortest form that
  // reads back to the same double.
  static void number(std::string& o, double v) {
    if (std::isnan(v)) {
      o += "\"nan\"";
    } else if (std::isinf(v)) {
      o += v > 0 ? "\"inf\"" : "\"-inf\"";
    } else if (v == 0 && std::signbit(v)) {
      o += "-0.0";  // "-0" would read back as the integer 0 (found by fuzzing the worker protocol)
    } else {
      fmt::format_to(std::back_inserter(o), "{}", v);
    }
  }
  std::string& out_;
  bool first_ = true;
};

}  // namespace

std::string to_json_text(const Outcome& o) {
  const Metrics& m = o.metrics;
  std::string out;
  out.reserve(768 + o.error.size());
  {
    ObjectWriter w(out);
    w.field("key", o.key);
    w.field("status", status_name(o.status));
    w.field("attempt", o.attempt);
    w.field("rtol", o.rtol);
    w.field("atol", o.atol);
    w.field("tolerance_profile", o.tolerance_profile);
    w.field("max_abs_err", m.max_abs_err);
    w.field("max_rel_err", m.max_rel_err);
    w.field("mismatches", m.mismatches);
    w.field("numel", m.numel);
    w.field("mismatch_frac", m.mismatch_frac());
    w.field("max_ulp", m.max_ulp);
    w.field("nan_inf_ok", m.nan_inf_ok);
    w.field("worst", m.worst);
    w.field("error", o.error);
    w.field("reason", o.reason);
    w.field("first_us", o.timing.first_us);
    w.field("median_us", o.timing.median_us);
    w.field("p10_us", o.timing.p10_us);
    w.field("p90_us", o.timing.p90_us);
    w.field("cv", o.timing.cv);
    w.field("reps", o.timing.reps);
    w.field("peak_mem_bytes", o.peak_mem_bytes);
    w.field("fallback_ops", o.fallback_ops);
    w.field("golden_source", o.golden_source);
    w.field("golden_entry", o.golden_entry);
    w.field("golden_us", o.timing.golden_us);
    if (o.sim_time_us) {
      w.field("sim_time_us", *o.sim_time_us);
    } else {
      w.null("sim_time_us");
    }
    w.field("device_slot", o.device_slot);
    w.field("flaky", o.flaky);
    w.field("samples_us", o.timing.samples_us);
    w.field("work_items", o.work_items);
    w.field("executed_ops", o.executed_ops);
    for (const auto& [name, value] : {std::pair{"graph_breaks", o.graph_breaks}, std::pair{"recompiles", o.recompiles},
                                      std::pair{"regions", o.regions}}) {
      if (value) {
        w.field(name, *value);
      } else {
        w.null(name);
      }
    }
    for (const auto& [name, value] : {std::pair{"algbw_gbps", o.algbw_gbps}, std::pair{"busbw_gbps", o.busbw_gbps},
                                      std::pair{"compile_ms", o.compile_ms}}) {
      if (value) {
        w.field(name, *value);
      } else {
        w.null(name);
      }
    }
  }
  return out;
}

Outcome outcome_from_json(const nlohmann::json& j) {
  Outcome o;
  o.key = j.at("key").get<std::string>();
  auto st = parse_status(j.at("status").get<std::string>());
  if (!st) throw std::invalid_argument("unknown status " + one_line(j.at("status").get<std::string>()));
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
  if (j.contains("cv")) o.timing.cv = num_of(j.at("cv"));
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
  if (j.contains("algbw_gbps") && !j.at("algbw_gbps").is_null()) o.algbw_gbps = num_of(j.at("algbw_gbps"));
  if (j.contains("busbw_gbps") && !j.at("busbw_gbps").is_null()) o.busbw_gbps = num_of(j.at("busbw_gbps"));
  if (j.contains("compile_ms") && !j.at("compile_ms").is_null()) o.compile_ms = num_of(j.at("compile_ms"));
  o.work_items = j.value("work_items", std::int64_t{0});
  o.executed_ops = j.value("executed_ops", std::vector<std::string>{});
  for (auto [name, field] : {std::pair{"graph_breaks", &o.graph_breaks}, std::pair{"recompiles", &o.recompiles},
                             std::pair{"regions", &o.regions}}) {
    if (j.contains(name) && !j.at(name).is_null()) *field = j.at(name).get<std::int64_t>();
  }
  return o;
}

}  // namespace gauntlet

namespace gauntlet {

namespace {

using simdjson::dom::element;

[[noreturn]] void bad_field(std::string_view name, const char* why) {
  throw std::runtime_error(fmt::format("outcome field {}: {}", one_line(name), why));
}

double dom_number(std::string_view name, element e) {
  if (double d; e.get_double().get(d) == simdjson::SUCCESS) return d;
  if (std::int64_t i; e.get_int64().get(i) == simdjson::SUCCESS) return static_cast<double>(i);
  if (std::uint64_t u; e.get_uint64().get(u) == simdjson::SUCCESS) return static_cast<double>(u);
  if (std::string_view s; e.get_string().get(s) == simdjson::SUCCESS) {
    if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
    if (s == "inf") return std::numeric_limits<double>::infinity();
    if (s == "-inf") return -std::numeric_limits<double>::infinity();
  }
  bad_field(name, "not a number");
}
std::int64_t dom_int(std::string_view name, element e) {
  if (std::int64_t i; e.get_int64().get(i) == simdjson::SUCCESS) return i;
  bad_field(name, "not an integer");
}
std::string dom_string(std::string_view name, element e) {
  if (std::string_view s; e.get_string().get(s) == simdjson::SUCCESS) return std::string(s);
  bad_field(name, "not a string");
}
bool dom_bool(std::string_view name, element e) {
  if (bool b; e.get_bool().get(b) == simdjson::SUCCESS) return b;
  bad_field(name, "not a boolean");
}

// The fields outcome_from_json() reads, with the same defaults.
Outcome outcome_from_dom(simdjson::dom::object obj) {
  Outcome o;
  bool has_status = false;
  for (auto [name, v] : obj) {
    if (name == "key") o.key = dom_string(name, v);
    else if (name == "status") {
      const std::string st = dom_string(name, v);
      const auto parsed = parse_status(st);
      if (!parsed) throw std::runtime_error("unknown status " + one_line(st));  // a worker's bytes: one line
      o.status = *parsed;
      has_status = true;
    } else if (name == "attempt") o.attempt = static_cast<int>(dom_int(name, v));
    else if (name == "rtol") o.rtol = dom_number(name, v);
    else if (name == "atol") o.atol = dom_number(name, v);
    else if (name == "tolerance_profile") o.tolerance_profile = dom_string(name, v);
    else if (name == "max_abs_err") o.metrics.max_abs_err = dom_number(name, v);
    else if (name == "max_rel_err") o.metrics.max_rel_err = dom_number(name, v);
    else if (name == "mismatches") o.metrics.mismatches = dom_int(name, v);
    else if (name == "numel") o.metrics.numel = dom_int(name, v);
    else if (name == "max_ulp") o.metrics.max_ulp = dom_number(name, v);
    else if (name == "nan_inf_ok") o.metrics.nan_inf_ok = dom_bool(name, v);
    else if (name == "worst") o.metrics.worst = dom_string(name, v);
    else if (name == "error") o.error = dom_string(name, v);
    else if (name == "reason") o.reason = dom_string(name, v);
    else if (name == "first_us") o.timing.first_us = dom_number(name, v);
    else if (name == "median_us") o.timing.median_us = dom_number(name, v);
    else if (name == "p10_us") o.timing.p10_us = dom_number(name, v);
    else if (name == "p90_us") o.timing.p90_us = dom_number(name, v);
    else if (name == "cv") o.timing.cv = dom_number(name, v);
    else if (name == "reps") o.timing.reps = static_cast<int>(dom_int(name, v));
    else if (name == "peak_mem_bytes") o.peak_mem_bytes = dom_int(name, v);
    else if (name == "work_items") o.work_items = dom_int(name, v);
    else if (name == "golden_source") o.golden_source = dom_string(name, v);
    else if (name == "golden_entry") o.golden_entry = dom_string(name, v);
    else if (name == "golden_us") o.timing.golden_us = dom_number(name, v);
    else if (name == "sim_time_us") {
      if (!v.is_null()) o.sim_time_us = dom_number(name, v);
    } else if (name == "algbw_gbps") {
      if (!v.is_null()) o.algbw_gbps = dom_number(name, v);
    } else if (name == "busbw_gbps") {
      if (!v.is_null()) o.busbw_gbps = dom_number(name, v);
    } else if (name == "compile_ms") {
      if (!v.is_null()) o.compile_ms = dom_number(name, v);
    } else if (name == "graph_breaks") {
      if (!v.is_null()) o.graph_breaks = dom_int(name, v);
    } else if (name == "recompiles") {
      if (!v.is_null()) o.recompiles = dom_int(name, v);
    } else if (name == "regions") {
      if (!v.is_null()) o.regions = dom_int(name, v);
    } else if (name == "device_slot") o.device_slot = dom_string(name, v);
    else if (name == "flaky") o.flaky = dom_bool(name, v);
    else if (name == "fallback_ops" || name == "samples_us" || name == "executed_ops") {
      simdjson::dom::array items;
      if (v.get_array().get(items) != simdjson::SUCCESS) bad_field(name, "not an array");
      for (element item : items) {
        if (name == "fallback_ops") o.fallback_ops.push_back(dom_string(name, item));
        else if (name == "executed_ops") o.executed_ops.push_back(dom_string(name, item));
        else o.timing.samples_us.push_back(dom_number(name, item));
      }
    }
    // mismatch_frac is derived; unknown fields are ignored, as outcome_from_json does.
  }
  if (!has_status) throw std::runtime_error("outcome has no status");
  return o;
}

}  // namespace

WorkerMessage parse_worker_message(std::string_view line) {
  thread_local simdjson::dom::parser parser;
  WorkerMessage m;
  simdjson::dom::object obj;
  if (parser.parse(line.data(), line.size()).get(obj) != simdjson::SUCCESS) return m;
  std::string_view type;
  if (obj["type"].get_string().get(type) != simdjson::SUCCESS) return m;
  m.type = std::string(type);
  std::string_view text;
  if (obj["key"].get_string().get(text) == simdjson::SUCCESS) m.key = std::string(text);
  if (obj["error"].get_string().get(text) == simdjson::SUCCESS) m.error = std::string(text);
  if (m.type == "result") {
    simdjson::dom::object outcome;
    if (obj["outcome"].get_object().get(outcome) != simdjson::SUCCESS) {
      throw std::runtime_error("result without an outcome object");
    }
    m.outcome = outcome_from_dom(outcome);
  }
  return m;
}

}  // namespace gauntlet
