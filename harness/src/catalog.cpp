#include "gauntlet/catalog.h"

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>

#include "gauntlet/coll_spec.h"
#include "gauntlet/model_file.h"
#include "gauntlet/models.h"
#include "gauntlet/op_spec.h"
#include "gauntlet/strict_yaml.h"
#include "gauntlet/strings.h"

#ifndef GAUNTLET_SOURCE_SUITES_DIR
#define GAUNTLET_SOURCE_SUITES_DIR "suites/yaml"
#endif

namespace gauntlet {

namespace fs = std::filesystem;

namespace {

// Reads YAML nodes and reports every problem as "file:line:col: message".
class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  // Note [Strict YAML]: invalid UTF-8, a second document and duplicate keys are errors too.
  YAML::Node load() const {
    std::ifstream in(file_, std::ios::binary);
    std::stringstream text;
    if (!in || !(text << in.rdbuf()) || fs::is_directory(file_)) throw CatalogError(file_ + ": cannot read file");
    try {
      return strict_yaml::parse(text.str());
    } catch (const strict_yaml::Problem& p) {
      throw CatalogError(strict_yaml::describe(file_, p));
    }
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    const YAML::Mark m = at.Mark();
    if (m.is_null()) throw CatalogError(file_ + ": " + what);
    throw CatalogError(fmt::format("{}:{}:{}: {}", file_, m.line + 1, m.column + 1, what));
  }

  std::string where(const YAML::Node& at) const {
    return fmt::format("{}:{}", fs::path(file_).filename().string(), at.Mark().line + 1);
  }

  std::string scalar(const YAML::Node& n, const char* what) const {
    if (!n.IsScalar()) fail(n, fmt::format("field '{}' must be a single value", what));
    std::string s = n.Scalar();
    if (s == "true") return "1";
    if (s == "false") return "0";
    return s;
  }

  std::vector<std::string> list(const YAML::Node& n, const char* what) const {
    std::vector<std::string> out;
    if (n.IsScalar()) {
      out.push_back(scalar(n, what));
    } else if (n.IsSequence()) {
      for (const auto& item : n) out.push_back(scalar(item, what));
    } else {
      fail(n, fmt::format("field '{}' must be a value or a list of values", what));
    }
    return out;
  }

  // A field that takes one value or a list of values, as nodes (for error positions).
  std::vector<YAML::Node> items(const YAML::Node& n, const char* what) const {
    if (n.IsScalar()) return {n};
    if (!n.IsSequence()) fail(n, fmt::format("field '{}' must be a value or a list of values", what));
    return std::vector<YAML::Node>(n.begin(), n.end());
  }

  // The entries of a field that holds a list (none when the field is empty). Iterating a mapping
  // as a list yields invalid nodes that throw on first use (fuzzing found it: `xfail:` followed
  // by an indented mapping), so anything else is refused here.
  std::vector<YAML::Node> entries(const YAML::Node& n, const char* what) const {
    if (!n || n.IsNull()) return {};
    if (!n.IsSequence()) fail(n, fmt::format("field '{}' must be a list", what));
    return std::vector<YAML::Node>(n.begin(), n.end());
  }

  void only_fields(const YAML::Node& map, std::initializer_list<const char*> allowed, const char* what) const {
    if (!map.IsMap()) fail(map, fmt::format("{} must be a mapping", what));
    for (const auto& kv : map) {
      std::string k = kv.first.Scalar();
      if (std::find_if(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; }) == allowed.end()) {
        fail(kv.first, fmt::format("unknown field '{}' in {} (allowed: {})", k, what, fmt::join(allowed, ", ")));
      }
    }
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
};

// "8x8,8x1" -> shapes, through the key grammar so both agree.
std::vector<Shape> parse_shapes(const Reader& r, const YAML::Node& at, const std::string& text) {
  try {
    return CaseKey::parse("op/x/f32/" + text + "/contig/eager").shapes;
  } catch (const KeyError& e) {
    r.fail(at, fmt::format("bad shape list '{}' (write sizes as 8x8, '_' for 0-d, ',' between inputs)", text));
  }
}

void grid_shapes(const std::vector<std::vector<std::int64_t>>& axes, std::size_t axis, Shape& cur, int inputs,
                 std::vector<std::vector<Shape>>& out) {
  if (axis == axes.size()) {
    out.emplace_back(static_cast<std::size_t>(inputs), cur);
    return;
  }
  for (std::int64_t d : axes[axis]) {
    cur.push_back(d);
    grid_shapes(axes, axis + 1, cur, inputs, out);
    cur.pop_back();
  }
}

std::vector<std::vector<Shape>> read_shapes(const Reader& r, const YAML::Node& list, const YAML::Node& shape_sets) {
  if (!list.IsSequence()) r.fail(list, "field 'shapes' must be a list");
  std::vector<std::vector<Shape>> out;
  for (const auto& entry : list) {
    if (entry.IsScalar()) {
      out.push_back(parse_shapes(r, entry, entry.Scalar()));
    } else if (entry.IsMap() && entry["set"]) {
      r.only_fields(entry, {"set"}, "a shape-set reference");
      std::string name = r.scalar(entry["set"], "set");
      if (!shape_sets || !shape_sets[name]) r.fail(entry, "unknown shape set '" + name + "'");
      auto more = read_shapes(r, shape_sets[name], YAML::Node());
      out.insert(out.end(), more.begin(), more.end());
    } else if (entry.IsMap() && entry["grid"]) {
      r.only_fields(entry, {"grid", "inputs"}, "a shape grid");
      std::int64_t inputs = 1;
      if (entry["inputs"]) {
        try {
          inputs = entry["inputs"].as<std::int64_t>();
        } catch (const YAML::Exception&) {
          r.fail(entry["inputs"], "inputs must be an integer from 1 to 16");
        }
        if (inputs < 1 || inputs > 16) r.fail(entry["inputs"], "inputs must be an integer from 1 to 16");
      }
      std::vector<std::vector<std::int64_t>> axes;
      for (const YAML::Node& axis : r.entries(entry["grid"], "grid")) {
        if (!axis.IsSequence()) r.fail(axis, "each grid axis must be a list of sizes");
        std::vector<std::int64_t> sizes;
        for (const auto& s : axis) {
          try {
            sizes.push_back(s.as<std::int64_t>());
          } catch (const YAML::Exception&) {
            r.fail(s, "grid sizes must be integers");
          }
          if (sizes.back() < 0) r.fail(s, "grid sizes must be >= 0");
        }
        axes.push_back(std::move(sizes));
      }
      Shape cur;
      grid_shapes(axes, 0, cur, static_cast<int>(inputs), out);
    } else {
      r.fail(entry, "a shape entry is \"8x8,8x1\", {set: NAME} or {grid: [[..], ..], inputs: N}");
    }
  }
  return out;
}

// Each map's list-valued fields multiply: {dim: [0, 1], keepdim: [0, 1]} is four argument sets.
std::vector<std::map<std::string, std::string>> read_args(const Reader& r, const YAML::Node& list) {
  std::vector<std::map<std::string, std::string>> out;
  if (!list) return {{}};
  if (!list.IsSequence()) r.fail(list, "field 'args' must be a list of mappings");
  for (const auto& m : list) {
    if (!m.IsMap()) r.fail(m, "each 'args' entry must be a mapping of argument: value(s)");
    std::vector<std::map<std::string, std::string>> sets{{}};
    for (const auto& kv : m) {
      std::vector<std::string> values = r.list(kv.second, "args");
      std::vector<std::map<std::string, std::string>> next;
      for (const auto& s : sets) {
        for (const auto& v : values) {
          auto copy = s;
          copy[kv.first.Scalar()] = v;
          next.push_back(std::move(copy));
        }
      }
      sets = std::move(next);
    }
    out.insert(out.end(), sets.begin(), sets.end());
  }
  return out;
}

template <typename E>
E parse_enum(const Reader& r, const YAML::Node& at, const std::string& s, int count, std::string_view (*name)(E),
             const char* what) {
  for (int i = 0; i < count; ++i) {
    if (name(static_cast<E>(i)) == s) return static_cast<E>(i);
  }
  r.fail(at, fmt::format("unknown {} '{}'", what, s));
}

bool layout_fits(Layout l, const Shape& first) {
  switch (l) {
    case Layout::Contig:
      return true;
    case Layout::Transposed:
      return first.size() >= 2;
    case Layout::Strided:
      return !first.empty();
    case Layout::ChannelsLast:
      return first.size() == 4;
  }
  return false;
}

// A group of collective cases (Note [Collective table]): collectives x dtypes x sizes x worlds x
// layouts x argument sets. Pruned: dtypes a collective does not support, sizes it cannot split
// into `world` chunks, arguments it does not take (so one group can list every collective with
// `op: [sum, max]`), op=avg on integers. A reduce collective without `op` in the group gets every
// reduce op it has. barrier moves no data: one case per world size (size 1, f32).
void expand_coll_group(const Reader& r, const YAML::Node& g, std::vector<Case>& out) {
  r.only_fields(g, {"name", "collectives", "dtypes", "sizes", "worlds", "layouts", "args"}, "a collective group");
  for (const char* f : {"dtypes", "sizes", "worlds"}) {
    if (!g[f]) r.fail(g, fmt::format("a collective group needs '{}'", f));
  }
  std::vector<const CollSpec*> colls;
  for (const auto& n : r.items(g["collectives"], "collectives")) {
    const CollSpec* c = find_coll(r.scalar(n, "collectives"));
    if (!c) r.fail(n, fmt::format("unknown collective '{}' (see gauntlet list --colls)", n.Scalar()));
    colls.push_back(c);
  }
  std::vector<DType> dtypes;
  for (const auto& n : r.items(g["dtypes"], "dtypes")) {
    auto d = parse_dtype(r.scalar(n, "dtypes"));
    if (!d) r.fail(n, fmt::format("unknown dtype '{}' (known: {})", n.Scalar(), dtype_set_str(kAllTypes)));
    dtypes.push_back(*d);
  }
  auto numbers = [&](const char* field, std::int64_t lo, std::int64_t hi) {
    std::vector<std::int64_t> v;
    for (const auto& n : r.items(g[field], field)) {
      const std::string text = r.scalar(n, field);
      std::int64_t x = 0;
      const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
      if (ec != std::errc() || end != text.data() + text.size() || x < lo || x > hi)
        r.fail(n, fmt::format("{}: '{}' is not a whole number in {} .. {}", field, text, lo, hi));
      v.push_back(x);
    }
    return v;
  };
  const std::vector<std::int64_t> sizes = numbers("sizes", 1, std::int64_t{1} << 34);
  const std::vector<std::int64_t> worlds = numbers("worlds", 2, 1024);
  std::vector<Layout> layouts{Layout::Contig};
  if (g["layouts"]) {
    layouts.clear();
    for (const auto& n : r.items(g["layouts"], "layouts")) {
      const Layout l = parse_enum<Layout>(r, n, r.scalar(n, "layouts"), 4, layout_name, "layout");
      if (l != Layout::Contig && l != Layout::Strided) r.fail(n, "a collective's layout is contig or step2");
      layouts.push_back(l);
    }
  }
  const auto arg_sets = read_args(r, g["args"]);
  for (const CollSpec* c : colls) {
    const bool barrier = c->name == "barrier";
    for (DType d : barrier ? std::vector<DType>{DType::F32} : dtypes) {
      if (!contains(c->dtypes, d)) continue;
      for (std::int64_t size : barrier ? std::vector<std::int64_t>{1} : sizes) {
        for (std::int64_t w : worlds) {
          if (c->chunked && size % w != 0) continue;
          for (Layout l : barrier ? std::vector<Layout>{Layout::Contig} : layouts) {
            std::vector<std::map<std::string, std::string>> sets;
            for (const auto& given : arg_sets) {
              std::map<std::string, std::string> args;
              for (const auto& [k, v] : given) {
                if ((k == "op" && !c->reduce_ops.empty()) || (k == "root" && c->has_root) ||
                    (k == "split" && c->has_split))
                  args[k] = v;
              }
              if (!c->reduce_ops.empty() && !args.count("op")) {
                for (const std::string& op : c->reduce_ops) {
                  auto with = args;
                  with["op"] = op;
                  sets.push_back(std::move(with));
                }
              } else {
                sets.push_back(std::move(args));
              }
            }
            for (const auto& args : sets) {
              if (args.count("op") && args.at("op") == "avg" && !contains(kFloatDTypes, d)) continue;
              CaseKey k;
              k.kind = "coll";
              k.target = c->name;
              k.dtype = d;
              k.shapes = {{size}};
              k.layout = l;
              k.world = static_cast<int>(w);
              k.args = args;
              if (auto problem = validate_coll_key(k)) r.fail(g, *problem + " (in " + k.str() + ")");
              Case cs;
              cs.text = k.str();
              cs.id = key_id(cs.text);
              cs.key = std::move(k);
              out.push_back(std::move(cs));
            }
          }
        }
      }
    }
  }
}

// A group of model cases (Note [Model keys]): models x dtypes x configs x execs x modes, pruned
// where a model lacks the dtype or cannot train. With `seqs`, the group's cases are shape
// sequences instead (Note [Shape sequences]): each compile case once per length in `seqs`.
void expand_model_group(const Reader& r, const YAML::Node& g, std::vector<Case>& out) {
  r.only_fields(g, {"name", "models", "dtypes", "configs", "execs", "modes", "seqs"}, "a model group");
  for (const char* f : {"models", "dtypes", "configs"}) {
    if (!g[f]) r.fail(g, fmt::format("a model group needs '{}'", f));
  }
  const ModelCatalog& catalog = model_catalog();
  std::vector<const ModelSpec*> models;
  for (const auto& n : r.items(g["models"], "models")) {
    const std::string name = r.scalar(n, "models");
    if (name == "all") {
      for (const ModelSpec& m : catalog.models) models.push_back(&m);
      continue;
    }
    const ModelSpec* m = catalog.find(name);
    if (!m) r.fail(n, fmt::format("unknown model '{}' (see gauntlet list --models)", name));
    models.push_back(m);
  }
  std::vector<DType> dtypes;
  for (const auto& n : r.items(g["dtypes"], "dtypes")) {
    auto d = parse_dtype(r.scalar(n, "dtypes"));
    if (!d) r.fail(n, fmt::format("unknown dtype '{}'", n.Scalar()));
    dtypes.push_back(*d);
  }
  const std::vector<std::string> configs = r.list(g["configs"], "configs");
  std::vector<std::string> execs{"eager"}, modes{"infer"};
  if (g["execs"]) execs = r.list(g["execs"], "execs");
  if (g["modes"]) modes = r.list(g["modes"], "modes");
  for (const auto& e : execs) {
    if (e != "eager" && e != "compile") r.fail(g["execs"], "execs are eager or compile");
  }
  for (const auto& m : modes) {
    if (m != "infer" && m != "train") r.fail(g["modes"], "modes of a model group are infer or train");
  }
  std::vector<std::string> seqs{""};  // "": the case without a shape sequence
  if (g["seqs"]) {
    if (std::find(execs.begin(), execs.end(), "compile") == execs.end())
      r.fail(g["seqs"], "seqs (shape sequences) need the compile exec in 'execs'");
    seqs.clear();  // a group with seqs holds only shape-sequence cases
    for (const auto& n : r.items(g["seqs"], "seqs")) {
      const std::string v = r.scalar(n, "seqs");
      if (v.empty() || v.size() > 2 || !std::all_of(v.begin(), v.end(), ::isdigit) || std::stoi(v) < 1 ||
          std::stoi(v) > 16)
        r.fail(n, fmt::format("seqs: '{}' is not a count from 1 to 16", v));
      seqs.push_back(std::to_string(std::stoi(v)));
    }
  }
  for (const ModelSpec* m : models) {
    for (const std::string& c : configs) {
      if (!m->find_config(c)) r.fail(g["configs"], fmt::format("model {} has no config '{}'", m->name, c));
    }
    for (DType d : dtypes) {
      if (std::find(m->dtypes.begin(), m->dtypes.end(), std::string(dtype_name(d))) == m->dtypes.end()) continue;
      for (const std::string& c : configs) {
        for (const std::string& e : execs) {
          for (const std::string& mode : modes) {
            if (mode == "train" && !m->trainable) continue;
            for (const std::string& seq : seqs) {
              if (!seq.empty() && e != "compile") continue;  // sequences exercise the compile path
              CaseKey k;
              k.kind = "model";
              k.target = m->name;
              k.dtype = d;
              k.config = c;
              k.exec = e;
              k.mode = mode == "train" ? Mode::EagerBwd : Mode::Eager;
              if (!seq.empty()) k.args["seq"] = seq;
              if (auto problem = validate_model_key(k)) r.fail(g, *problem + " (in " + k.str() + ")");
              Case cs;
              cs.text = k.str();
              cs.id = key_id(cs.text);
              cs.key = std::move(k);
              out.push_back(std::move(cs));
            }
          }
        }
      }
    }
  }
}

// The cases of model files (Note [Model files]) for the given dtypes and configs ("default": a
// model's first config, "all": every one), pruned where a model does not run in a dtype.
// The migration scenarios (Note [Migration scenarios] in model_file_case.cpp) as key parts.
struct Scenario {
  Mode mode;
  const char* arg;  // the scenario= argument, "" for none
};
const std::map<std::string, Scenario>& scenarios() {
  static const std::map<std::string, Scenario> s = {{"batch", {Mode::Eager, ""}},
                                                    {"online", {Mode::Eager, "online"}},
                                                    {"train", {Mode::EagerBwd, ""}},
                                                    {"finetune", {Mode::EagerBwd, "finetune"}}};
  return s;
}

std::vector<Case> model_file_cases(const std::vector<const ModelFileSpec*>& models, const std::vector<DType>& dtypes,
                                   const std::vector<std::string>& configs,
                                   const std::function<void(const std::string&)>& fail,
                                   const std::vector<std::string>& scenario_names = {"batch"}) {
  std::vector<Case> out;
  for (const ModelFileSpec* m : models) {
    std::vector<std::string> names;
    for (const std::string& c : configs) {
      if (c == "default")
        names.push_back(m->configs.front().first);
      else if (c == "all")
        for (const auto& cfg : m->configs) names.push_back(cfg.first);
      else if (m->find_config(c))
        names.push_back(c);
      else
        fail(fmt::format("model {} has no config '{}' (has {})", m->name, c, fmt::join(m->config_names(), ", ")));
    }
    for (DType d : dtypes) {
      if (!m->supports(std::string(dtype_name(d)))) continue;
      for (const std::string& c : names) {
        for (const std::string& sc : scenario_names) {
          const Scenario& scenario = scenarios().at(sc);
          CaseKey k;
          k.kind = "model";
          k.target = m->key_name();
          k.dtype = d;
          k.config = c;
          k.exec = "eager";
          k.mode = scenario.mode;
          if (*scenario.arg) k.args["scenario"] = scenario.arg;
          if (auto problem = validate_model_key(k)) fail(*problem + " (in " + k.str() + ")");
          Case cs;
          cs.text = k.str();
          cs.id = key_id(cs.text);
          cs.key = std::move(k);
          out.push_back(std::move(cs));
        }
      }
    }
  }
  return out;
}

// A group of model-file cases: `model_files`, a folder of manifests, a manifest or a .pt
// (relative to the suite file), registered for this process and its workers (Note [Model file
// registry]); `models` picks some by name (default all); `dtypes`; `configs` (default: default).
// `hint` is printed when the folder is missing (how to make it).
void expand_model_file_group(const Reader& r, const YAML::Node& g, const std::string& suite_file,
                             std::vector<Case>& out) {
  r.only_fields(g, {"name", "model_files", "models", "dtypes", "configs", "scenarios", "hint"}, "a model-files group");
  std::string given = r.scalar(g["model_files"], "model_files");
  // ${NAME:-default}: the folder an environment variable names, else the default (the corpus's
  // $GAUNTLET_REAL_MODELS, which ci/export_models.sh writes to as well).
  if (given.rfind("${", 0) == 0 && given.back() == '}') {
    const std::string inner = given.substr(2, given.size() - 3);
    const std::size_t sep = inner.find(":-");
    const std::string name = inner.substr(0, sep);
    const char* value = std::getenv(name.c_str());
    if (value && *value) {
      given = fs::absolute(value).string();  // relative to where the command runs
    } else if (sep != std::string::npos) {
      given = inner.substr(sep + 2);
    } else {
      r.fail(g["model_files"], fmt::format("model_files: ${{{}}} is not set", name));
    }
  }
  if (given.empty()) r.fail(g["model_files"], "model_files: an empty path");
  const fs::path path = fs::path(given).is_absolute() ? fs::path(given) : fs::path(suite_file).parent_path() / given;
  if (!fs::exists(path)) {
    r.fail(g["model_files"], fmt::format("model_files: {}: no such file or folder{}", path.lexically_normal().string(),
                                         g["hint"] ? " (" + r.scalar(g["hint"], "hint") + ")" : ""));
  }
  std::vector<const ModelFileSpec*> found;
  try {
    found = add_model_files(path.string());
  } catch (const ModelError& e) {
    r.fail(g["model_files"], e.what());
  }
  std::vector<const ModelFileSpec*> models;
  if (!g["models"] || (g["models"].IsSequence() && g["models"].size() == 1 && g["models"][0].Scalar() == "all")) {
    models = found;
  } else {
    for (const auto& n : r.items(g["models"], "models")) {
      const std::string name = r.scalar(n, "models");
      auto it = std::find_if(found.begin(), found.end(), [&](const ModelFileSpec* m) { return m->name == name; });
      if (it == found.end()) {
        std::vector<std::string> names;
        for (const ModelFileSpec* m : found) names.push_back(m->name);
        r.fail(n, fmt::format("no model '{}' in {} (has {})", name, given, fmt::join(names, ", ")));
      }
      models.push_back(*it);
    }
  }
  std::vector<DType> dtypes{DType::F32};
  if (g["dtypes"]) {
    dtypes.clear();
    for (const auto& n : r.items(g["dtypes"], "dtypes")) {
      auto d = parse_dtype(r.scalar(n, "dtypes"));
      if (!d) r.fail(n, fmt::format("unknown dtype '{}'", n.Scalar()));
      dtypes.push_back(*d);
    }
  }
  std::vector<std::string> configs{"default"};
  if (g["configs"]) configs = r.list(g["configs"], "configs");
  std::vector<std::string> scenario_names{"batch"};
  if (g["scenarios"]) {
    scenario_names = r.list(g["scenarios"], "scenarios");
    for (const std::string& sc : scenario_names) {
      if (!scenarios().count(sc))
        r.fail(g["scenarios"], fmt::format("scenario '{}' is not one of batch, online, train, finetune", sc));
    }
  }
  for (Case& c : model_file_cases(
           models, dtypes, configs, [&](const std::string& what) { r.fail(g, what); }, scenario_names)) {
    out.push_back(std::move(c));
  }
}

// A group of one op case given by its key: `{key: "op/...", from: [model, ...]}`, as
// `gauntlet ops-from-models` writes them (Note [Ops from models]). The key must be canonical and
// valid; `from` names the models it was cut from, kept as the case's note.
void expand_key_group(const Reader& r, const YAML::Node& g, std::vector<Case>& out) {
  r.only_fields(g, {"key", "from", "name"}, "a key group");
  const std::string text = r.scalar(g["key"], "key");
  CaseKey k;
  try {
    k = CaseKey::parse(text);
  } catch (const KeyError& e) {
    r.fail(g["key"], fmt::format("key: {}", e.what()));
  }
  if (k.kind != "op") r.fail(g["key"], "key: a key group holds an op case (op/...)");
  if (k.str() != text) r.fail(g["key"], fmt::format("key: not canonical; write {}", k.str()));
  if (auto problem = validate_key(k)) r.fail(g["key"], fmt::format("key: {}", *problem));
  Case c;
  c.text = text;
  c.id = key_id(text);
  c.key = std::move(k);
  if (g["from"]) c.note = fmt::format("from models: {}", fmt::join(r.list(g["from"], "from"), ", "));
  out.push_back(std::move(c));
}

void expand_group(const Reader& r, const YAML::Node& g, const YAML::Node& shape_sets, std::vector<Case>& out) {
  if (g.IsMap() && g["key"]) {
    expand_key_group(r, g, out);
    return;
  }
  if (g.IsMap() && g["collectives"]) {
    expand_coll_group(r, g, out);
    return;
  }
  if (g.IsMap() && g["model_files"]) {
    expand_model_file_group(r, g, r.file(), out);
    return;
  }
  if (g.IsMap() && g["models"]) {
    expand_model_group(r, g, out);
    return;
  }
  r.only_fields(g, {"name", "ops", "families", "dtypes", "shapes", "layouts", "modes", "args", "values"}, "a group");
  std::vector<const OpSpec*> ops;
  if (g["ops"]) {
    for (const auto& n : r.items(g["ops"], "ops")) {
      const OpSpec* op = find_op(r.scalar(n, "ops"));
      if (!op) r.fail(n, unknown_op_message(n.Scalar()));
      ops.push_back(op);
    }
  }
  if (g["families"]) {
    for (const auto& n : r.items(g["families"], "families")) {
      std::string fam = r.scalar(n, "families");
      std::size_t before = ops.size();
      for (const OpSpec* op : all_ops()) {
        if (op->family == fam) ops.push_back(op);
      }
      if (ops.size() == before) {
        std::vector<std::string> families;
        for (const OpSpec* op : all_ops()) families.push_back(op->family);
        r.fail(n, "unknown op family '" + fam + "'" + nearest_hint(fam, families));
      }
    }
  }
  if (ops.empty()) r.fail(g, "a group needs 'ops' or 'families'");
  if (!g["dtypes"]) r.fail(g, "a group needs 'dtypes'");
  if (!g["shapes"]) r.fail(g, "a group needs 'shapes'");

  std::vector<DType> dtypes;
  for (const auto& n : r.items(g["dtypes"], "dtypes")) {
    auto d = parse_dtype(r.scalar(n, "dtypes"));
    if (!d) r.fail(n, fmt::format("unknown dtype '{}' (known: {})", n.Scalar(), dtype_set_str(kAllTypes)));
    dtypes.push_back(*d);
  }
  auto shapes = read_shapes(r, g["shapes"], shape_sets);
  std::vector<Layout> layouts{Layout::Contig};
  if (g["layouts"]) {
    layouts.clear();
    for (const auto& n : r.items(g["layouts"], "layouts"))
      layouts.push_back(parse_enum<Layout>(r, n, r.scalar(n, "layouts"), 4, layout_name, "layout"));
  }
  std::vector<Mode> modes{Mode::Eager};
  if (g["modes"]) {
    modes.clear();
    for (const auto& n : r.items(g["modes"], "modes"))
      modes.push_back(parse_enum<Mode>(r, n, r.scalar(n, "modes"), 3, mode_name, "mode"));
  }
  auto arg_sets = read_args(r, g["args"]);
  std::vector<std::string> values{"normal"};
  if (g["values"]) {
    values = r.list(g["values"], "values");
    for (const auto& v : values) {
      if (v != "normal" && v != "special") r.fail(g["values"], "values are 'normal' or 'special'");
    }
  }

  for (const OpSpec* op : ops) {
    for (const auto& shape : shapes) {
      if (shape.size() < op->min_inputs() || shape.size() > op->max_inputs()) {
        const std::string takes = op->min_inputs() == op->max_inputs()
                                      ? std::to_string(op->min_inputs())
                                      : fmt::format("{} to {}", op->min_inputs(), op->max_inputs());
        r.fail(g["shapes"],
               fmt::format("op {} takes {} tensor inputs; a shape entry gives {}", op->name, takes, shape.size()));
      }
      for (DType d : dtypes) {
        if (!contains(op->dtypes, d)) continue;
        for (Layout l : layouts) {
          if (!layout_fits(l, shape.front())) continue;
          for (Mode m : modes) {
            if (m == Mode::EagerBwd && (!op->backward_fits(shape) || !is_floating(d))) continue;
            for (const auto& v : values) {
              if (v == "special" && (!op->special_values || !is_floating(d))) continue;
              for (const auto& args : arg_sets) {
                CaseKey k;
                k.target = op->name;
                k.dtype = d;
                k.shapes = shape;
                k.layout = l;
                k.mode = m;
                k.args = args;
                if (v == "special") k.args["values"] = "special";
                if (auto problem = validate_key(k)) {
                  // Point at the args list when the problem is an argument, else at the group.
                  const bool about_args = !args.empty() && problem->find("argument") != std::string::npos;
                  r.fail(about_args ? g["args"] : g, *problem + " (in " + k.str() + ")");
                }
                Case c;
                c.text = k.str();
                c.id = key_id(c.text);
                c.key = std::move(k);
                out.push_back(std::move(c));
              }
            }
          }
        }
      }
    }
  }
}

bool ends_with(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() && s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

}  // namespace

std::vector<std::string> list_suites(const std::string& dir) {
  std::vector<std::string> names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    std::string f = e.path().filename().string();
    if (ends_with(f, ".yaml") && f != "expectations.yaml" && f != "tolerances.yaml") {
      names.push_back(f.substr(0, f.size() - 5));
    }
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Note [Model file suites]: `run --model FILE` (and --suite FILE.pt) runs the model files at FILE
// (a .pt, a manifest, or a folder of them) as a suite of their own: f32, every config, eager
// inference. The suite is named after the model (model_<name>) and its file is FILE, so resume
// and repro read it again.
Suite model_file_suite(const std::string& path) {
  std::vector<const ModelFileSpec*> models;
  try {
    models = add_model_files(path);
  } catch (const ModelError& e) {
    throw CatalogError(e.what());
  }
  Suite s;
  s.file = path;
  s.name = models.size() == 1 ? "model_" + models[0]->name : "model_files_" + fs::path(path).filename().string();
  s.description = models.size() == 1 ? fmt::format("The model file {} ({})", models[0]->file, models[0]->description)
                                     : fmt::format("The model files in {}", path);
  s.tags = {"models", "model_files"};
  s.timeout_s = 600;
  s.cases = model_file_cases(models, {DType::F32}, {"all"},
                             [&](const std::string& what) { throw CatalogError(path + ": " + what); });
  for (Case& c : s.cases) c.timeout_s = s.timeout_s;
  std::sort(s.cases.begin(), s.cases.end(), [](const Case& a, const Case& b) { return a.text < b.text; });
  return s;
}

bool is_model_file_path(const std::string& p) {
  if (p.rfind("model:", 0) == 0) return true;
  const std::string ext = fs::path(p).extension().string();
  return ext == ".pt" || ext == ".ptl" || ext == ".torchscript";
}

namespace {
Suite load_suite_including(const std::string& name_or_path, const std::string& dir,
                           std::vector<std::string>& including);
}  // namespace

Suite load_suite(const std::string& name_or_path, const std::string& dir) {
  std::vector<std::string> including;
  return load_suite_including(name_or_path, dir, including);
}

namespace {

// `including`: the files being loaded, outermost first (Note [Included suites]: a cycle is an
// error naming it).
Suite load_suite_including(const std::string& name_or_path, const std::string& dir,
                           std::vector<std::string>& including) {
  if (is_model_file_path(name_or_path)) {
    return model_file_suite(name_or_path.rfind("model:", 0) == 0 ? name_or_path.substr(6) : name_or_path);
  }
  std::string path = ends_with(name_or_path, ".yaml") ? name_or_path : dir + "/" + name_or_path + ".yaml";
  if (!fs::exists(path)) {
    throw CatalogError(fmt::format("unknown suite '{}': no file {} (suites in {}: {})", name_or_path, path, dir,
                                   fmt::join(list_suites(dir), ", ")));
  }
  Reader r(path);
  YAML::Node root = r.load();
  if (!root.IsMap()) r.fail(root, "a suite file is a mapping with suite, description, tags and groups");
  r.only_fields(root, {"suite", "description", "tags", "timeout", "shape_sets", "groups", "include"}, "a suite file");
  for (const char* f : {"suite", "description"}) {
    if (!root[f]) r.fail(root, fmt::format("missing field '{}'", f));
  }
  if (!root["groups"] && !root["include"]) r.fail(root, "missing field 'groups' (or 'include')");
  Suite s;
  s.file = path;
  s.name = r.scalar(root["suite"], "suite");
  s.description = r.scalar(root["description"], "description");
  if (root["tags"]) s.tags = r.list(root["tags"], "tags");
  if (root["timeout"]) {
    try {
      s.timeout_s = root["timeout"].as<double>();
    } catch (const YAML::Exception&) {
      r.fail(root["timeout"], "timeout is a number of seconds");
    }
    if (!(s.timeout_s > 0)) r.fail(root["timeout"], "timeout must be more than 0 seconds");
  }
  if (root["groups"]) {
    if (!root["groups"].IsSequence()) r.fail(root["groups"], "field 'groups' must be a list");
    for (const auto& g : root["groups"]) expand_group(r, g, root["shape_sets"], s.cases);
    if (root["timeout"]) {
      for (Case& c : s.cases) c.timeout_s = s.timeout_s;
    }
  }
  // Note [Included suites]: `include: [a, b]` adds every case of suites a and b (by name, from the
  // same folder as this file, or a path relative to it), with their notes and their suite's
  // `timeout` (a release suite including collectives keeps their 300 s; Case::timeout_s). A key
  // that two parts make is one case (the one with a note, else the first part's).
  if (root["include"]) {
    const std::string canonical = fs::weakly_canonical(path).string();
    if (std::find(including.begin(), including.end(), canonical) != including.end()) {
      r.fail(root["include"], fmt::format("include: a cycle: {} -> {}", fmt::join(including, " -> "), canonical));
    }
    including.push_back(canonical);
    if (!s.cases.empty()) s.parts.push_back({s.name, s.cases.size()});
    for (const std::string& name : r.list(root["include"], "include")) {
      const bool is_path = ends_with(name, ".yaml");
      const std::string target =
          is_path && fs::path(name).is_relative() ? (fs::path(path).parent_path() / name).string() : name;
      Suite inner;
      try {
        inner = load_suite_including(target, is_path ? dir : fs::path(path).parent_path().string(), including);
      } catch (const CatalogError& e) {
        if (std::string(e.what()).find(": include: a cycle") != std::string::npos) throw;
        r.fail(root["include"], fmt::format("include: {}: {}", name, e.what()));
      }
      s.parts.push_back({name, inner.cases.size()});
      for (Case& c : inner.cases) s.cases.push_back(std::move(c));
    }
    including.pop_back();
  }
  // Sorted by key through an index: moving the cases themselves (a dozen strings each) through a
  // merge sort was a third of expanding `full` (202k cases).
  std::vector<std::uint32_t> order(s.cases.size());
  for (std::uint32_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](std::uint32_t a, std::uint32_t b) { return s.cases[a].text < s.cases[b].text; });
  std::vector<Case> unique;
  unique.reserve(s.cases.size());
  for (const std::uint32_t i : order) {
    Case& c = s.cases[i];
    if (!unique.empty() && unique.back().text == c.text) {
      Case& kept = unique.back();
      if (kept.note.empty()) kept.note = std::move(c.note);
      kept.timeout_s = std::max(kept.timeout_s, c.timeout_s);
      continue;
    }
    unique.push_back(std::move(c));
  }
  if (!s.parts.empty()) s.shared = s.cases.size() - unique.size();
  s.cases = std::move(unique);
  return s;
}

}  // namespace

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
