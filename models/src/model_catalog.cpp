// Reads models/models.yaml (Note [Model zoo]) and the source files it names.
#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/strict_yaml.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/models/models.h"
#include "model_yaml.h"

#ifndef GAUNTLET_SOURCE_MODELS_DIR
#define GAUNTLET_SOURCE_MODELS_DIR "models"
#endif

namespace gauntlet {

namespace fs = std::filesystem;

namespace {

using model_yaml::Reader;

// ---- size expressions ----

// expr := term (('+' | '-') term)* ; term := factor (('*' | '/') factor)* ;
// factor := integer | name | '(' expr ')'
class ExprParser {
 public:
  ExprParser(const std::string& text, const std::map<std::string, std::int64_t>& sizes) : s_(text), sizes_(sizes) {}

  std::int64_t parse() {
    std::int64_t v = expr();
    skip_space();
    if (i_ != s_.size()) fail(fmt::format("unexpected '{}'", s_[i_]));
    return v;
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    throw std::invalid_argument(fmt::format("bad size expression '{}': {}", s_, what));
  }
  void skip_space() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(char c) {
    skip_space();
    if (i_ < s_.size() && s_[i_] == c) {
      ++i_;
      return true;
    }
    return false;
  }
  std::int64_t expr() {
    std::int64_t v = term();
    for (;;) {
      if (eat('+'))
        v += term();
      else if (eat('-'))
        v -= term();
      else
        return v;
    }
  }
  std::int64_t term() {
    std::int64_t v = factor();
    for (;;) {
      if (eat('*')) {
        v *= factor();
      } else if (eat('/')) {
        std::int64_t d = factor();
        if (d == 0) fail("division by zero");
        if (v % d != 0) fail(fmt::format("{} is not a multiple of {}", v, d));
        v /= d;
      } else {
        return v;
      }
    }
  }
  std::int64_t factor() {
    skip_space();
    if (eat('(')) {
      std::int64_t v = expr();
      if (!eat(')')) fail("missing ')'");
      return v;
    }
    if (i_ >= s_.size()) fail("ends early");
    const char c = s_[i_];
    if (std::isdigit(static_cast<unsigned char>(c))) {
      std::int64_t v = 0;
      while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_]))) v = v * 10 + (s_[i_++] - '0');
      return v;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      std::size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_')) ++i_;
      std::string name = s_.substr(start, i_ - start);
      auto it = sizes_.find(name);
      if (it == sizes_.end()) fail(fmt::format("no size named '{}'", name));
      return it->second;
    }
    fail(fmt::format("unexpected '{}'", c));
  }

  const std::string& s_;
  const std::map<std::string, std::int64_t>& sizes_;
  std::size_t i_ = 0;
};

ArgKind parse_kind(const Reader& r, const YAML::Node& n) {
  const std::string s = r.scalar(n, "kind");
  for (ArgKind k :
       {ArgKind::Input, ArgKind::Weight, ArgKind::Buffer, ArgKind::Index, ArgKind::Offsets, ArgKind::Positions}) {
    if (s == arg_kind_name(k)) return k;
  }
  r.fail(n, fmt::format("field 'kind': '{}' is not one of input, weight, buffer, index, offsets, positions", s));
}

std::vector<std::string> parse_shape(const Reader& r, const YAML::Node& n) {
  std::vector<std::string> out;
  for (const auto& d : r.seq(n, "shape")) out.push_back(r.scalar(d, "shape"));
  return out;
}

// The header comment of a source file: "# ops: aten::a, aten::b" lines (any number) and an
// "# inputs:" block whose lines "#   name  [shape]  description" list the arguments in order.
struct SourceHeader {
  std::vector<std::string> ops;
  std::vector<std::string> inputs;
};

SourceHeader parse_header(const std::string& source) {
  SourceHeader h;
  std::istringstream in(source);
  std::string line;
  enum { None, Ops, Inputs } block = None;
  while (std::getline(in, line)) {
    if (line.rfind('#', 0) != 0) break;  // the header ends at the first line not a comment
    const std::string body = line.substr(1);
    const auto indent = body.find_first_not_of(' ');
    std::string text = indent == std::string::npos ? "" : body.substr(indent);
    // A block's lines are indented under its "# ops:" or "# inputs:" line; a blank comment
    // line or a line at the header's own indentation ends it.
    if (text.empty() || indent < 2) block = None;
    if (block == None && text.rfind("ops:", 0) == 0) {
      block = Ops;
      text = text.substr(4);
    } else if (block == None && text.rfind("inputs", 0) == 0 && text.back() == ':') {
      block = Inputs;
      continue;
    }
    if (block == Ops) {
      std::replace(text.begin(), text.end(), ',', ' ');
      std::istringstream ops(text);
      for (std::string op; ops >> op;) h.ops.push_back(op);
    } else if (block == Inputs) {
      std::istringstream words(text);
      std::string name;
      words >> name;
      h.inputs.push_back(name);
    }
  }
  return h;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// The 1-based line of the first occurrence of `needle` in `text` (0 if absent).
int line_of(const std::string& text, const std::string& needle) {
  auto pos = text.find(needle);
  if (pos == std::string::npos) return 0;
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(pos), '\n'));
}

ModelArg parse_arg(const Reader& r, const YAML::Node& n, const std::string& model) {
  r.only_fields(n, {"name", "kind", "shape", "fan_in", "range", "bound"}, "an argument of " + model);
  ModelArg a;
  a.where = r.where(n);
  a.name = r.name(r.need(n, "name", "an argument of " + model), "name");
  const std::string in = fmt::format("argument '{}' of {}", a.name, model);
  a.kind = n["kind"] ? parse_kind(r, n["kind"]) : ArgKind::Input;
  a.shape = parse_shape(r, r.need(n, "shape", in));
  if (n["range"]) {
    if (!a.floating()) r.fail(n["range"], fmt::format("{}: field 'range' is for floating arguments", in));
    auto lohi = r.seq(n["range"], "range");
    if (lohi.size() != 2) r.fail(n["range"], fmt::format("{}: field 'range' must be [lo, hi]", in));
    a.lo = r.number(lohi[0], "range");
    a.hi = r.number(lohi[1], "range");
    if (!(a.lo <= a.hi)) r.fail(n["range"], fmt::format("{}: field 'range' needs lo <= hi", in));
  }
  if (n["fan_in"]) {
    if (a.kind != ArgKind::Weight) r.fail(n["fan_in"], fmt::format("{}: field 'fan_in' is for weights", in));
    if (n["range"]) r.fail(n["fan_in"], fmt::format("{}: give 'fan_in' or 'range', not both", in));
    a.fan_in = r.scalar(n["fan_in"], "fan_in");
  }
  if (a.kind == ArgKind::Weight && a.fan_in.empty() && !n["range"]) {
    r.fail(n, fmt::format("{}: a weight needs 'fan_in' or 'range'", in));
  }
  if (a.kind == ArgKind::Buffer && !n["range"]) r.fail(n, fmt::format("{}: a buffer needs 'range'", in));
  if (a.kind == ArgKind::Index || a.kind == ArgKind::Offsets) {
    a.bound = r.scalar(r.need(n, "bound", in), "bound");
  } else if (n["bound"]) {
    r.fail(n["bound"], fmt::format("{}: field 'bound' is for index and offsets arguments", in));
  }
  if (a.kind == ArgKind::Offsets && a.shape.size() != 1) {
    r.fail(n["shape"], fmt::format("{}: offsets must be 1-d", in));
  }
  return a;
}

// Evaluates every expression of `spec` under one config; `at` is the config's node.
ModelConfig evaluate_config(const Reader& r, const ModelSpec& spec, const YAML::Node& at, const YAML::Node& args_node,
                            const YAML::Node& outputs_node, const std::string& name,
                            std::map<std::string, std::int64_t> sizes) {
  ModelConfig c;
  c.name = name;
  c.sizes = std::move(sizes);
  auto eval = [&](const std::string& e, const YAML::Node& node, const std::string& field) {
    try {
      return eval_size_expr(e, c.sizes);
    } catch (const std::invalid_argument& ex) {
      r.fail(node, fmt::format("{}: field '{}' under config '{}' (line {}): {}", spec.name, field, name,
                               at.Mark().line + 1, ex.what()));
    }
  };
  auto eval_shape = [&](const std::vector<std::string>& shape, const YAML::Node& node, const std::string& what) {
    std::vector<std::int64_t> dims;
    for (const auto& e : shape) {
      std::int64_t d = eval(e, node["shape"], what + " shape");
      if (d <= 0) {
        r.fail(node["shape"], fmt::format("{}: {} shape dim '{}' is {} under config '{}'; dims must be positive",
                                          spec.name, what, e, d, name));
      }
      dims.push_back(d);
    }
    return dims;
  };
  for (std::size_t i = 0; i < spec.args.size(); ++i) {
    const ModelArg& a = spec.args[i];
    const YAML::Node node = args_node[i];
    ConfigArg ca;
    ca.shape = eval_shape(a.shape, node, "argument '" + a.name + "'");
    ca.lo = a.lo;
    ca.hi = a.hi;
    if (!a.fan_in.empty()) {
      std::int64_t f = eval(a.fan_in, node["fan_in"], "fan_in");
      if (f <= 0)
        r.fail(node["fan_in"], fmt::format("{}: fan_in of '{}' is {} under config '{}'", spec.name, a.name, f, name));
      ca.hi = 1.0 / std::sqrt(static_cast<double>(f));
      ca.lo = -ca.hi;
    }
    if (!a.bound.empty()) {
      ca.bound = eval(a.bound, node["bound"], "bound");
      if (ca.bound <= 0)
        r.fail(node["bound"],
               fmt::format("{}: bound of '{}' is {} under config '{}'", spec.name, a.name, ca.bound, name));
    }
    c.args.push_back(std::move(ca));
  }
  for (std::size_t i = 0; i < spec.outputs.size(); ++i) {
    c.outputs.push_back(eval_shape(spec.outputs[i].shape, outputs_node[i], "output '" + spec.outputs[i].name + "'"));
  }
  return c;
}

ModelSpec parse_model(const Reader& r, const YAML::Node& n, const fs::path& dir) {
  r.only_fields(n, {"name", "file", "function", "description", "dtypes", "trainable", "sizes", "args", "outputs"},
                "a model");
  ModelSpec m;
  m.where = r.where(n);
  m.name = r.name(r.need(n, "name", "a model"), "name");
  const std::string in = "model " + m.name;
  if (n["description"]) m.description = r.scalar(n["description"], "description");
  if (n["function"]) m.function = r.name(n["function"], "function");

  // The source file and its header.
  const YAML::Node file = r.need(n, "file", in);
  const fs::path path = dir / r.scalar(file, "file");
  if (!fs::is_regular_file(path)) r.fail(file, fmt::format("{}: field 'file': no file {}", in, path.string()));
  m.path = fs::absolute(path).lexically_normal().string();
  m.source = read_file(m.path);
  const SourceHeader header = parse_header(m.source);
  m.ops = header.ops;
  const int def_line = line_of(m.source, "def " + m.function + "(");
  if (def_line == 0) r.fail(file, fmt::format("{}: {} defines no function '{}'", in, m.path, m.function));
  if (m.ops.empty()) {
    r.fail(file, fmt::format("{}: {}:1: the header comment has no '# ops:' line", in, m.path));
  }

  // dtypes
  for (const auto& d : r.seq(r.need(n, "dtypes", in), "dtypes")) {
    const std::string s = r.scalar(d, "dtypes");
    try {
      model_dtype(s);
    } catch (const ModelError&) {
      r.fail(d, fmt::format("{}: field 'dtypes': '{}' is not one of f32, bf16, f16, f64", in, s));
    }
    m.dtypes.push_back(s);
  }
  if (m.dtypes.empty()) r.fail(r.key(n, "dtypes"), fmt::format("{}: field 'dtypes' is empty", in));

  // args and outputs
  const YAML::Node args = r.need(n, "args", in);
  std::set<std::string> seen;
  for (const auto& a : r.seq(args, "args")) {
    m.args.push_back(parse_arg(r, a, m.name));
    if (!seen.insert(m.args.back().name).second) {
      r.fail(a, fmt::format("{}: argument '{}' appears twice", in, m.args.back().name));
    }
  }
  if (m.args.empty()) r.fail(r.key(n, "args"), fmt::format("{}: field 'args' is empty", in));
  std::vector<std::string> arg_names;
  for (const auto& a : m.args) arg_names.push_back(a.name);
  if (header.inputs != arg_names) {
    r.fail(r.key(n, "args"), fmt::format("{}: args ({}) differ from the '# inputs:' list of {} ({})", in,
                                         fmt::join(arg_names, ", "), m.path, fmt::join(header.inputs, ", ")));
  }
  const YAML::Node outputs = r.need(n, "outputs", in);
  for (const auto& o : r.seq(outputs, "outputs")) {
    r.only_fields(o, {"name", "shape"}, "an output of " + m.name);
    ModelOutput out;
    out.name = r.name(r.need(o, "name", "an output of " + m.name), "name");
    out.shape = parse_shape(r, r.need(o, "shape", "output " + out.name + " of " + m.name));
    m.outputs.push_back(std::move(out));
  }
  if (m.outputs.empty()) r.fail(r.key(n, "outputs"), fmt::format("{}: field 'outputs' is empty", in));

  // trainable
  if (n["trainable"]) m.trainable = r.boolean(n["trainable"], "trainable");
  if (m.trainable && m.trainable_args().empty()) {
    r.fail(n["trainable"], fmt::format("{}: trainable, but no argument has kind weight", in));
  }

  // sizes: config name -> {size name: value}
  const YAML::Node sizes = r.need(n, "sizes", in);
  if (!sizes.IsMap()) r.fail(sizes, fmt::format("{}: field 'sizes' must map config names to sizes", in));
  for (const auto& kv : sizes) {
    const std::string cname = r.name(kv.first, "sizes");
    if (m.find_config(cname)) r.fail(kv.first, fmt::format("{}: config '{}' appears twice", in, cname));
    if (!kv.second.IsMap())
      r.fail(kv.second, fmt::format("{}: config '{}' must map size names to integers", in, cname));
    std::map<std::string, std::int64_t> values;
    for (const auto& s : kv.second) {
      const std::string sname = r.name(s.first, "sizes." + cname);
      const double v = r.number(s.second, "sizes." + cname + "." + sname);
      if (v != std::floor(v) || v < 1 || v > 1e12) {
        r.fail(s.second, fmt::format("{}: size '{}' of config '{}' must be a positive integer", in, sname, cname));
      }
      values[sname] = static_cast<std::int64_t>(v);
    }
    m.configs.push_back(evaluate_config(r, m, kv.second, args, outputs, cname, std::move(values)));
  }
  for (const auto& want : standard_configs()) {
    if (!m.find_config(want)) r.fail(r.key(n, "sizes"), fmt::format("{}: field 'sizes' has no config '{}'", in, want));
  }
  // Standard configs first, smallest first; any others after, as written.
  std::stable_sort(m.configs.begin(), m.configs.end(), [](const ModelConfig& a, const ModelConfig& b) {
    auto rank = [](const std::string& s) {
      const auto& std_names = standard_configs();
      return std::find(std_names.begin(), std_names.end(), s) - std_names.begin();
    };
    return rank(a.name) < rank(b.name);
  });
  return m;
}

}  // namespace

// ---- public ----

const char* arg_kind_name(ArgKind k) {
  switch (k) {
    case ArgKind::Input:
      return "input";
    case ArgKind::Weight:
      return "weight";
    case ArgKind::Buffer:
      return "buffer";
    case ArgKind::Index:
      return "index";
    case ArgKind::Offsets:
      return "offsets";
    case ArgKind::Positions:
      return "positions";
  }
  return "?";
}

bool is_floating(ArgKind k) { return k == ArgKind::Input || k == ArgKind::Weight || k == ArgKind::Buffer; }

std::int64_t ModelConfig::numel() const {
  std::int64_t n = 0;
  for (const auto& a : args) {
    std::int64_t e = 1;
    for (auto d : a.shape) e *= d;
    n += e;
  }
  return n;
}

const ModelConfig* ModelSpec::find_config(const std::string& n) const {
  for (const auto& c : configs) {
    if (c.name == n) return &c;
  }
  return nullptr;
}

const ModelConfig& ModelSpec::config(const std::string& n) const {
  if (const ModelConfig* c = find_config(n)) return *c;
  throw ModelError(fmt::format("model {} has no config '{}' (it has {})", name, n, fmt::join(config_names(), ", ")));
}

std::vector<std::string> ModelSpec::config_names() const {
  std::vector<std::string> out;
  for (const auto& c : configs) out.push_back(c.name);
  return out;
}

std::vector<std::size_t> ModelSpec::trainable_args() const {
  std::vector<std::size_t> out;
  for (std::size_t i = 0; i < args.size(); ++i) {
    if (args[i].trainable()) out.push_back(i);
  }
  return out;
}

bool ModelSpec::supports(at::ScalarType dtype) const {
  const std::string n = model_dtype_name(dtype);
  return std::find(dtypes.begin(), dtypes.end(), n) != dtypes.end();
}

const ModelSpec* ModelCatalog::find(const std::string& n) const {
  for (const auto& m : models) {
    if (m.name == n) return &m;
  }
  return nullptr;
}

const ModelSpec& ModelCatalog::get(const std::string& n) const {
  if (const ModelSpec* m = find(n)) return *m;
  throw ModelError(fmt::format("{}: no model named '{}' (models: {})", file, n, fmt::join(names(), ", ")));
}

std::vector<std::string> ModelCatalog::names() const {
  std::vector<std::string> out;
  for (const auto& m : models) out.push_back(m.name);
  return out;
}

std::string default_models_dir() {
  if (const char* env = std::getenv("GAUNTLET_MODELS"); env && *env) return env;
  return GAUNTLET_SOURCE_MODELS_DIR;
}

std::int64_t eval_size_expr(const std::string& expr, const std::map<std::string, std::int64_t>& sizes) {
  return ExprParser(expr, sizes).parse();
}

at::ScalarType model_dtype(const std::string& name) {
  if (name == "f32") return at::kFloat;
  if (name == "bf16") return at::kBFloat16;
  if (name == "f16") return at::kHalf;
  if (name == "f64") return at::kDouble;
  throw ModelError(fmt::format("'{}' is not a model dtype (f32, bf16, f16, f64)", name));
}

std::string model_dtype_name(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return "f32";
    case at::kBFloat16:
      return "bf16";
    case at::kHalf:
      return "f16";
    case at::kDouble:
      return "f64";
    default:
      return c10::toString(t);
  }
}

ModelCatalog load_model_catalog(const std::string& dir) {
  ModelCatalog cat;
  cat.dir = dir;
  cat.file = (fs::path(dir) / "models.yaml").string();
  Reader r(cat.file);
  const YAML::Node root = r.load();
  if (!root.IsMap()) r.fail(root, "the file must be a mapping with a 'models' list");
  r.only_fields(root, {"models"}, "the file");
  const YAML::Node models = r.need(root, "models", "the file");
  for (const auto& n : r.seq(models, "models")) {
    ModelSpec m = parse_model(r, n, fs::path(dir));
    if (cat.find(m.name)) r.fail(n["name"], fmt::format("model '{}' appears twice", m.name));
    cat.models.push_back(std::move(m));
  }
  if (cat.models.empty()) r.fail(models, "field 'models' is empty");
  return cat;
}

const ModelCatalog& model_catalog() {
  static const ModelCatalog catalog = load_model_catalog(default_models_dir());
  return catalog;
}

std::optional<std::string> validate_model_key(const CaseKey& key) {
  if (is_model_file_target(key.target)) {
    // Note [Model files]: <name>.<8 hex digits of the file's hash>
    const ModelFileSpec* file = nullptr;
    try {
      file = find_model_file(key.target);
    } catch (const ModelError& e) {
      return std::string(e.what());
    }
    if (!file) {
      return fmt::format(
          "model file {} is not registered in this process (pass it with run --model FILE, a suite's "
          "model_files group or $GAUNTLET_MODEL_FILES; a changed file has a new hash)",
          key.target);
    }
    if (!file->find_config(key.config))
      return fmt::format("model {} has no config '{}' (has {})", file->name, key.config,
                         fmt::join(file->config_names(), ", "));
    if (!file->supports(std::string(dtype_name(key.dtype))))
      return fmt::format("model {} does not run in {} (its manifest lists {})", file->name, dtype_name(key.dtype),
                         fmt::join(file->dtypes, ","));
    if (key.exec != "eager")
      return fmt::format("model {}: model files run eager (the compile path takes zoo models)", file->name);
    // Note [Migration scenarios] (harness/core/cases/model_file_case.cpp)
    for (const auto& [name, value] : key.args) {
      if (name != "scenario")
        return fmt::format("model {}: unknown argument '{}' (model file cases take only scenario=)", file->name, name);
      if (value == "online" && key.mode == Mode::Eager) continue;
      if (value == "finetune" && key.mode == Mode::EagerBwd) continue;
      return fmt::format("model {}: scenario={} (infer takes scenario=online, train scenario=finetune)", file->name,
                         value);
    }
    return std::nullopt;
  }
  const ModelSpec* spec = model_catalog().find(key.target);
  if (!spec) return fmt::format("unknown model '{}' (see gauntlet list --models)", key.target);
  if (!spec->find_config(key.config))
    return fmt::format("model {} has no config '{}' (has {})", spec->name, key.config,
                       fmt::join(spec->config_names(), ", "));
  const std::string dtype(dtype_name(key.dtype));
  if (std::find(spec->dtypes.begin(), spec->dtypes.end(), dtype) == spec->dtypes.end())
    return fmt::format("model {} does not support dtype {} (supports {})", spec->name, dtype,
                       fmt::join(spec->dtypes, ","));
  if (key.mode == Mode::EagerBwd && !spec->trainable) return fmt::format("model {} is not trainable", spec->name);
  for (const auto& [name, value] : key.args) {
    // shapes=static|dynamic: how the compile path compiles shapes (Note [Compile path]).
    if (name == "shapes") {
      if (key.exec != "compile") return fmt::format("model {}: shapes={} needs exec compile", spec->name, value);
      if (value != "static" && value != "dynamic")
        return fmt::format("model {}: shapes={} is not static or dynamic", spec->name, value);
      continue;
    }
    // Note [Shape sequences]: seq=<n> feeds the compiled model n more batch sizes after the first.
    if (name != "seq")
      return fmt::format("model {}: unknown argument '{}' (model cases take seq=<n> and shapes=static|dynamic)",
                         spec->name, name);
    if (key.exec != "compile")
      return fmt::format("model {}: seq={} needs exec compile (a shape sequence exercises recompiles)", spec->name,
                         value);
    if (value.empty() || value.size() > 2 || !std::all_of(value.begin(), value.end(), ::isdigit) ||
        std::stoi(value) < 1 || std::stoi(value) > 16)
      return fmt::format("model {}: seq={} is not a count from 1 to 16", spec->name, value);
  }
  return std::nullopt;
}

}  // namespace gauntlet
