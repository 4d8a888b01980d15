// Expectations and tolerances (expectations.yaml, tolerances.yaml): what a case is expected to do
// on a backend, and how close its outputs must be to the golden.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "catalog_yaml.h"
#include "gauntlet/base/glob.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet {

namespace fs = std::filesystem;

using catalog_yaml::Reader;

Expectations Expectations::load(const std::string& file) {
  Expectations ex;
  if (!fs::exists(file)) return ex;
  Reader r(file);
  YAML::Node root = r.load();
  if (root.IsNull()) return ex;
  r.only_fields(root, {"skip", "xfail"}, "an expectations file");
  for (const char* section : {"skip", "xfail"}) {
    for (const YAML::Node& e : r.entries(root[section], section)) {
      r.only_fields(e, {"match", "backend", "reason", "strict"}, "an expectation entry");
      if (!e["match"]) r.fail(e, fmt::format("{} entry without 'match'", section));
      if (!e["reason"] || r.scalar(e["reason"], "reason").empty()) {
        r.fail(e, fmt::format("{} entry without a reason (every skip and xfail needs one)", section));
      }
      Entry en;
      en.kind = std::string(section) == "skip" ? Expect::Skip : Expect::XFail;
      en.matches = r.list(e["match"], "match");
      if (e["backend"]) en.backends = r.list(e["backend"], "backend");
      en.reason = r.scalar(e["reason"], "reason");
      en.source = r.where(e);
      if (e["strict"]) {
        const std::string v = r.scalar(e["strict"], "strict");
        if (v != "0" && v != "1") r.fail(e["strict"], "strict is true or false");
        if (en.kind == Expect::Skip) r.fail(e["strict"], "strict applies to xfail entries only");
        en.strict = v == "1";
      }
      ex.entries_.push_back(std::move(en));
    }
  }
  return ex;
}

Expectation Expectations::lookup(const std::string& key, const std::string& backend) const {
  for (const auto& e : entries_) {
    if (!e.backends.empty() && std::find(e.backends.begin(), e.backends.end(), backend) == e.backends.end()) continue;
    for (const auto& m : e.matches) {
      if (glob_match(m, key)) return {e.kind, e.reason, e.source, e.strict};
    }
  }
  return {};
}

ToleranceTable ToleranceTable::load(const std::string& file) {
  ToleranceTable t;
  if (!fs::exists(file)) return t;
  Reader r(file);
  YAML::Node root = r.load();
  if (root.IsNull()) return t;
  r.only_fields(root, {"rules"}, "a tolerances file");
  for (const YAML::Node& n : r.entries(root["rules"], "rules")) {
    r.only_fields(n, {"ops", "families", "dtypes", "modes", "backend", "rtol", "atol", "atol_per_sqrt_k", "why"},
                  "a tolerance rule");
    Rule rule;
    if (n["ops"]) {
      rule.ops = r.list(n["ops"], "ops");
      for (const auto& o : rule.ops) {
        if (!find_op(o)) r.fail(n["ops"], unknown_op_message(o));
      }
    }
    if (n["families"]) {
      rule.families = r.list(n["families"], "families");
      for (const auto& f : rule.families) {
        const auto ops = all_ops();
        // The case kinds are families of their own: `model`, `coll`; model files' cases are
        // `model_file` (Note [Output quality]).
        if (f == "model" || f == "coll" || f == "model_file") continue;
        if (std::none_of(ops.begin(), ops.end(), [&](const OpSpec* o) { return o->family == f; })) {
          r.fail(n["families"], "unknown op family '" + f + "'");
        }
      }
    }
    if (n["dtypes"]) {
      rule.dtypes = r.list(n["dtypes"], "dtypes");
      for (const auto& d : rule.dtypes) {
        if (!parse_dtype(d)) r.fail(n["dtypes"], "unknown dtype '" + d + "'");
      }
    }
    if (n["modes"]) {
      rule.modes = r.list(n["modes"], "modes");
      for (const auto& m : rule.modes) {
        if (m != mode_name(Mode::Eager) && m != mode_name(Mode::EagerBwd) && m != mode_name(Mode::Compile))
          r.fail(n["modes"], "unknown mode '" + m + "'");
      }
    }
    if (n["backend"]) rule.backends = r.list(n["backend"], "backend");
    try {
      if (n["rtol"]) rule.rtol = n["rtol"].as<double>();
      if (n["atol"]) rule.atol = n["atol"].as<double>();
      if (n["atol_per_sqrt_k"]) rule.atol_per_sqrt_k = n["atol_per_sqrt_k"].as<double>();
    } catch (const YAML::Exception&) {
      r.fail(n, "rtol, atol and atol_per_sqrt_k must be numbers");
    }
    for (const char* f : {"rtol", "atol", "atol_per_sqrt_k"}) {
      const std::string field = f;
      const std::optional<double>& v = field == "rtol" ? rule.rtol : field == "atol" ? rule.atol : rule.atol_per_sqrt_k;
      if (v && !(std::isfinite(*v) && *v >= 0)) r.fail(n[f], fmt::format("{} must be a finite number >= 0", f));
    }
    if (!rule.rtol && !rule.atol && !rule.atol_per_sqrt_k) {
      r.fail(n, "a tolerance rule needs rtol, atol and/or atol_per_sqrt_k");
    }
    rule.source = r.where(n);
    t.rules_.push_back(std::move(rule));
  }
  return t;
}

Tolerance ToleranceTable::lookup(const CaseKey& key, DType output_dtype, const std::string& backend) const {
  Tolerance tol = default_tolerance(output_dtype);
  if (!is_floating(output_dtype)) return tol;  // integer and bool outputs are always exact
  const OpSpec* op = find_op(key.target);
  auto in = [](const std::vector<std::string>& list, std::string_view v) {
    return list.empty() || std::find(list.begin(), list.end(), v) != list.end();
  };
  double per_sqrt_k = 0;
  for (const auto& rule : rules_) {
    if (!rule.backends.empty() && std::find(rule.backends.begin(), rule.backends.end(), backend) == rule.backends.end())
      continue;
    if (!in(rule.ops, key.target)) continue;
    // Model files (Note [Output quality]) have rules of their own: their rtol is a fraction of
    // each output's scale, not an element tolerance.
    const std::string family = key.kind == "op"                                          ? (op ? op->family : "")
                               : key.kind == "model" && is_model_file_target(key.target) ? "model_file"
                                                                                         : key.kind;
    if (!in(rule.families, family)) continue;
    if (!in(rule.dtypes, dtype_name(output_dtype))) continue;
    if (!in(rule.modes, key.mode_text())) continue;
    if (rule.rtol) tol.rtol = *rule.rtol;
    if (rule.atol) tol.atol = *rule.atol;
    if (rule.atol_per_sqrt_k) per_sqrt_k = *rule.atol_per_sqrt_k;
    tol.source = rule.source;
  }
  // Note [Contraction length]: a K-term sum of rounded products errs by O(sqrt(K)); where the
  // rules scale atol with it and that exceeds their plain atol, the source says so.
  if (per_sqrt_k > 0) {
    const std::int64_t k = contraction_length(key);
    const double scaled = per_sqrt_k * std::sqrt(static_cast<double>(k));
    if (scaled > tol.atol) {
      tol.atol = scaled;
      tol.source += fmt::format(" (atol {:g} x sqrt(K = {}))", per_sqrt_k, k);
    }
  }
  return tol;
}

}  // namespace gauntlet
