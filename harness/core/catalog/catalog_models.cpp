// The model cases of suites (catalog_yaml.h): model groups and their scenarios, and the suites of
// model files (`run --model FILE`).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "catalog_yaml.h"
#include "gauntlet/core/catalog/catalog.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/models/models.h"

namespace gauntlet {

namespace fs = std::filesystem;

namespace catalog_yaml {

// A group of model cases (Note [Model keys]): models x dtypes x configs x execs x modes, pruned
// where a model lacks the dtype or cannot train. With `seqs`, the group's cases are shape
// sequences instead (Note [Shape sequences]): each compile case once per length in `seqs`. With
// `shapes`, each compile case once per way of compiling shapes (`auto`, the compiler's default:
// no argument; `static`; `dynamic`).
void expand_model_group(const Reader& r, const YAML::Node& g, std::vector<Case>& out) {
  r.only_fields(g, {"name", "models", "dtypes", "configs", "execs", "modes", "seqs", "shapes"}, "a model group");
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
  std::vector<std::string> shapes{""};  // "": the compiler's default (dynamo: automatic dynamic)
  if (g["shapes"]) {
    if (std::find(execs.begin(), execs.end(), "compile") == execs.end())
      r.fail(g["shapes"], "shapes (static or dynamic compilation) need the compile exec in 'execs'");
    shapes.clear();
    for (const auto& n : r.items(g["shapes"], "shapes")) {
      const std::string v = r.scalar(n, "shapes");
      if (v != "auto" && v != "static" && v != "dynamic")
        r.fail(n, fmt::format("shapes: '{}' is not auto, static or dynamic", v));
      shapes.push_back(v == "auto" ? "" : v);
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
              for (const std::string& shape : shapes) {
                if (!shape.empty() && e != "compile") continue;
                CaseKey k;
                k.kind = "model";
                k.target = m->name;
                k.dtype = d;
                k.config = c;
                k.exec = e;
                k.mode = mode == "train" ? Mode::EagerBwd : Mode::Eager;
                if (!seq.empty()) k.args["seq"] = seq;
                if (!shape.empty()) k.args["shapes"] = shape;
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

}  // namespace catalog_yaml

using catalog_yaml::model_file_cases;

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

}  // namespace gauntlet
