#include "gauntlet/core/catalog/catalog.h"

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

#include "catalog_yaml.h"
#include "gauntlet/base/strings.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/models/models.h"
#include "gauntlet/suites/coll_spec.h"
#include "gauntlet/suites/op_spec.h"

#ifndef GAUNTLET_SOURCE_SUITES_DIR
#define GAUNTLET_SOURCE_SUITES_DIR "suites/yaml"
#endif

namespace gauntlet {

namespace fs = std::filesystem;

namespace {

using catalog_yaml::expand_model_file_group;
using catalog_yaml::expand_model_group;
using catalog_yaml::Reader;

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

// Note [Keys no suite holds]: `scope`, when given, limits the expansion to the groups that can make
// a case of that kind and target (an op group to that op), so that finding the suites that hold
// one key reads every suite file but expands only a few groups.
// `loaded` keeps each file's scoped suite, so that one included by several is read once.
struct Scope {
  std::string kind, target;
  std::map<std::string, Suite>* loaded = nullptr;
};

void expand_group(const Reader& r, const YAML::Node& g, const YAML::Node& shape_sets, std::vector<Case>& out,
                  const Scope* scope) {
  const auto outside = [&](std::string_view kind) { return scope && scope->kind != kind; };
  if (g.IsMap() && g["key"]) {
    // A key group's key starts with its kind and target (op/TARGET/...).
    if (scope && g["key"].IsScalar() && !g["key"].Scalar().starts_with(scope->kind + "/" + scope->target + "/")) return;
    expand_key_group(r, g, out);
    return;
  }
  if (g.IsMap() && g["collectives"]) {
    if (!outside("coll")) expand_coll_group(r, g, out);
    return;
  }
  if (g.IsMap() && g["model_files"]) {
    if (!outside("model")) expand_model_file_group(r, g, r.file(), out);
    return;
  }
  if (g.IsMap() && g["models"]) {
    if (!outside("model")) expand_model_group(r, g, out);
    return;
  }
  if (outside("op")) return;
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
  if (scope) {
    std::erase_if(ops, [&](const OpSpec* op) { return op->name != scope->target; });
    if (ops.empty()) return;
  }
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

namespace {
Suite load_suite_including(const std::string& name_or_path, const std::string& dir, std::vector<std::string>& including,
                           const Scope* scope);
}  // namespace

Suite load_suite(const std::string& name_or_path, const std::string& dir) {
  std::vector<std::string> including;
  return load_suite_including(name_or_path, dir, including, nullptr);
}

// Note [Keys no suite holds]: `repro` runs any valid key, and a key typed by hand (a shape no
// suite has, a dtype the suite does not list) runs happily and proves nothing about a release. So
// repro first asks which suites of its folder hold the key and refuses one that none holds unless
// --any-key; reduce's smaller keys and cases of model files passed to `run --model` are run with
// it. Loading the release suite in full is 213k cases; scoped to the key's op it is a few hundred.
SuitesHolding suites_holding(const CaseKey& key, const std::string& dir) {
  SuitesHolding h;
  std::map<std::string, Suite> loaded;
  const Scope scope{key.kind, key.target, &loaded};
  const std::string text = key.str();
  for (const std::string& name : list_suites(dir)) {
    std::vector<std::string> including;
    try {
      const Suite s = load_suite_including(name, dir, including, &scope);
      const auto at = std::lower_bound(s.cases.begin(), s.cases.end(), text,
                                       [](const Case& c, const std::string& t) { return c.text < t; });
      if (at != s.cases.end() && at->text == text) h.suites.push_back(name);
    } catch (const std::exception& e) {
      h.unreadable.push_back(name + ": " + e.what());
    }
  }
  return h;
}

namespace {

// `including`: the files being loaded, outermost first (Note [Included suites]: a cycle is an
// error naming it).
Suite load_suite_including(const std::string& name_or_path, const std::string& dir, std::vector<std::string>& including,
                           const Scope* scope) {
  if (is_model_file_path(name_or_path)) {
    return model_file_suite(name_or_path.rfind("model:", 0) == 0 ? name_or_path.substr(6) : name_or_path);
  }
  std::string path = ends_with(name_or_path, ".yaml") ? name_or_path : dir + "/" + name_or_path + ".yaml";
  // A mistyped suites folder is named as such, not as a suite missing from it.
  if (std::error_code ec; !ends_with(name_or_path, ".yaml") && !fs::is_directory(dir, ec)) {
    throw CatalogError(
        fmt::format("suites folder {}: {}", dir, fs::exists(dir, ec) ? "not a folder" : "no such folder"));
  }
  if (!fs::exists(path)) {
    const std::vector<std::string> suites = list_suites(dir);
    throw CatalogError(fmt::format("unknown suite '{}'{}: no file {} (suites in {}: {})", name_or_path,
                                   nearest_hint(name_or_path, suites), path, dir, fmt::join(suites, ", ")));
  }
  const std::string cache_key = scope && scope->loaded ? fs::weakly_canonical(path).string() : "";
  if (!cache_key.empty()) {
    if (const auto it = scope->loaded->find(cache_key); it != scope->loaded->end()) return it->second;
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
    if (std::isinf(s.timeout_s)) r.fail(root["timeout"], "timeout must be a finite number of seconds");
  }
  if (root["groups"]) {
    if (!root["groups"].IsSequence()) r.fail(root["groups"], "field 'groups' must be a list");
    for (const auto& g : root["groups"]) expand_group(r, g, root["shape_sets"], s.cases, scope);
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
        inner = load_suite_including(target, is_path ? dir : fs::path(path).parent_path().string(), including, scope);
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
  if (!cache_key.empty()) scope->loaded->emplace(cache_key, s);
  return s;
}

}  // namespace

}  // namespace gauntlet
