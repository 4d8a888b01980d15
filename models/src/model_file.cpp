// Model files: manifests, the registry, loading, refilling and moving TorchScript modules
// (Note [Model files] in include/gauntlet/model_file.h).
#define XXH_INLINE_ALL
#include "gauntlet/models/model_file.h"

#include <ATen/record_function.h>
#include <caffe2/serialize/inline_container.h>
#include <dlfcn.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <xxhash.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <nlohmann/json.hpp>
#include <set>
#include <unordered_map>

#include "gauntlet/base/outcome.h"
#include "gauntlet/base/splitmix.h"
#include "gauntlet/plugin/torch_compat.h"
#include "model_yaml.h"

namespace gauntlet {

namespace fs = std::filesystem;
using model_yaml::Reader;

const char* output_compare_name(OutputCompare c) {
  switch (c) {
    case OutputCompare::Scaled:
      return "scaled";
    case OutputCompare::TopK:
      return "topk";
    case OutputCompare::Cosine:
      return "cosine";
    case OutputCompare::Skip:
      return "skip";
  }
  return "?";
}

const std::map<std::string, std::int64_t>* ModelFileSpec::find_config(const std::string& n) const {
  for (const auto& [name, sizes] : configs) {
    if (name == n) return &sizes;
  }
  return nullptr;
}

std::vector<std::string> ModelFileSpec::config_names() const {
  std::vector<std::string> out;
  for (const auto& c : configs) out.push_back(c.first);
  return out;
}

bool ModelFileSpec::supports(const std::string& dtype) const {
  return std::find(dtypes.begin(), dtypes.end(), dtype) != dtypes.end();
}

ModelFileOutput ModelFileSpec::output(std::size_t k) const {
  if (k < outputs.size()) return outputs[k];
  ModelFileOutput o;
  o.name = "out" + std::to_string(k);
  return o;
}

std::int64_t ModelFileSpec::batch(const std::string& config) const {
  const auto* sizes = find_config(config);
  if (!sizes) return 1;
  for (const char* n : {"batch", "b"}) {
    if (auto it = sizes->find(n); it != sizes->end()) return it->second;
  }
  if (!inputs.empty() && !inputs[0].shape.empty()) {
    try {
      return eval_size_expr(inputs[0].shape[0], *sizes);
    } catch (const std::exception&) {
    }
  }
  return 1;
}

namespace {

// A model's identity: the XXH64 of every record of its TorchScript archive (names and bytes, in
// name order) but the *.debug_pkl ones, which hold the source ranges of the exporting process,
// Python call stacks with absolute paths included, and .data/serialization_id, which PyTorch 2.x
// draws anew at every save: the same model exported twice, or from two checkouts, is one case
// history. A file that is not a TorchScript archive is hashed whole (torch::jit::load
// then names the problem).
std::string hash_file(const std::string& path, std::int64_t& bytes) {
  std::error_code ec;
  bytes = static_cast<std::int64_t>(fs::file_size(path, ec));
  if (ec) throw ModelError(path + ": cannot read the model file");
  XXH64_state_t* st = XXH64_createState();
  XXH64_reset(st, 0);
  bool archive = false;
  try {
    caffe2::serialize::PyTorchStreamReader reader(path);
    std::vector<std::string> names = reader.getAllRecords();
    std::sort(names.begin(), names.end());
    for (const std::string& name : names) {
      if (name.size() >= 10 && name.compare(name.size() - 10, 10, ".debug_pkl") == 0) continue;
      if (name.size() >= 16 && name.compare(name.size() - 16, 16, "serialization_id") == 0) continue;
      auto [data, size] = reader.getRecord(name);
      XXH64_update(st, name.data(), name.size() + 1);
      XXH64_update(st, data.get(), size);
    }
    archive = true;
  } catch (const c10::Error&) {
    XXH64_reset(st, 0);
  }
  if (!archive) {
    std::ifstream in(path, std::ios::binary);
    if (!in) {
      XXH64_freeState(st);
      throw ModelError(path + ": cannot read the model file");
    }
    std::vector<char> buf(1 << 20);
    while (in) {
      in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
      if (in.gcount() > 0) XXH64_update(st, buf.data(), static_cast<std::size_t>(in.gcount()));
    }
  }
  const std::uint64_t h = XXH64_digest(st);
  XXH64_freeState(st);
  return fmt::format("{:016x}", h).substr(0, 8);
}

bool is_key_name(const std::string& s) {
  if (s.empty() || s.size() > 64) return false;
  return std::all_of(s.begin(), s.end(), [](char c) {
    return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
  });
}

// "ResNet-18 v2" -> "resnet_18_v2": a file stem as a key name.
std::string key_name_of(const std::string& stem) {
  std::string out;
  for (char c : stem) {
    const unsigned char u = static_cast<unsigned char>(c);
    if (std::isalnum(u)) {
      out += static_cast<char>(std::tolower(u));
    } else if (!out.empty() && out.back() != '_') {
      out += '_';
    }
  }
  while (!out.empty() && out.back() == '_') out.pop_back();
  if (out.size() > 64) out.resize(64);
  return out.empty() ? "model" : out;
}

OutputCompare parse_compare(const Reader& r, const YAML::Node& n) {
  const std::string s = r.scalar(n, "compare");
  for (OutputCompare c : {OutputCompare::Scaled, OutputCompare::TopK, OutputCompare::Cosine, OutputCompare::Skip}) {
    if (s == output_compare_name(c)) return c;
  }
  r.fail(n, fmt::format("field 'compare': '{}' is not one of scaled, topk, cosine, skip", s));
}

const std::set<std::string> kInputDtypes = {"float", "int64", "bool", "f32", "f64", "bf16", "f16"};

}  // namespace

namespace {

// The manifest and the model file `path_in` names (either of them); `file` is left empty when
// the manifest names it.
void locate_model_file(const std::string& path_in, fs::path& manifest, fs::path& file) {
  const fs::path given = fs::absolute(path_in).lexically_normal();
  if (given.extension() == ".yaml" || given.extension() == ".yml") {
    manifest = given;
  } else {
    file = given;
    manifest = fs::path(given).replace_extension(".yaml");
    if (!fs::exists(file)) throw ModelError(path_in + ": no such model file");
    if (!fs::exists(manifest)) {
      throw ModelError(
          fmt::format("{}: no manifest {} beside it: write one with the model's inputs (docs/models.md, "
                      "\"Qualify your own model\"), e.g. inputs: [{{name: x, shape: [1, 3, 224, 224]}}]",
                      path_in, manifest.filename().string()));
    }
  }
  if (!fs::exists(manifest)) throw ModelError(path_in + ": no such manifest");
}

// One entry of `inputs`.
ModelFileInput read_input(Reader& r, const YAML::Node& n, std::set<std::string>& names) {
  r.only_fields(n, {"name", "shape", "dtype", "range", "bound", "fill"}, "an input");
  ModelFileInput in;
  in.where = r.where(n);
  in.name = r.name(r.need(n, "name", "an input"), "name");
  if (!names.insert(in.name).second) r.fail(n, fmt::format("input '{}' is listed twice", in.name));
  for (const auto& d : r.seq(r.need(n, "shape", "an input"), "shape")) in.shape.push_back(r.scalar(d, "shape"));
  if (n["dtype"]) {
    in.dtype = r.scalar(n["dtype"], "dtype");
    if (!kInputDtypes.count(in.dtype))
      r.fail(n["dtype"],
             fmt::format("field 'dtype': '{}' is not one of float, int64, bool, f32, f64, bf16, f16", in.dtype));
  }
  if (n["range"]) {
    const auto rng = r.seq(n["range"], "range");
    if (rng.size() != 2) r.fail(n["range"], "field 'range' is [low, high]");
    in.lo = r.number(rng[0], "range");
    in.hi = r.number(rng[1], "range");
    if (!(std::isfinite(in.lo) && std::isfinite(in.hi) && in.lo <= in.hi))
      r.fail(n["range"], "field 'range': need finite low <= high");
  }
  const bool integer = in.dtype == "int64" || in.dtype == "bool";
  if (n["bound"]) {
    if (in.dtype != "int64") r.fail(n["bound"], "field 'bound' is for int64 inputs");
    in.bound = r.scalar(n["bound"], "bound");
  }
  if (n["fill"]) {
    if (in.dtype != "int64") r.fail(n["fill"], "field 'fill' is for int64 inputs");
    in.fill = r.scalar(n["fill"], "fill");
  }
  if (in.dtype == "int64" && in.bound.empty() && in.fill.empty())
    r.fail(n, fmt::format("input '{}': an int64 input needs 'bound' (values in [0, bound)) or 'fill'", in.name));
  if (integer && n["range"]) r.fail(n["range"], "field 'range' is for floating inputs");
  return in;
}

// `configs`: named sizes.
void read_configs(Reader& r, const YAML::Node& root, ModelFileSpec& s) {
  const YAML::Node cs = root["configs"];
  if (!cs.IsMap() || cs.size() == 0)
    r.fail(cs, "field 'configs' is a mapping of config names to sizes, e.g. b1: {batch: 1}");
  for (const auto& kv : cs) {
    const std::string cname = kv.first.Scalar();
    if (cname.empty() || !std::all_of(cname.begin(), cname.end(), [](char c) {
          return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_';
        }))
      r.fail(kv.first, fmt::format("config '{}': a config name is lowercase letters, digits and _", cname));
    std::map<std::string, std::int64_t> sizes;
    if (!kv.second.IsMap()) r.fail(kv.second, fmt::format("config '{}' is a mapping of size names to numbers", cname));
    for (const auto& sz : kv.second) {
      const std::string sname = sz.first.Scalar();
      const double v = r.number(sz.second, "configs." + cname + "." + sname);
      if (!(v >= 1 && v <= (1 << 30) && v == std::floor(v)))
        r.fail(sz.second, fmt::format("config '{}': size {} = {} is not a whole number from 1 to 2^30", cname, sname,
                                      sz.second.Scalar()));
      sizes[sname] = static_cast<std::int64_t>(v);
    }
    s.configs.emplace_back(cname, std::move(sizes));
  }
}

// Every shape and bound evaluates under every config.
void check_sizes(const fs::path& manifest, const ModelFileSpec& s) {
  for (const auto& [cname, sizes] : s.configs) {
    for (const ModelFileInput& in : s.inputs) {
      std::vector<std::pair<std::string, std::int64_t>> exprs;  // expression, least value
      for (const std::string& e : in.shape) exprs.emplace_back(e, 0);
      if (!in.bound.empty()) exprs.emplace_back(in.bound, 1);
      if (!in.fill.empty()) exprs.emplace_back(in.fill, 0);
      for (const auto& [e, least] : exprs) {
        try {
          if (eval_size_expr(e, sizes) < least) throw std::invalid_argument(fmt::format("less than {}", least));
        } catch (const std::exception& ex) {
          throw ModelError(fmt::format("{}:{}: input '{}': '{}' under config '{}': {}", manifest.string(),
                                       in.where.substr(in.where.rfind(':') + 1), in.name, e, cname, ex.what()));
        }
      }
    }
  }
}

// One entry of `outputs`.
ModelFileOutput read_output(Reader& r, const YAML::Node& n, std::set<std::string>& onames) {
  r.only_fields(n, {"name", "compare", "tolerance", "dim"}, "an output");
  ModelFileOutput o;
  o.where = r.where(n);
  o.name = r.name(r.need(n, "name", "an output"), "name");
  if (!onames.insert(o.name).second) r.fail(n, fmt::format("output '{}' is listed twice", o.name));
  if (n["compare"]) o.compare = parse_compare(r, n["compare"]);
  if (n["tolerance"]) {
    const double t = r.number(n["tolerance"], "tolerance");
    if (!(t > 0 && t < 1)) r.fail(n["tolerance"], "field 'tolerance' is a fraction between 0 and 1");
    o.tolerance = t;
  }
  if (n["dim"]) {
    if (o.compare != OutputCompare::TopK) r.fail(n["dim"], "field 'dim' is the class dimension of a topk output");
    const double d = r.number(n["dim"], "dim");
    if (d != std::floor(d) || d < -8 || d > 7) r.fail(n["dim"], "field 'dim' is a dimension index, -8 to 7");
    o.dim = static_cast<std::int64_t>(d);
  }
  return o;
}

}  // namespace

ModelFileSpec load_model_file_spec(const std::string& path_in) {
  ModelFileSpec s;
  fs::path manifest, file;
  locate_model_file(path_in, manifest, file);
  Reader r(manifest.string());
  const YAML::Node root = r.load();
  if (!root.IsMap()) r.fail(root, "a model manifest is a mapping with at least 'inputs'");
  r.only_fields(root,
                {"name", "file", "description", "source", "export", "task", "tags", "inputs", "configs", "dtypes",
                 "golden", "libraries", "outputs", "degenerate"},
                "a model manifest");
  s.manifest = manifest.string();
  if (root["file"]) {
    const std::string f = r.scalar(root["file"], "file");
    file = fs::path(f).is_absolute() ? fs::path(f) : manifest.parent_path() / f;
  } else if (file.empty()) {
    file = fs::path(manifest).replace_extension(".pt");
  }
  file = file.lexically_normal();
  if (!fs::exists(file)) r.fail(root["file"] ? root["file"] : root, fmt::format("no model file {}", file.string()));
  s.file = file.string();
  if (root["name"]) {
    s.name = r.scalar(root["name"], "name");
    if (!is_key_name(s.name))
      r.fail(root["name"],
             fmt::format("field 'name': '{}' is not lowercase letters, digits and _ (at most 64)", s.name));
  } else {
    s.name = key_name_of(file.stem().string());
  }
  for (const char* f : {"description", "source", "export", "task", "degenerate"}) {
    if (!root[f]) continue;
    const std::string v = r.scalar(root[f], f);
    std::string* dst = std::string(f) == "description" ? &s.description
                       : std::string(f) == "source"    ? &s.source
                       : std::string(f) == "export"    ? &s.export_method
                       : std::string(f) == "task"      ? &s.task
                                                       : &s.degenerate;
    *dst = v;
  }
  if (root["tags"]) {
    for (const auto& t : r.seq(root["tags"], "tags")) s.tags.push_back(r.scalar(t, "tags"));
  }

  // inputs
  const YAML::Node inputs = r.need(root, "inputs", "a model manifest");
  if (r.seq(inputs, "inputs").empty()) r.fail(inputs, "field 'inputs': a model takes at least one input");
  std::set<std::string> names;
  for (const auto& n : r.seq(inputs, "inputs")) {
    s.inputs.push_back(read_input(r, n, names));
  }

  // configs: named sizes; without any, one config "default" (the shapes must then be numbers)
  if (root["configs"]) {
    read_configs(r, root, s);
  } else {
    s.configs.emplace_back("default", std::map<std::string, std::int64_t>{});
  }
  // every shape and bound evaluates under every config
  check_sizes(manifest, s);
  if (root["dtypes"]) {
    s.dtypes.clear();
    for (const auto& d : r.seq(root["dtypes"], "dtypes")) {
      const std::string v = r.scalar(d, "dtypes");
      if (v != "f32" && v != "f64" && v != "bf16" && v != "f16")
        r.fail(d, fmt::format("dtype '{}' is not one of f32, f64, bf16, f16", v));
      s.dtypes.push_back(v);
    }
    if (s.dtypes.empty()) r.fail(root["dtypes"], "field 'dtypes' lists at least one dtype");
  }
  if (root["golden"]) {
    s.golden = r.scalar(root["golden"], "golden");
    if (s.golden != "f64" && s.golden != "f32")
      r.fail(root["golden"], "field 'golden' is f64 or f32 (the golden's dtype on the CPU)");
  }
  if (root["libraries"]) {
    for (const auto& l : r.seq(root["libraries"], "libraries")) s.libraries.push_back(r.scalar(l, "libraries"));
  }
  if (root["outputs"]) {
    std::set<std::string> onames;
    for (const auto& n : r.seq(root["outputs"], "outputs")) {
      s.outputs.push_back(read_output(r, n, onames));
    }
  }
  s.hash = hash_file(s.file, s.file_bytes);
  return s;
}

std::vector<ModelFileSpec> load_model_files(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return {load_model_file_spec(path)};
  std::vector<std::string> manifests;
  for (const auto& e : fs::directory_iterator(path, ec)) {
    if (e.is_regular_file() && e.path().extension() == ".yaml") manifests.push_back(e.path().string());
  }
  if (ec) throw ModelError(fmt::format("{}: cannot list the folder: {}", path, ec.message()));
  std::sort(manifests.begin(), manifests.end());
  if (manifests.empty()) throw ModelError(fmt::format("{}: no model manifests (*.yaml) in this folder", path));
  std::vector<ModelFileSpec> out;
  std::set<std::string> seen;
  for (const std::string& m : manifests) {
    out.push_back(load_model_file_spec(m));
    if (!seen.insert(out.back().name).second)
      throw ModelError(fmt::format("{}: a second model named {} in {}", m, out.back().name, path));
  }
  return out;
}

// ---- the registry (Note [Model file registry]) ----

namespace {

struct Registry {
  std::mutex mu;
  bool loaded = false;
  std::vector<std::unique_ptr<ModelFileSpec>> models;
  std::set<std::string> sources;

  void add_locked(const std::string& source, std::vector<const ModelFileSpec*>* added) {
    for (ModelFileSpec& s : load_model_files(source)) {
      for (const auto& m : models) {
        if (m->key_name() == s.key_name()) {
          if (added) added->push_back(m.get());
          goto next;
        }
      }
      models.push_back(std::make_unique<ModelFileSpec>(std::move(s)));
      if (added) added->push_back(models.back().get());
    next:;
    }
    sources.insert(source);
  }

  void load_env_locked() {
    if (loaded) return;
    loaded = true;
    const char* env = std::getenv("GAUNTLET_MODEL_FILES");
    if (!env || !*env) return;
    std::string all(env);
    std::size_t i = 0;
    while (i <= all.size()) {
      std::size_t j = all.find(':', i);
      if (j == std::string::npos) j = all.size();
      const std::string part = all.substr(i, j - i);
      if (!part.empty()) {
        try {
          add_locked(part, nullptr);
        } catch (const ModelError& e) {
          throw ModelError(std::string("$GAUNTLET_MODEL_FILES: ") + e.what());
        }
      }
      i = j + 1;
    }
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

std::vector<const ModelFileSpec*> add_model_files(const std::string& path) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.load_env_locked();
  const std::string abs = fs::absolute(path).lexically_normal().string();
  std::vector<const ModelFileSpec*> added;
  r.add_locked(abs, &added);
  const char* env = std::getenv("GAUNTLET_MODEL_FILES");
  std::string value = env ? env : "";
  bool present = false;
  for (std::size_t i = 0; i <= value.size();) {
    std::size_t j = value.find(':', i);
    if (j == std::string::npos) j = value.size();
    if (value.compare(i, j - i, abs) == 0) present = true;
    i = j + 1;
  }
  if (!present) {
    value = value.empty() ? abs : value + ":" + abs;
    ::setenv("GAUNTLET_MODEL_FILES", value.c_str(), 1);
  }
  return added;
}

const ModelFileSpec* find_model_file(const std::string& key_name) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.load_env_locked();
  for (const auto& m : r.models) {
    if (m->key_name() == key_name) return m.get();
  }
  return nullptr;
}

std::vector<const ModelFileSpec*> registered_model_files() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.load_env_locked();
  std::vector<const ModelFileSpec*> out;
  for (const auto& m : r.models) out.push_back(m.get());
  return out;
}

// ---- libraries ----

namespace {

// Note [Extension libraries]: torchvision's and torchaudio's op libraries are looked for beside the
// torch this process runs (the site-packages that holds torch/lib/libc10.so: the environment
// ci/setup.sh makes, or the user's own); $GAUNTLET_<NAME>_LIB names another. They load without
// Python, but a wheel's library names libtorch.so and torch's CUDA libraries without a path (Python
// has loaded them by then): those are loaded first, by path, from torch/lib.
fs::path torch_lib_dir() {
  const std::string dir = compat::torch_lib_dir();
  return dir.empty() ? fs::path() : fs::weakly_canonical(dir);
}

std::string find_library(const std::string& name) {
  std::string upper = name;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (const char* env = std::getenv(("GAUNTLET_" + upper + "_LIB").c_str()); env && *env) return env;
  const fs::path lib_dir = torch_lib_dir();
  if (lib_dir.empty()) return "";
  const fs::path pkg = lib_dir.parent_path().parent_path() / name;
  std::error_code ec;
  if (!fs::is_directory(pkg, ec)) return "";
  // torchaudio: lib/libtorchaudio.so (lib/libtorchaudio.abi3.so on its stable ABI); torchvision:
  // _C.so, _C.<abi>.so or _C_stable.so (the stable ABI's, from 0.26 on).
  const fs::path dir = name == "torchaudio" ? pkg / "lib" : pkg;
  const std::string stem = name == "torchaudio" ? "libtorchaudio." : "_C";
  std::vector<fs::path> found;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    const std::string n = e.path().filename().string();
    if (n.rfind(stem, 0) == 0 && e.path().extension() == ".so") found.push_back(e.path());
  }
  std::sort(found.begin(), found.end());
  return found.empty() ? "" : found.front().string();
}

// libtorch.so and, through its rpath, torch's CUDA libraries: what a wheel's extension library
// names without a path. Loaded once, only when an extension is.
void load_torch_for_extensions() {
  static const bool done = [] {
    const fs::path lib = torch_lib_dir() / "libtorch.so";
    std::error_code ec;
    if (fs::exists(lib, ec)) ::dlopen(lib.c_str(), RTLD_NOW | RTLD_GLOBAL);
    return true;
  }();
  (void)done;
}

}  // namespace

std::string model_library_path(const ModelFileSpec& spec, const std::string& lib) {
  const bool is_path = lib.find('/') != std::string::npos;
  return is_path ? (fs::path(lib).is_absolute() ? lib : (fs::path(spec.manifest).parent_path() / lib).string())
                 : find_library(lib);
}

void load_model_libraries(const ModelFileSpec& spec) {
  static std::mutex mu;
  static std::set<std::string> loaded;
  std::lock_guard<std::mutex> lock(mu);
  for (const std::string& lib : spec.libraries) {
    if (loaded.count(lib)) continue;
    const std::string path = model_library_path(spec, lib);
    if (path.empty()) {
      throw ModelError(
          fmt::format("{}: custom-op library '{}' not found beside torch in {} (pip install {} there, or "
                      "set GAUNTLET_{}_LIB)",
                      spec.manifest, lib, torch_lib_dir().parent_path().parent_path().string(), lib, [&] {
                        std::string u = lib;
                        for (char& c : u) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
                        return u;
                      }()));
    }
    load_torch_for_extensions();
    if (!::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL)) {
      const char* err = ::dlerror();
      throw ModelError(fmt::format("{}: cannot load custom-op library {}: {}", spec.manifest, path, err ? err : "?"));
    }
    loaded.insert(lib);
  }
}

// ---- inputs ----

namespace {

std::uint64_t name_seed(const std::string& s) {
  return XXH64(s.data(), s.size(), 0x6d6f64656c66696cULL);  // "modelfil"
}

at::Tensor uniform_double(at::IntArrayRef shape, SplitMix64& rng, double lo, double hi) {
  at::Tensor t = at::empty(shape, at::kDouble);
  double* p = t.data_ptr<double>();
  const double span = hi - lo;
  for (std::int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = lo + span * rng.uniform();
  return t;
}

}  // namespace

std::vector<at::Tensor> make_model_file_inputs(const ModelFileSpec& spec, const std::string& config,
                                               at::ScalarType dtype, std::uint64_t seed, std::int64_t batch) {
  const auto* config_sizes = spec.find_config(config);
  if (!config_sizes)
    throw ModelError(
        fmt::format("model {} has no config '{}' (has {})", spec.name, config, fmt::join(spec.config_names(), ", ")));
  std::map<std::string, std::int64_t> batch_sizes;
  const std::map<std::string, std::int64_t>* sizes = config_sizes;
  if (batch > 0) {
    batch_sizes = *config_sizes;
    for (const char* n : {"batch", "b"}) {
      if (auto it = batch_sizes.find(n); it != batch_sizes.end()) it->second = batch;
    }
    sizes = &batch_sizes;
  }
  std::vector<at::Tensor> out;
  for (const ModelFileInput& in : spec.inputs) {
    std::vector<std::int64_t> shape;
    for (const std::string& e : in.shape) shape.push_back(eval_size_expr(e, *sizes));
    SplitMix64 rng(seed ^ name_seed(in.name));
    if (in.dtype == "int64" || in.dtype == "bool") {
      at::Tensor t = at::empty(shape, at::kLong);
      std::int64_t* p = t.data_ptr<std::int64_t>();
      const std::int64_t bound = in.dtype == "bool" ? 2 : in.bound.empty() ? 0 : eval_size_expr(in.bound, *sizes);
      const std::int64_t fill = in.fill.empty() ? 0 : eval_size_expr(in.fill, *sizes);
      for (std::int64_t i = 0, n = t.numel(); i < n; ++i) p[i] = in.fill.empty() ? rng.below(bound) : fill;
      out.push_back(in.dtype == "bool" ? t.to(at::kBool) : t);
      continue;
    }
    const at::ScalarType t = in.dtype == "float" ? dtype : model_dtype(in.dtype);
    out.push_back(uniform_double(shape, rng, in.lo, in.hi).to(t));
  }
  return out;
}

// ---- modules ----

void convert_module_tensors(torch::jit::Module& module, const std::function<at::Tensor(const at::Tensor&)>& convert) {
  std::unordered_map<const c10::TensorImpl*, at::Tensor> done;
  auto one = [&](const at::Tensor& t) -> at::Tensor {
    if (!t.defined()) return t;
    auto it = done.find(t.unsafeGetTensorImpl());
    if (it != done.end()) return it->second;
    at::Tensor c = convert(t);
    done.emplace(t.unsafeGetTensorImpl(), c);
    return c;
  };
  std::set<const c10::ivalue::Object*> visited;
  std::function<void(const c10::intrusive_ptr<c10::ivalue::Object>&)> walk =
      [&](const c10::intrusive_ptr<c10::ivalue::Object>& obj) {
        if (!visited.insert(obj.get()).second) return;
        for (std::size_t i = 0; i < obj->slots().size(); ++i) {
          const c10::IValue v = obj->getSlot(i);
          if (v.isTensor()) {
            obj->setSlot(i, one(v.toTensor()));
          } else if (v.isTensorList()) {
            c10::List<at::Tensor> list = v.toTensorList();
            for (std::size_t k = 0; k < list.size(); ++k) list.set(k, one(list.get(k)));
          } else if (v.isList()) {
            c10::List<c10::IValue> list = v.toList();
            for (std::size_t k = 0; k < list.size(); ++k) {
              const c10::IValue e = list.get(k);
              if (e.isTensor())
                list.set(k, one(e.toTensor()));
              else if (e.isObject())
                walk(e.toObject());
            }
          } else if (v.isObject()) {
            walk(v.toObject());
          }
        }
      };
  walk(module._ivalue());
}

namespace {

// The tensor at a dotted attribute path ("layer1.0.conv1.weight"); undefined when absent.
at::Tensor tensor_at(const torch::jit::Module& module, const std::string& path) {
  c10::IValue cur = module._ivalue();
  std::size_t i = 0;
  while (i <= path.size()) {
    std::size_t j = path.find('.', i);
    if (j == std::string::npos) j = path.size();
    const std::string part = path.substr(i, j - i);
    if (cur.isObject()) {
      const auto obj = cur.toObject();
      if (!obj->type()->hasAttribute(part)) return {};
      cur = obj->getAttr(part);
    } else if (cur.isList()) {
      const auto list = cur.toList();
      const std::size_t k = static_cast<std::size_t>(std::atoll(part.c_str()));
      if (k >= list.size()) return {};
      cur = list.get(k);
    } else {
      return {};
    }
    i = j + 1;
  }
  return cur.isTensor() ? cur.toTensor() : at::Tensor();
}

}  // namespace

// Note [Weightless model files]: the refill draws each listed tensor from a splitmix stream seeded
// from (seed, path), in double, then rounds it once to the case's dtype:
//   std > 0:                 uniform with the recorded mean and standard deviation,
//                            [mean - sqrt(3) std, mean + sqrt(3) std];
//   constant, 2 or more dims: uniform in +-1/sqrt(fan_in) (a zero-initialised head, ViT's, would
//                            make every output 0 and every comparison vacuous);
//   constant, fewer dims:    mean +- 10% of |mean| (running_var 1 -> [0.9, 1.1]), or +-0.1 for 0.
// Integer buffers and floating buffers other than batch-norm statistics (positional encodings,
// windows, anchors) keep the values saved in the file.
torch::jit::Module load_model_module(const ModelFileSpec& spec, at::ScalarType dtype, at::ScalarType target_dtype,
                                     const c10::Device& device, std::uint64_t seed, std::size_t* weightless) {
  load_model_libraries(spec);
  torch::jit::ExtraFilesMap extra{{"gauntlet/weightless.json", ""}};
  torch::jit::Module m;
  try {
    m = torch::jit::load(spec.file, c10::Device(c10::kCPU), extra);
  } catch (const c10::Error& e) {
    std::string what = e.what_without_backtrace();
    throw ModelError(fmt::format("{}: torch::jit::load failed: {}", spec.file, what.substr(0, what.find('\n'))));
  }
  m.eval();
  std::unordered_map<const c10::TensorImpl*, at::Tensor> refilled;
  if (const std::string& text = extra["gauntlet/weightless.json"]; !text.empty()) {
    const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
    if (j.is_discarded() || !j.contains("tensors") || !j["tensors"].is_array())
      throw ModelError(spec.file + ": gauntlet/weightless.json is not the weightless list (format 1)");
    for (const auto& e : j["tensors"]) {
      const std::string path = e.value("path", "");
      const at::Tensor old = tensor_at(m, path);
      if (!old.defined())
        throw ModelError(fmt::format("{}: weightless tensor {} is not in the module", spec.file, path));
      if (refilled.count(old.unsafeGetTensorImpl())) continue;
      const double mean = e.value("mean", 0.0), sd = e.value("std", 0.0);
      const double fan_in = e.value("fan_in", 0.0);
      double lo, hi;
      if (sd > 0) {
        lo = mean - std::sqrt(3.0) * sd;
        hi = mean + std::sqrt(3.0) * sd;
      } else if (old.dim() >= 2 && fan_in > 0) {
        lo = -1 / std::sqrt(fan_in);
        hi = -lo;
      } else {
        const double half = mean == 0 ? 0.1 : 0.1 * std::fabs(mean);
        lo = mean - half;
        hi = mean + half;
      }
      SplitMix64 rng(seed ^ name_seed(path));
      refilled.emplace(old.unsafeGetTensorImpl(), uniform_double(old.sizes(), rng, lo, hi).to(old.scalar_type()));
    }
  }
  if (weightless) *weightless = refilled.size();
  convert_module_tensors(m, [&](const at::Tensor& t) {
    at::Tensor v = t;
    if (auto it = refilled.find(t.unsafeGetTensorImpl()); it != refilled.end()) v = it->second;
    if (at::isFloatingType(v.scalar_type())) {
      if (v.scalar_type() != dtype) v = v.to(dtype);
      if (target_dtype != dtype) v = v.to(target_dtype);
    }
    if (v.device() != device) v = v.to(device);
    return v.is_same(t) ? v : v.detach().requires_grad_(t.requires_grad());
  });
  return m;
}

std::vector<at::Tensor> flatten_model_outputs(const c10::IValue& v) {
  std::vector<at::Tensor> out;
  std::function<void(const c10::IValue&)> go = [&](const c10::IValue& x) {
    if (x.isTensor()) {
      out.push_back(x.toTensor());
    } else if (x.isTuple()) {
      for (const auto& e : x.toTupleRef().elements()) go(e);
    } else if (x.isList()) {
      for (const auto& e : x.toListRef()) go(e);
    } else if (x.isGenericDict()) {
      for (const auto& kv : x.toGenericDict()) go(kv.value());
    }
  };
  go(v);
  return out;
}

std::vector<std::string> fixed_devices_and_dtypes(const torch::jit::Module& module) {
  std::shared_ptr<torch::jit::Graph> g = module.get_method("forward").graph()->copy();
  torch::jit::Inline(*g);
  std::set<std::string> found;
  std::function<void(torch::jit::Block*)> block = [&](torch::jit::Block* b) {
    for (torch::jit::Node* n : b->nodes()) {
      for (torch::jit::Block* sub : n->blocks()) block(sub);
      const c10::FunctionSchema* schema = n->maybeSchema();
      if (!schema) continue;
      const auto& args = schema->arguments();
      for (std::size_t i = 0; i < args.size() && i < n->inputs().size(); ++i) {
        torch::jit::Value* in = n->inputs()[i];
        if (in->node()->kind() != c10::prim::Constant) continue;
        const auto value = torch::jit::toIValue(in);
        if (!value || value->isNone()) continue;
        if (args[i].name() == "device" && value->isDevice() && value->toDevice().is_cpu()) {
          found.insert(fmt::format("{}: device cpu", n->kind().toQualString()));
        } else if (args[i].name() == "dtype" && value->isInt()) {
          const auto t = static_cast<at::ScalarType>(value->toInt());
          if (at::isFloatingType(t))
            found.insert(fmt::format("{}: dtype {}", n->kind().toQualString(), c10::toString(t)));
        }
      }
    }
  };
  block(g->block());
  return {found.begin(), found.end()};
}

namespace {

thread_local int executed_depth = 0;
thread_local std::map<std::string, std::map<std::string, std::int64_t>>* executed_sink = nullptr;

// Note [Executed ops], the signature: the inputs of one call, ", " between them, each named by
// the op's schema ("self=", "stride=") where the dispatcher knows the op: a tensor as its dtype
// and sizes ("f32[1,64,56,56]"), then "@[strides]" when it is not contiguous and "+offset" when
// it starts past its storage's start; numbers, bools ("True"), None, strings ('reflect'), lists
// ("[2,2]"; tensor lists "(f32[4],f32[4])") as TorchScript writes them.
std::string dtype_text(at::ScalarType t) {
  switch (t) {
    case at::kDouble:
      return "f64";
    case at::kFloat:
      return "f32";
    case at::kHalf:
      return "f16";
    case at::kBFloat16:
      return "bf16";
    case at::kLong:
      return "i64";
    case at::kInt:
      return "i32";
    case at::kShort:
      return "i16";
    case at::kChar:
      return "i8";
    case at::kByte:
      return "u8";
    case at::kBool:
      return "bool";
    case at::kComplexFloat:
      return "c64";
    case at::kComplexDouble:
      return "c128";
    default:
      return c10::toString(t);
  }
}

std::string tensor_text(const at::Tensor& t) {
  if (!t.defined()) return "None";
  std::string out = fmt::format("{}[{}]", dtype_text(t.scalar_type()), fmt::join(t.sizes(), ","));
  if (t.layout() != at::kStrided) return out + "(" + c10::toString(t.layout()) + ")";
  if (!t.is_contiguous()) out += fmt::format("@[{}]", fmt::join(t.strides(), ","));
  if (t.storage_offset() != 0) out += fmt::format("+{}", t.storage_offset());
  return out;
}

std::string value_text(const c10::IValue& v) {
  if (v.isTensor()) return tensor_text(v.toTensor());
  if (v.isNone()) return "None";
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) return std::to_string(v.toInt());
  if (v.isDouble()) return fmt::format("{}", v.toDouble());
  if (v.isString()) return "'" + v.toStringRef() + "'";
  if (v.isIntList()) return fmt::format("[{}]", fmt::join(v.toIntVector(), ","));
  if (v.isDoubleList()) return fmt::format("[{}]", fmt::join(v.toDoubleVector(), ","));
  if (v.isTensorList()) {
    std::vector<std::string> parts;
    for (const at::Tensor& t : v.toTensorVector()) parts.push_back(tensor_text(t));
    return fmt::format("({})", fmt::join(parts, ","));
  }
  if (v.isList()) {
    std::vector<std::string> parts;
    for (const c10::IValue& e : v.toListRef()) parts.push_back(value_text(e));
    return fmt::format("[{}]", fmt::join(parts, ","));
  }
  if (v.isDevice()) return v.toDevice().str();
  return v.tagKind();
}

// The argument names of an op's schema, by "name.overload"; empty when the dispatcher does not
// know it (a TorchScript builtin that is not an operator).
const std::vector<std::string>& argument_names(const std::string& name, const std::string& overload) {
  thread_local std::unordered_map<std::string, std::vector<std::string>> cache;
  const std::string full = name + "." + overload;
  auto it = cache.find(full);
  if (it != cache.end()) return it->second;
  std::vector<std::string> names;
  if (auto handle = c10::Dispatcher::singleton().findSchema({name, overload})) {
    for (const c10::Argument& a : handle->schema().arguments()) names.push_back(a.name());
  }
  return cache.emplace(full, std::move(names)).first->second;
}

// TorchScript's interpreter may hand the observer more of its stack than the op's arguments (a
// scripted detector's topk came with two values of the caller's in front); the arguments are the
// stack's top, as many as the schema has.
std::string signature_of(c10::ArrayRef<const c10::IValue> inputs, const std::vector<std::string>& names) {
  if (!names.empty() && inputs.size() > names.size()) inputs = inputs.slice(inputs.size() - names.size());
  std::string out;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    if (i) out += ", ";
    if (names.size() == inputs.size()) out += names[i] + "=";
    out += value_text(inputs[i]);
  }
  return out;
}

}  // namespace

ExecutedOps::ExecutedOps() {
  executed_sink = &ops_;
  executed_depth = 0;
  auto start = [](const at::RecordFunction& fn) -> std::unique_ptr<at::ObserverContext> {
    if (executed_depth++ == 0 && executed_sink && !compat::is_traced_call(fn.inputs())) {
      std::string name = fn.name();
      static const std::vector<std::string> kNoNames;
      const std::vector<std::string>* names = &kNoNames;
      if (const auto op = fn.operator_name()) {
        if (!op->overload_name.empty()) name = op->name + "." + op->overload_name;
        names = &argument_names(op->name, op->overload_name);
      }
      ++(*executed_sink)[name][signature_of(fn.inputs(), *names)];
    }
    return nullptr;
  };
  auto end = [](const at::RecordFunction&, at::ObserverContext*) { --executed_depth; };
  handle_ = at::addThreadLocalCallback(
      at::RecordFunctionCallback(start, end).needsInputs(true).scopes({at::RecordScope::FUNCTION}));
}

std::string executed_value_text(const c10::IValue& v) { return value_text(v); }

std::map<std::string, std::string> schema_defaults(const std::string& op) {
  std::map<std::string, std::string> out;
  const std::size_t dot = op.find('.');
  const std::string name = op.substr(0, dot), overload = dot == std::string::npos ? "" : op.substr(dot + 1);
  if (auto handle = c10::Dispatcher::singleton().findSchema({name, overload})) {
    for (const c10::Argument& a : handle->schema().arguments()) {
      if (a.default_value()) out[a.name()] = value_text(*a.default_value());
    }
  }
  return out;
}

std::vector<std::string> ExecutedOps::records() const {
  std::vector<std::string> out;
  for (const auto& [op, sigs] : ops_) {
    for (const auto& [sig, calls] : sigs) out.push_back(executed_op_text({op, sig, calls}));
  }
  return out;
}

ExecutedOps::~ExecutedOps() {
  at::removeCallback(handle_);
  executed_sink = nullptr;
}

}  // namespace gauntlet
