// What models execute, gathered (list --ops-of-models), and op cases cut from it
// (gauntlet ops-from-models: Note [Ops from models]).
#include "gauntlet/core/catalog/ops_from_models.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "gauntlet/base/error.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/cases/runner.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/models/models.h"
#include "gauntlet/store/store.h"
#include "gauntlet/suites/op_spec.h"

namespace gauntlet {

namespace {

std::string model_name(const std::string& target) { return target.substr(0, target.find('.')); }

}  // namespace

// Note [Executed ops], gathered: without a database, each model of the suite (its first case:
// config, dtype) runs once on the CPU in f32 under the recorder; with one, what the model cases of
// a stored run recorded on their device (Outcome::executed_ops), those of the suite when given.
ExecutedOpsOfModels gather_executed_ops(const std::string& suite_name, const std::string& dir, const std::string& db,
                                        long long run) {
  ExecutedOpsOfModels g;
  std::optional<std::set<std::string>> keys;  // the suite's, when one is given
  std::map<std::string, const Case*> first_case;
  std::optional<Suite> suite;
  if (!suite_name.empty()) {
    suite = load_suite(suite_name, dir);
    g.suite = suite->name;
    keys.emplace();
    for (const Case& c : suite->cases) {
      if (c.key.kind != "model") continue;
      first_case.emplace(c.key.target, &c);
      keys->insert(c.text);
    }
    if (first_case.empty()) throw Error(fmt::format("suite {} has no model cases", suite->name));
  }
  if (!db.empty()) {
    auto store = Store::open(db, Store::OpenMode::ReadOnly);
    long long run_id = run;
    if (run_id == 0) {
      auto latest = store->latest_run();
      if (!latest) throw Error(db + ": the database holds no run yet");
      run_id = *latest;
    }
    if (!store->run(run_id)) throw Error(fmt::format("no run {} in {}", run_id, db));
    std::size_t model_results = 0;
    for (const StoredResult& r : store->results(run_id)) {
      const std::string& key = r.outcome.key;
      if (key.rfind("model/", 0) != 0 || (keys && !keys->count(key))) continue;
      ++model_results;
      const bool train = key.find("/train") != std::string::npos;
      std::vector<ModelOpRecord>& records = g.models[model_name(key.substr(6, key.find('/', 6) - 6))];
      for (const std::string& text : r.outcome.executed_ops) {
        if (auto e = parse_executed_op(text)) records.push_back({std::move(*e), train});
      }
      if (r.outcome.executed_ops.empty() && (r.outcome.status == Status::Pass || r.outcome.status == Status::Fail)) {
        g.failed.push_back(key + ": no executed ops recorded (a result of a Gauntlet before schema 8?)");
      }
    }
    if (model_results == 0) {
      throw Error(fmt::format("run {} of {} has no model results{}", run_id, db,
                              suite ? " of suite " + suite->name : std::string()));
    }
    g.source = fmt::format("{} model results of run {} of {}", model_results, run_id, db);
    return g;
  }
  if (!suite) throw Error("the ops models execute need a SUITE, or --db FILE to read a stored run's");
  for (const auto& [target, c] : first_case) {
    const CaseKey& key = c->key;
    try {
      std::vector<std::string> records;
      if (is_model_file_target(target)) {
        const ModelFileSpec* spec = find_model_file(target);
        if (!spec) throw std::runtime_error("not registered");
        const std::vector<at::Tensor> inputs = make_model_file_inputs(*spec, key.config, at::kFloat, key.id());
        torch::jit::Module module = load_model_module(*spec, at::kFloat, at::kFloat, c10::Device(c10::kCPU), key.id());
        std::vector<c10::IValue> args(inputs.begin(), inputs.end());
        c10::InferenceMode inference;
        ExecutedOps rec;
        module.forward(args);
        records = rec.records();
      } else {
        const ModelSpec& spec = model_catalog().get(target);
        const std::vector<at::Tensor> inputs = make_model_inputs(spec, key.config, at::kFloat, key.id());
        ScopedExecutor op_by_op(ExecutorSettings::op_by_op());
        auto cu = compile_model(spec);
        ExecutedOps rec;
        run_model(*cu, spec, inputs);
        records = rec.records();
      }
      std::vector<ModelOpRecord>& out = g.models[model_name(target)];
      for (const std::string& text : records) out.push_back({*parse_executed_op(text), false});
    } catch (const std::exception& e) {
      std::string what = e.what();
      g.failed.push_back(target + ": " + what.substr(0, what.find('\n')));
    }
  }
  g.source = fmt::format("{} models of {} run once on the CPU in f32", g.models.size(), suite->name);
  return g;
}

namespace {

// ---- Note [Ops from models] -------------------------------------------------------------------
//
// An executed record (op, inputs named by the op's schema, calls) becomes an op case when an op of
// the table exercises that aten op (its `aten`, any overload; an in-place variant counts as its
// op) and every input maps onto the spec:
//  - tensor inputs by the spec's input names, else in order; a None input is left out when it is
//    an optional last input (a convolution's bias);
//  - every non-tensor input of the record by name onto an argument of the spec, its value in key
//    form ([2,2] -> 2:2, True -> 1, 'reflect' -> reflect); one equal to the argument's default is
//    left out, as a suite would. None is the default. Inputs that only pick a kernel
//    (cudnn_enabled, benchmark, ...) are dropped; any other input the spec has no argument for
//    rejects the record: the case would compute something else than the model did;
//  - the dtype is the first floating (else first) tensor's; the layout `cl` when the first input
//    is channels-last, `t` when it is a transposed matrix, else `contig` (a record with other
//    strides is cut contiguous, and counted);
//  - the mode is eager, and eager-bwd too for records of training cases when the op has a
//    backward.
// The key must then pass validate_key. Cases are deduplicated; each remembers its models.

// Inputs that choose among kernels and do not change the result.
const std::set<std::string> kKernelChoices = {"benchmark", "deterministic", "cudnn_enabled", "allow_tf32",
                                              "cudnn_enable"};

// Splits "a=f32[1,2], b=[2,2], c=None" at top-level ", ".
std::vector<std::pair<std::string, std::string>> split_inputs(const std::string& text) {
  std::vector<std::pair<std::string, std::string>> out;
  int depth = 0;
  std::size_t start = 0;
  auto push = [&](std::size_t end) {
    std::string part = text.substr(start, end - start);
    if (part.empty()) return;
    const std::size_t eq = part.find('=');
    const std::size_t bracket = part.find_first_of("[('");
    if (eq != std::string::npos && (bracket == std::string::npos || eq < bracket)) {
      out.emplace_back(part.substr(0, eq), part.substr(eq + 1));
    } else {
      out.emplace_back("", part);
    }
  };
  bool quoted = false;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char ch = text[i];
    if (ch == '\'') quoted = !quoted;
    if (quoted) continue;
    if (ch == '[' || ch == '(') ++depth;
    if (ch == ']' || ch == ')') --depth;
    if (depth == 0 && ch == ',' && i + 1 < text.size() && text[i + 1] == ' ') {
      push(i);
      start = i + 2;
      ++i;
    }
  }
  push(text.size());
  return out;
}

struct TensorText {
  DType dtype = DType::F32;
  Shape sizes;
  std::vector<std::int64_t> strides;  // empty: contiguous
  std::int64_t offset = 0;
};

std::optional<TensorText> parse_tensor(const std::string& v) {
  const std::size_t open = v.find('[');
  if (open == std::string::npos || open == 0) return std::nullopt;
  const auto dtype = parse_dtype(v.substr(0, open));
  if (!dtype) return std::nullopt;
  const std::size_t close = v.find(']', open);
  if (close == std::string::npos) return std::nullopt;
  auto ints = [](const std::string& list) {
    std::vector<std::int64_t> out;
    std::size_t i = 0;
    while (i < list.size()) {
      std::size_t j = list.find(',', i);
      if (j == std::string::npos) j = list.size();
      out.push_back(std::stoll(list.substr(i, j - i)));
      i = j + 1;
    }
    return out;
  };
  TensorText t;
  t.dtype = *dtype;
  t.sizes = ints(v.substr(open + 1, close - open - 1));
  std::size_t rest = close + 1;
  if (rest < v.size() && v[rest] == '@') {
    const std::size_t s_open = rest + 1, s_close = v.find(']', s_open);
    if (s_close == std::string::npos) return std::nullopt;
    t.strides = ints(v.substr(s_open + 1, s_close - s_open - 1));
    rest = s_close + 1;
  }
  if (rest < v.size() && v[rest] == '+')
    t.offset = std::stoll(v.substr(rest + 1));
  else if (rest != v.size())
    return std::nullopt;
  return t;
}

// A record's non-tensor value in key form, or nullopt when it has none (a tensor list, a device).
std::optional<std::string> arg_value(const std::string& v, ArgType type) {
  if (v == "True" || v == "False") {
    if (type == ArgType::Bool) return v == "True" ? "1" : "0";
    if (type == ArgType::Int) return v == "True" ? "1" : "0";
    return std::nullopt;
  }
  if (!v.empty() && v.front() == '\'' && v.back() == '\'' && v.size() >= 2) {
    if (type != ArgType::Str) return std::nullopt;
    return v.substr(1, v.size() - 2);
  }
  if (!v.empty() && v.front() == '[' && v.back() == ']') {
    // One dim as a list ("dim=[1]") for an Int argument.
    if (type == ArgType::Int && v.find(',') == std::string::npos && v.size() > 2)
      return arg_value(v.substr(1, v.size() - 2), type);
    // Ints, or a Str that takes dims ("dim: 2:3" of the reductions, whose default is "all").
    if (type != ArgType::Ints && type != ArgType::Str) return std::nullopt;
    std::string inner = v.substr(1, v.size() - 2);
    if (inner.empty() || inner.find_first_not_of("-0123456789,") != std::string::npos) return std::nullopt;
    std::replace(inner.begin(), inner.end(), ',', ':');
    return inner;
  }
  if (v.find_first_not_of("-0123456789.e+infa") != std::string::npos) return std::nullopt;
  if (type == ArgType::Int || type == ArgType::Ints) {
    if (v.find_first_not_of("-0123456789") != std::string::npos) return std::nullopt;
    return v;
  }
  if (type == ArgType::Float) return v;
  if (type == ArgType::Str && v.find_first_not_of("-0123456789") == std::string::npos) return v;
  if (type == ArgType::Bool && (v == "0" || v == "1")) return v;
  return std::nullopt;
}

bool same_ints(const std::string& a, const std::string& b) {
  // "2:2" equals "2" for a per-dim argument given once; compare value lists element-wise.
  auto parts = [](const std::string& s) {
    std::vector<std::string> out;
    std::size_t i = 0;
    while (true) {
      std::size_t j = s.find(':', i);
      out.push_back(s.substr(i, j == std::string::npos ? std::string::npos : j - i));
      if (j == std::string::npos) break;
      i = j + 1;
    }
    return out;
  };
  const auto pa = parts(a), pb = parts(b);
  if (pa == pb) return true;
  auto all_equal_to = [](const std::vector<std::string>& many, const std::string& one) {
    return std::all_of(many.begin(), many.end(), [&](const std::string& x) { return x == one; });
  };
  return (pb.size() == 1 && all_equal_to(pa, pb[0])) || (pa.size() == 1 && all_equal_to(pb, pa[0]));
}

std::string base_op(std::string op) {
  op = op.substr(0, op.find('.'));
  if (op.size() > 1 && op.back() == '_' && op[op.size() - 2] != '_') op.pop_back();
  return op;
}

bool is_channels_last(const TensorText& t) {
  if (t.sizes.size() != 4 || t.strides.size() != 4) return false;
  const auto& s = t.sizes;
  return t.strides[1] == 1 && t.strides[3] == s[1] && t.strides[2] == s[1] * s[3] && t.strides[0] == s[1] * s[2] * s[3];
}

bool is_transposed_matrix(const TensorText& t) {
  return t.sizes.size() == 2 && t.strides.size() == 2 && t.strides[0] == 1 && t.strides[1] == t.sizes[0];
}

struct Cut {
  std::optional<CaseKey> key;
  std::string problem;  // why not, when no key
  bool restrided = false;
};

Cut cut_case(const OpSpec& op, const ExecutedOp& e, bool train) {
  Cut cut;
  const std::map<std::string, std::string> defaults = schema_defaults(e.op);
  const auto inputs = split_inputs(e.inputs);
  std::vector<std::pair<std::string, std::optional<TensorText>>> tensors;  // name, tensor (nullopt: None)
  std::map<std::string, std::string> scalars;
  std::set<std::string> input_names;
  for (const InputSpec& in : op.inputs) input_names.insert(in.name);
  for (const auto& [name, value] : inputs) {
    if (auto t = parse_tensor(value)) {
      tensors.emplace_back(name, std::move(t));
    } else if (value == "None" && (input_names.count(name) || name.empty())) {
      tensors.emplace_back(name, std::nullopt);
    } else if (value.size() > 1 && value.front() == '(') {
      cut.problem = fmt::format("input {} is a tensor list", name);
      return cut;
    } else {
      scalars[name] = value;
    }
  }
  // Tensor inputs onto the spec's, by name when the names agree, else in order.
  std::vector<std::optional<TensorText>> given;
  const bool by_name =
      std::all_of(tensors.begin(), tensors.end(), [&](const auto& t) { return input_names.count(t.first) > 0; });
  if (by_name) {
    for (const InputSpec& in : op.inputs) {
      auto it = std::find_if(tensors.begin(), tensors.end(), [&](const auto& t) { return t.first == in.name; });
      given.push_back(it == tensors.end() ? std::nullopt : it->second);
      if (it == tensors.end() && !in.optional) {
        cut.problem = fmt::format("no input {}", in.name);
        return cut;
      }
    }
  } else {
    for (const auto& t : tensors) given.push_back(t.second);
  }
  while (!given.empty() && !given.back()) given.pop_back();  // optional inputs left out
  if (std::any_of(given.begin(), given.end(), [](const auto& t) { return !t; })) {
    cut.problem = "a None tensor input before a given one";
    return cut;
  }
  if (given.empty()) {
    cut.problem = "no tensor input";
    return cut;
  }
  if (given.size() > op.inputs.size() || given.size() < op.min_inputs()) {
    cut.problem =
        fmt::format("{} tensor inputs where the op takes {} to {}", given.size(), op.min_inputs(), op.inputs.size());
    return cut;
  }
  CaseKey k;
  k.target = op.name;
  const TensorText* typed = nullptr;
  for (std::size_t i = 0; i < given.size(); ++i) {
    if (op.inputs[i].type == InputType::CaseDType) {
      typed = &*given[i];
      break;
    }
  }
  if (!typed) typed = &*given.front();
  k.dtype = typed->dtype;
  for (const auto& t : given) k.shapes.push_back(t->sizes);
  const TensorText& first = *given.front();
  if (!first.strides.empty() && is_channels_last(first)) {
    k.layout = Layout::ChannelsLast;
  } else if (!first.strides.empty() && is_transposed_matrix(first)) {
    k.layout = Layout::Transposed;
  } else {
    cut.restrided =
        std::any_of(given.begin(), given.end(), [](const auto& t) { return !t->strides.empty() || t->offset != 0; });
  }
  for (const auto& [given_name, given_value] : scalars) {
    std::string name = given_name, value = given_value;
    if (value == "None") continue;
    // The table's layer_norm/group norms take the number of normalized dims, not their sizes
    // (they are the input's last ones).
    if (name == "normalized_shape" && !op.arg(name) && op.arg("ndims") && value.size() >= 2 && value.front() == '[') {
      name = "ndims";
      value = std::to_string(value == "[]" ? 0 : std::count(value.begin(), value.end(), ',') + 1);
    }
    const ArgSpec* a = op.arg(name);
    if (!a) {
      if (kKernelChoices.count(name)) continue;
      // The schema's default: what the op does without it, which the table's op does too.
      if (auto d = defaults.find(name); d != defaults.end() && d->second == value) continue;
      cut.problem = fmt::format("argument {}={} is not in the op table's spec of {}", name, value, op.name);
      return cut;
    }
    const auto v = arg_value(value, a->type);
    if (!v) {
      cut.problem = fmt::format("argument {}={} does not fit the spec's {}", name, value, a->name);
      return cut;
    }
    const bool is_default = a->type == ArgType::Ints ? same_ints(*v, a->default_value) : *v == a->default_value;
    if (!is_default) k.args[name] = *v;
  }
  k.mode =
      train && op.has_backward && op.backward_fits(k.shapes) && is_floating(k.dtype) ? Mode::EagerBwd : Mode::Eager;
  if (auto problem = validate_key(k)) {
    if (k.mode == Mode::EagerBwd) {
      k.mode = Mode::Eager;
      if (!validate_key(k)) {
        cut.key = k;
        return cut;
      }
    }
    cut.problem = *problem;
    return cut;
  }
  cut.key = std::move(k);
  return cut;
}

}  // namespace

OpCaseCut op_case_of(const ExecutedOp& e, bool train) {
  // Op table entries by the aten op they exercise (any overload; an in-place variant as its op).
  static const std::map<std::string, std::vector<const OpSpec*>> by_aten = [] {
    std::map<std::string, std::vector<const OpSpec*>> m;
    for (const OpSpec* op : all_ops()) {
      m[op->aten].push_back(op);
      const std::string base = base_op(op->aten);
      if (base != op->aten) m[base].push_back(op);
    }
    return m;
  }();
  std::vector<const OpSpec*> candidates;
  if (auto it = by_aten.find(e.op); it != by_aten.end()) candidates = it->second;
  if (auto it = by_aten.find(base_op(e.op)); it != by_aten.end()) {
    for (const OpSpec* op : it->second) {
      if (std::find(candidates.begin(), candidates.end(), op) == candidates.end()) candidates.push_back(op);
    }
  }
  OpCaseCut out;
  if (candidates.empty()) {
    out.problem = fmt::format("no op of the table runs {}", e.op);
    return out;
  }
  out.in_table = true;
  for (const OpSpec* op : candidates) {
    Cut cut = cut_case(*op, e, train);
    if (cut.key) {
      out.key = std::move(cut.key);
      out.restrided = cut.restrided;
      out.problem.clear();
      return out;
    }
    if (out.problem.empty()) out.problem = cut.problem;
  }
  return out;
}

std::vector<Shape> record_tensor_shapes(const ExecutedOp& e) {
  std::vector<Shape> out;
  for (const auto& [name, value] : split_inputs(e.inputs)) {
    if (auto t = parse_tensor(value)) out.push_back(t->sizes);
  }
  return out;
}

void describe_options(OptionSink& s, OpsFromModelsOptions& o) {
  s.option("--suite", o.suite,
           "the model suite whose models run once on the CPU (with --db: whose stored cases to read)");
  s.option("--db", o.db, "read what a stored run's model cases executed on their device instead");
  s.option("--run", o.run, "with --db: that run (default: the latest)");
  s.option("--out", o.out, "the suite file to write (default: standard output)");
  s.option("--name", o.name, "the generated suite's name").show_default();
  s.option("--suites-dir", o.suites_dir, "where suites live");
}

CutSuite cut_ops_suite(const OpsFromModelsOptions& o) {
  if (o.suite.empty() && o.db.empty()) throw Error("ops-from-models needs --suite NAME or --db FILE");
  if (o.run != 0 && o.db.empty()) throw Error("ops-from-models --run needs --db FILE");
  if (o.name.empty() || o.name.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_-") != std::string::npos) {
    throw Error(fmt::format("--name '{}': a suite name is lowercase letters, digits, '_' and '-'", o.name));
  }
  const ExecutedOpsOfModels g = gather_executed_ops(o.suite, suites_dir_or_default(o.suites_dir), o.db, o.run);
  CutSuite cut;
  for (const std::string& f : g.failed) cut.warnings.push_back("could not record " + f);
  std::map<std::string, std::set<std::string>> cases;         // key -> models
  std::map<std::string, std::set<std::string>> not_in_table;  // op -> models
  std::map<std::string, std::int64_t> rejected;               // reason (by op) -> records
  std::int64_t records = 0, restrided = 0;
  for (const auto& [model, recs] : g.models) {
    for (const ModelOpRecord& r : recs) {
      ++records;
      const OpCaseCut c = op_case_of(r.op, r.train);
      if (c.key) {
        cases[c.key->str()].insert(model);
        restrided += c.restrided;
      } else if (!c.in_table) {
        not_in_table[r.op.op].insert(model);
      } else {
        ++rejected[fmt::format("{}: {}", r.op.op, c.problem)];
      }
    }
  }
  if (cases.empty()) throw Error(fmt::format("no op case could be cut from {} ({} records)", g.source, records));
  std::set<std::string> models;
  for (const auto& [key, from] : cases) models.insert(from.begin(), from.end());

  cut.text = fmt::format(
      "# Generated by `gauntlet ops-from-models --suite {}{}`: do not edit; regenerate (docs/writing-suites.md,\n"
      "# \"Op cases from models\"). Each case is an op of the table with the inputs a real model called it with\n"
      "# ({}); `from` names the models.\n",
      g.suite.empty() ? "-" : g.suite, o.db.empty() ? "" : " --db ...", g.source);
  cut.text += fmt::format("suite: {}\n", o.name);
  cut.text +=
      fmt::format("description: Op cases cut from what {} models executed ({} cases)\n", models.size(), cases.size());
  cut.text += "tags: [ops, generated, models]\n";
  cut.text += "groups:\n";
  for (const auto& [key, from] : cases) {
    cut.text += fmt::format("  - {{key: \"{}\", from: [{}]}}\n", key, fmt::join(from, ", "));
  }
  cut.summary = fmt::format("{} op cases from {} models ({} records of {} models: {}){}\n", cases.size(), models.size(),
                            records, g.models.size(), g.source, o.out.empty() ? "" : " written to " + o.out);
  if (restrided)
    cut.summary += fmt::format("  {} records had strides no layout reproduces: cut contiguous\n", restrided);
  if (!not_in_table.empty()) {
    std::vector<std::string> ops;
    for (const auto& [op, from] : not_in_table) ops.push_back(fmt::format("{} ({})", op, from.size()));
    cut.summary +=
        fmt::format("  {} executed ops have no op in the table: {}\n", not_in_table.size(), fmt::join(ops, ", "));
  }
  if (!rejected.empty()) {
    cut.summary += "  records no op case fits:\n";
    for (const auto& [why, n] : rejected) cut.summary += fmt::format("    {} x{}\n", why, n);
  }
  return cut;
}

}  // namespace gauntlet
