// What `gauntlet list` shows of the catalogs (gauntlet/core/catalog/listing.h).
#include "gauntlet/core/catalog/listing.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/core/catalog/ops_from_models.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/models/models.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/selection.h"
#include "gauntlet/suites/coll_spec.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet {

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

}  // namespace

std::string ops_listing(bool json) {
  std::string out;
  auto ops = all_ops();
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const OpSpec* op : ops) {
      arr.push_back({{"name", op->name},
                     {"aten", op->aten},
                     {"family", op->family},
                     {"dtypes", dtype_set_str(op->dtypes)},
                     {"inputs", inputs_str(*op)},
                     {"args", args_str(*op)},
                     {"backward", op->has_backward},
                     {"deterministic", op->deterministic},
                     {"special_values", op->special_values},
                     {"note", op->note}});
    }
    out += nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"ops", arr}}.dump(1) + "\n";
    return out;
  }
  for (const OpSpec* op : ops) {
    out += fmt::format("{:<32} {:<36} {:<14} {:<3} dtypes={} inputs={} args={}\n", op->name, op->aten, op->family,
                       op->has_backward ? "bwd" : "-", dtype_set_str(op->dtypes), inputs_str(*op), args_str(*op));
  }
  return out;
}

std::string colls_listing(bool json) {
  std::string out;
  nlohmann::json arr = nlohmann::json::array();
  for (const CollSpec* c : all_colls()) {
    const std::string ops = c->reduce_ops.empty() ? "-" : fmt::format("{}", fmt::join(c->reduce_ops, ","));
    std::string args = c->reduce_ops.empty() ? "" : "op=" + ops;
    if (c->has_root) args = "root=0";
    if (c->has_split) args = "split=even|uneven";
    if (json) {
      arr.push_back({{"name", c->name},
                     {"c10d", c->c10d},
                     {"reduce_ops", c->reduce_ops},
                     {"chunked", c->chunked},
                     {"dtypes", dtype_set_str(c->dtypes)},
                     {"bus_factor_w4", c->bus_factor(4)},
                     {"note", c->note}});
    } else {
      out += fmt::format("{:<16} {:<14} dtypes={} args={}{}  {}\n", c->name, c->c10d, dtype_set_str(c->dtypes),
                         args.empty() ? "-" : args, c->chunked ? " size%world==0" : "", c->note);
    }
  }
  if (json) out += nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"colls", arr}}.dump(1) + "\n";
  return out;
}

// The zoo, then the model files this process knows (Note [Model file registry]): those of
// $GAUNTLET_MODEL_FILES and of the suite given with --suite.
std::string models_listing(bool json) {
  std::string out;
  nlohmann::json arr = nlohmann::json::array();
  for (const ModelSpec& m : model_catalog().models) {
    if (json) {
      arr.push_back({{"name", m.name},
                     {"source", "zoo"},
                     {"configs", m.config_names()},
                     {"dtypes", m.dtypes},
                     {"trainable", m.trainable},
                     {"ops", m.ops},
                     {"file", m.path},
                     {"description", m.description}});
    } else {
      out += fmt::format("{:<22} configs={} dtypes={} {}  {}\n", m.name, fmt::join(m.config_names(), ","),
                         fmt::join(m.dtypes, ","), m.trainable ? "train" : "infer", m.description);
    }
  }
  for (const ModelFileSpec* m : registered_model_files()) {
    if (json) {
      arr.push_back({{"name", m->name},
                     {"key_name", m->key_name()},
                     {"source", m->source.empty() ? "model file" : m->source},
                     {"configs", m->config_names()},
                     {"dtypes", m->dtypes},
                     {"trainable", false},
                     {"file", m->file},
                     {"manifest", m->manifest},
                     {"bytes", m->file_bytes},
                     {"export", m->export_method},
                     {"task", m->task},
                     {"golden", m->golden},
                     {"description", m->description}});
    } else {
      out += fmt::format("{:<22} configs={} dtypes={} infer  {} [{}; {}]\n", m->key_name(),
                         fmt::join(m->config_names(), ","), fmt::join(m->dtypes, ","),
                         m->description.empty() ? m->file : m->description,
                         m->source.empty() ? "model file" : m->source, m->file);
    }
  }
  if (json) out += nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"models", arr}}.dump(1) + "\n";
  return out;
}

// Note [Executed ops], listed: the ops models execute (gather_executed_ops), with the models that
// execute them and their calls, and whether the op table has them (an op table entry for the same
// aten op, any overload).
std::string executed_ops_listing(const ExecutedOpsOfModels& g, bool json) {
  std::string out;
  const auto& per_model = g.models;
  const auto& failed = g.failed;
  const std::string& source = g.source;
  std::set<std::string> table;
  for (const OpSpec* op : all_ops()) {
    table.insert(op->aten.substr(0, op->aten.find('.')));
    table.insert("aten::" + op->name);
  }
  struct Use {
    std::set<std::string> models;
    std::int64_t calls = 0;
    std::string example;
  };
  std::map<std::string, Use> uses;
  for (const auto& [name, records] : per_model) {
    for (const ModelOpRecord& r : records) {
      Use& u = uses[r.op.op];
      u.models.insert(name);
      u.calls += r.op.calls;
      if (u.example.empty()) u.example = r.op.inputs;
    }
  }
  // An in-place variant (relu_, add_) counts as its op's.
  auto in_table = [&](const std::string& op) {
    std::string base = op.substr(0, op.find('.'));
    if (base.size() > 1 && base.back() == '_' && base[base.size() - 2] != '_') base.pop_back();
    return table.count(base) > 0 || table.count("aten::" + base) > 0;  // TorchScript's builtin chunk
  };
  // Views, copies and factories the table leaves out on purpose (Note [Exempt ops]).
  auto exempt = [&](const std::string& op) { return in_table(op) ? nullptr : find_op_exemption(op); };
  std::vector<std::pair<std::string, const Use*>> rows;
  for (const auto& [op, u] : uses) rows.emplace_back(op, &u);
  std::stable_sort(rows.begin(), rows.end(),
                   [](const auto& a, const auto& b) { return a.second->models.size() > b.second->models.size(); });
  std::vector<std::string> missing;
  for (const auto& [op, u] : rows) {
    if (!in_table(op) && !exempt(op)) missing.push_back(op);
  }
  if (json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const auto& [op, u] : rows) {
      arr.push_back({{"op", op},
                     {"models", std::vector<std::string>(u->models.begin(), u->models.end())},
                     {"calls", u->calls},
                     {"in_op_table", in_table(op)},
                     {"exempt", exempt(op) ? exempt(op)->kind : ""},
                     {"example", u->example}});
    }
    out += nlohmann::json{{"json_schema_version", kJsonSchemaVersion},
                          {"suite", g.suite},
                          {"source", source},
                          {"models", per_model.size()},
                          {"ops", arr},
                          {"missing", missing},
                          {"failed", failed}}
               .dump(1) +
           "\n";
    return out;
  }
  out += fmt::format("{:<44} {:>6} {:>8}  {:<8} {}\n", "op", "models", "calls", "in table", "e.g. inputs");
  for (const auto& [op, u] : rows) {
    out += fmt::format("{:<44} {:>6} {:>8}  {:<8} {}\n", op, u->models.size(), u->calls,
                       in_table(op) ? "yes"
                       : exempt(op) ? exempt(op)->kind
                                    : "MISSING",
                       u->example.substr(0, 80));
  }
  const std::size_t exempted = static_cast<std::size_t>(
      std::count_if(rows.begin(), rows.end(), [&](const auto& row) { return exempt(row.first) != nullptr; }));
  out += fmt::format(
      "\n{} ops executed by {} models ({}); {} exempt (views, copies, factories: docs/writing-suites.md); "
      "{} not in the op table{}{}\n",
      rows.size(), per_model.size(), source, exempted, missing.size(), missing.empty() ? "" : ": ",
      fmt::join(missing, ", "));
  for (const std::string& f : failed) out += fmt::format("could not run {}\n", f);
  return out;
}

std::string suites_listing(const std::string& dir) {
  std::string out;
  for (const auto& name : list_suites(dir)) {
    try {
      Suite s = load_suite(name, dir);
      out += fmt::format("{:<14} {:>8} cases  {}\n", s.name, s.cases.size(), s.description);
    } catch (const CatalogError& e) {  // a suite of model files not exported yet, say
      out += fmt::format("{:<14} {:>8}        unavailable: {}\n", name, "-", e.what());
    }
  }
  return out;
}

// The composition of an including suite (Note [Included suites]): each part's own count, the
// keys more than one part makes (run once), and the total, so the sum can be checked.
std::string parts_listing(const Suite& suite, bool json) {
  std::size_t sum = 0;
  for (const Suite::Part& p : suite.parts) sum += p.cases;
  if (json) {
    nlohmann::json parts = nlohmann::json::array();
    for (const Suite::Part& p : suite.parts) parts.push_back({{"suite", p.name}, {"count", p.cases}});
    return nlohmann::json{{"json_schema_version", kJsonSchemaVersion},
                          {"suite", suite.name},
                          {"count", suite.cases.size()},
                          {"parts", parts},
                          {"sum_of_parts", sum},
                          {"shared", suite.shared}}
               .dump(1) +
           "\n";
  }
  if (suite.parts.empty())
    return fmt::format("{}: {} cases; it includes no other suite\n", suite.name, suite.cases.size());
  std::size_t width = suite.name.size();
  for (const Suite::Part& p : suite.parts) width = std::max(width, p.name.size());
  width = std::max<std::size_t>(width, 12);
  std::string out;
  for (const Suite::Part& p : suite.parts) out += fmt::format("{:<{}}  {:>9}\n", p.name, width, p.cases);
  out += fmt::format("{:<{}}  {:>9}\n", "sum of parts", width, sum);
  out += fmt::format("{:<{}}  {:>9}  keys more than one part makes, run once\n", "less shared", width, suite.shared);
  out += fmt::format("{:<{}}  {:>9}  cases\n", suite.name, width, suite.cases.size());
  return out;
}

void describe_options(OptionSink& s, ListOptions& o) {
  s.option("--suite", o.suite, "suite name (suites/yaml/NAME.yaml) or path to a .yaml file");
  s.option("--filter", o.filter, "gtest-style globs on case keys: POS1:POS2:-NEG1:NEG2");
  s.option("--shard", o.shard, "i/N: only the i-th of N shards");
  s.option("--suites-dir", o.suites_dir, "where suites live (default: $GAUNTLET_SUITES or the source tree)");
  s.flag("--count", o.count, "print the number of cases only");
  s.flag("--parts", o.parts, "print the suites it includes, each with its count, and the keys two make");
  s.flag("--json", o.json, "print JSON");
  s.flag("--ops", o.ops, "print the op table, one op a line");
  s.flag("--colls", o.colls, "print the collectives, one a line");
  s.flag("--models", o.models,
         "print the model zoo and the model files of --suite and $GAUNTLET_MODEL_FILES, one model a line");
  s.flag("--suites", o.suites, "print the suites, one a line");
  s.option("--ops-of-models", o.ops_of_models,
           "[SUITE] the ops models execute, with counts, and which the op table lacks: every model of SUITE run "
           "once on the CPU, or with --db what a stored run's model cases recorded on their device (of SUITE when "
           "given)")
      .value_optional();
  s.option("--db", o.db, "with --ops-of-models: the database of a stored run");
  s.option("--run", o.run, "with --ops-of-models --db: that run (default: the latest)");
}

Listing listing(const ListOptions& o) {
  if ((!o.db.empty() || o.run != 0) && !o.ops_of_models_given) {
    throw Error("list --db and --run go with --ops-of-models (a stored run's executed ops)");
  }
  if (o.run != 0 && o.db.empty()) throw Error("list --run needs --db FILE");
  const std::string dir = suites_dir_or_default(o.suites_dir);
  if (o.ops) return {ops_listing(o.json)};
  if (o.colls) return {colls_listing(o.json)};
  if (o.ops_of_models_given) {
    const ExecutedOpsOfModels g = gather_executed_ops(o.ops_of_models, dir, o.db, o.run);
    return {executed_ops_listing(g, o.json), g.failed.empty() ? 0 : 1};
  }
  if (o.models) {
    if (!o.suite.empty()) load_suite(o.suite, dir);  // registers the suite's model files
    return {models_listing(o.json)};
  }
  if (o.suites) return {suites_listing(dir)};
  if (o.suite.empty()) throw Error("list needs --suite NAME, --ops or --suites");
  Suite suite = load_suite(o.suite, dir);
  std::vector<const Case*> cases;
  try {
    cases = select_cases(suite, o.filter, o.shard);
  } catch (const Error&) {
    if (o.filter.empty()) throw;  // an empty suite or a bad shard
    // Listing what a filter matches may rightly find nothing.
  }
  if (o.parts) return {parts_listing(suite, o.json)};
  if (o.count && o.json) {
    return {nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"suite", suite.name}, {"count", cases.size()}}
                .dump() +
            "\n"};
  }
  if (o.count) return {fmt::format("{}\n", cases.size())};
  if (o.json) {
    nlohmann::json arr = nlohmann::json::array();
    for (const Case* c : cases) arr.push_back({{"key", c->text}, {"id", fmt::format("{:016x}", c->id)}});
    return {nlohmann::json{{"json_schema_version", kJsonSchemaVersion}, {"suite", suite.name}, {"cases", arr}}.dump(1) +
            "\n"};
  }
  std::string out;
  for (const Case* c : cases) {
    out += c->text;
    out += '\n';
  }
  return {out};
}

}  // namespace gauntlet
