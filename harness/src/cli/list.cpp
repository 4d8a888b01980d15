// gauntlet list: cases of a suite, the op table, or the suites.
#include <fmt/format.h>

#include <iostream>
#include <nlohmann/json.hpp>

#include "cli.h"
#include "gauntlet/coll_spec.h"
#include "gauntlet/models.h"
#include "gauntlet/catalog.h"
#include "gauntlet/op_spec.h"
#include "gauntlet/outcome_json.h"

namespace gauntlet::cli {

namespace {

std::string inputs_str(const OpSpec& op) {
  std::string out;
  for (const auto& in : op.inputs) {
    if (!out.empty()) out += ',';
    out += in.name;
    if (in.optional) out += '?';
  }
  return out;
}

std::string args_str(const OpSpec& op) {
  std::string out;
  for (const auto& a : op.args) {
    if (!out.empty()) out += ',';
    out += a.name + "=" + a.default_value;
  }
  return out.empty() ? "-" : out;
}

int list_ops(bool json) {
  auto ops = all_ops();
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const OpSpec* op : ops) {
      arr.push_back({{"name", op->name}, {"aten", op->aten}, {"family", op->family},
                     {"dtypes", dtype_set_str(op->dtypes)}, {"inputs", inputs_str(*op)},
                     {"args", args_str(*op)}, {"backward", op->has_backward},
                     {"deterministic", op->deterministic}, {"special_values", op->special_values},
                     {"note", op->note}});
    }
    std::cout << nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"ops", arr}}.dump(1) << "\n";
    return 0;
  }
  for (const OpSpec* op : ops) {
    fmt::print("{:<32} {:<36} {:<14} {:<3} dtypes={} inputs={} args={}\n", op->name, op->aten, op->family,
               op->has_backward ? "bwd" : "-", dtype_set_str(op->dtypes), inputs_str(*op), args_str(*op));
  }
  return 0;
}

int list_colls(bool json) {
  nlohmann::json arr = nlohmann::json::array();
  for (const CollSpec* c : all_colls()) {
    const std::string ops = c->reduce_ops.empty() ? "-" : fmt::format("{}", fmt::join(c->reduce_ops, ","));
    std::string args = c->reduce_ops.empty() ? "" : "op=" + ops;
    if (c->has_root) args = "root=0";
    if (c->has_split) args = "split=even|uneven";
    if (json) {
      arr.push_back({{"name", c->name}, {"c10d", c->c10d}, {"reduce_ops", c->reduce_ops}, {"chunked", c->chunked},
                     {"dtypes", dtype_set_str(c->dtypes)}, {"bus_factor_w4", c->bus_factor(4)}, {"note", c->note}});
    } else {
      fmt::print("{:<16} {:<14} dtypes={} args={}{}  {}\n", c->name, c->c10d, dtype_set_str(c->dtypes),
                 args.empty() ? "-" : args, c->chunked ? " size%world==0" : "", c->note);
    }
  }
  if (json) std::cout << nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"colls", arr}}.dump(1) << "\n";
  return 0;
}

int list_models(bool json) {
  nlohmann::json arr = nlohmann::json::array();
  for (const ModelSpec& m : model_catalog().models) {
    if (json) {
      arr.push_back({{"name", m.name}, {"configs", m.config_names()}, {"dtypes", m.dtypes}, {"trainable", m.trainable},
                     {"ops", m.ops}, {"file", m.path}, {"description", m.description}});
    } else {
      fmt::print("{:<22} configs={} dtypes={} {}  {}\n", m.name, fmt::join(m.config_names(), ","), fmt::join(m.dtypes, ","),
                 m.trainable ? "train" : "infer", m.description);
    }
  }
  if (json) std::cout << nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"models", arr}}.dump(1) << "\n";
  return 0;
}

}  // namespace

int list(const ListOptions& o) {
  const std::string dir = suites_dir_or_default(o.suites_dir);
  if (o.ops) return list_ops(o.json);
  if (o.colls) return list_colls(o.json);
  if (o.models) return list_models(o.json);
  if (o.suites) {
    for (const auto& name : list_suites(dir)) {
      Suite s = load_suite(name, dir);
      fmt::print("{:<14} {:>8} cases  {}\n", s.name, s.cases.size(), s.description);
    }
    return 0;
  }
  if (o.suite.empty()) throw UsageError("list needs --suite NAME, --ops or --suites");
  Suite suite = load_suite(o.suite, dir);
  std::vector<const Case*> cases;
  try {
    cases = select_cases(suite, o.filter, o.shard);
  } catch (const UsageError&) {
    if (o.filter.empty()) throw;  // an empty suite or a bad shard
    // Listing what a filter matches may rightly find nothing.
  }
  if (o.count) {
    if (o.json) {
      std::cout << nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"suite", suite.name}, {"count", cases.size()}}.dump() << "\n";
    } else {
      fmt::print("{}\n", cases.size());
    }
    return 0;
  }
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const Case* c : cases) arr.push_back({{"key", c->text}, {"id", fmt::format("{:016x}", c->id)}});
    std::cout << nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"suite", suite.name}, {"cases", arr}}.dump(1) << "\n";
    return 0;
  }
  std::string out;
  for (const Case* c : cases) {
    out += c->text;
    out += '\n';
  }
  std::fwrite(out.data(), 1, out.size(), stdout);
  return 0;
}

}  // namespace gauntlet::cli
