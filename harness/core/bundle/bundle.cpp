// Note [Bundles]: `gauntlet repro KEY --bundle DIR` writes what a backend developer needs to
// replay one case with no Gauntlet installed:
//   manifest.json  the key, the backend and its environment, torch's version and threads, each
//                  input's size/stride/storage offset, each output's dtype and tolerance, and
//                  Gauntlet's verdict and metrics (bundle_schema_version);
//   tensors.pt     one dict (torch::pickle_save, which Python's torch.load reads): per input its
//                  whole storage as a 1-D tensor ("input.<name>": the layout is rebuilt with
//                  as_strided from the manifest), per output the golden as computed (fp64 for
//                  floating outputs, "golden.<name>"), the golden in the output's dtype
//                  ("golden_cast.<name>") and the device's output ("actual.<name>"); backward
//                  cases add each output's gradient seed, training model cases their loss
//                  weights, traced calls their tensor constants ("const.<n>");
//   repro.py       plain PyTorch: runs the case on --device and judges it as Gauntlet does;
//                  --from-saved judges the saved device outputs instead;
//   repro.cpp, CMakeLists.txt   the same in C++ against find_package(Torch);
//   model.pt       model cases: the zoo model's forward graph as a TorchScript module; a model
//                  file's module as the case ran it (weightless tensors refilled from the case
//                  seed, floating tensors in the case dtype), judged per output by the
//                  manifest's rule (Note [Output quality]: each output's compare, tolerance, dim).
// An op case's call is the op table's C++ call traced on the case's CPU inputs (as a compile case
// is, Note [Op cases in compile mode]) and written out node by node: torch.ops.<ns>.<op>.<overload>
// in Python, the same operator found by its schema name and called boxed in C++. Device
// constants of the trace become the replay's device. The comparison is Gauntlet's rule
// (compare.h) written again in each language; the replay sets torch's thread count to the one
// Gauntlet ran with, so a CPU replay gives Gauntlet's outputs to the bit.
#include "gauntlet/core/bundle/bundle.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <torch/csrc/jit/ir/constants.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/serialization/pickle.h>
#include <torch/version.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bundle/bundle_text.h"
#include "gauntlet/base/output_dir.h"
#include "gauntlet/core/collective/collective.h"
#include "gauntlet/golden/execute.h"
#include "gauntlet/golden/inputs.h"
#include "gauntlet/models/model_file.h"
#include "gauntlet/models/models.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/suites/coll_spec.h"

namespace gauntlet {

namespace {

namespace fs = std::filesystem;
using torch::jit::Node;
using torch::jit::Value;

std::string replace_all(std::string s, const std::string& from, const std::string& to) {
  for (std::size_t at = s.find(from); at != std::string::npos; at = s.find(from, at + to.size()))
    s.replace(at, from.size(), to);
  return s;
}

// A string as a literal both languages read (ASCII escapes).
std::string quoted(const std::string& s) { return nlohmann::json(s).dump(); }

std::string torch_dtype(at::ScalarType t) {
  switch (t) {
    case at::kFloat:
      return "torch.float32";
    case at::kDouble:
      return "torch.float64";
    case at::kHalf:
      return "torch.float16";
    case at::kBFloat16:
      return "torch.bfloat16";
    case at::kLong:
      return "torch.int64";
    case at::kInt:
      return "torch.int32";
    case at::kShort:
      return "torch.int16";
    case at::kChar:
      return "torch.int8";
    case at::kByte:
      return "torch.uint8";
    case at::kBool:
      return "torch.bool";
    default:
      return std::string("torch.") + c10::toString(t);
  }
}

// Writes a traced graph as Python and C++ (Note [Bundles]).
class CallWriter {
 public:
  std::string python, cpp;
  std::vector<NamedTensor> constants;
  std::vector<std::string> ops;  // the operators called, in order

  explicit CallWriter(const torch::jit::Graph& g) {
    python = "def call(dev, x, consts):\n";
    cpp =
        "std::vector<c10::IValue> call(const c10::Device& dev, const std::vector<c10::IValue>& x,\n"
        "                             const std::map<std::string, at::Tensor>& consts) {\n"
        "  (void)dev;\n  (void)consts;\n";
    for (std::size_t i = 0; i < g.inputs().size(); ++i) {
      python += fmt::format("    {} = x[{}]\n", name(g.inputs()[i]), i);
      cpp += fmt::format("  c10::IValue {} = x.at({});\n", name(g.inputs()[i]), i);
    }
    for (const Node* n : g.nodes()) node(n);
    std::vector<std::string> outs;
    for (const Value* v : g.outputs()) outs.push_back(name(v));
    python += fmt::format("    return [{}]\n", fmt::join(outs, ", "));
    cpp += fmt::format("  return {{{}}};\n}}\n", fmt::join(outs, ", "));
  }

 private:
  static std::string name(const Value* v) { return "v" + std::to_string(v->unique()); }
  int calls_ = 0;

  static std::string py_double(double d) {
    if (std::isnan(d)) return "float('nan')";
    if (std::isinf(d)) return d > 0 ? "float('inf')" : "float('-inf')";
    std::string s = fmt::format("{}", d);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";  // a float stays a float
    return s;
  }
  static std::string cpp_double(double d) {
    if (std::isnan(d)) return "std::numeric_limits<double>::quiet_NaN()";
    if (std::isinf(d))
      return d > 0 ? "std::numeric_limits<double>::infinity()" : "-std::numeric_limits<double>::infinity()";
    std::string s = fmt::format("{}", d);
    if (s.find_first_of(".e") == std::string::npos) s += ".0";
    return s;
  }
  static std::string cpp_int(std::int64_t i) {
    if (i == std::numeric_limits<std::int64_t>::min()) return "std::numeric_limits<std::int64_t>::min()";
    return fmt::format("std::int64_t{{{}}}", i);
  }

  std::pair<std::string, std::string> literal(const c10::IValue& c) {
    if (c.isNone()) return {"None", "c10::IValue()"};
    if (c.isBool()) return {c.toBool() ? "True" : "False", c.toBool() ? "c10::IValue(true)" : "c10::IValue(false)"};
    if (c.isInt()) return {std::to_string(c.toInt()), "c10::IValue(" + cpp_int(c.toInt()) + ")"};
    if (c.isDouble()) return {py_double(c.toDouble()), "c10::IValue(" + cpp_double(c.toDouble()) + ")"};
    if (c.isString()) return {quoted(c.toStringRef()), "c10::IValue(std::string(" + quoted(c.toStringRef()) + "))"};
    if (c.isDevice()) return {"dev", "c10::IValue(dev)"};
    if (c.isIntList()) {
      std::vector<std::string> p, q;
      for (std::int64_t i : c.toIntVector()) {
        p.push_back(std::to_string(i));
        q.push_back(cpp_int(i));
      }
      return {fmt::format("[{}]", fmt::join(p, ", ")),
              fmt::format("c10::IValue(std::vector<std::int64_t>{{{}}})", fmt::join(q, ", "))};
    }
    if (c.isDoubleList()) {
      std::vector<std::string> p, q;
      for (double d : c.toDoubleVector()) {
        p.push_back(py_double(d));
        q.push_back(cpp_double(d));
      }
      return {fmt::format("[{}]", fmt::join(p, ", ")),
              fmt::format("c10::IValue(std::vector<double>{{{}}})", fmt::join(q, ", "))};
    }
    if (c.isBoolList()) {
      std::vector<std::string> p, q;
      for (bool b : c.toBoolList()) {
        p.push_back(b ? "True" : "False");
        q.push_back(b ? "c10::IValue(true)" : "c10::IValue(false)");
      }
      return {fmt::format("[{}]", fmt::join(p, ", ")),
              fmt::format("make_list(c10::BoolType::get(), {{{}}})", fmt::join(q, ", "))};
    }
    if (c.isTensor()) {
      const std::string k = "c" + std::to_string(constants.size());
      constants.push_back({k, c.toTensor().detach().cpu().clone()});
      return {fmt::format("consts[\"{}\"]", k), fmt::format("c10::IValue(consts.at(\"{}\"))", k)};
    }
    throw std::runtime_error("a constant of type " + c.type()->str() + " in the op's call cannot be written out");
  }

  static std::string cpp_type(const c10::TypePtr& t) {
    switch (t->kind()) {
      case c10::TypeKind::TensorType:
        return "c10::TensorType::get()";
      case c10::TypeKind::IntType:
        return "c10::IntType::get()";
      case c10::TypeKind::FloatType:
        return "c10::FloatType::get()";
      case c10::TypeKind::BoolType:
        return "c10::BoolType::get()";
      case c10::TypeKind::NumberType:
        return "c10::NumberType::get()";
      case c10::TypeKind::StringType:
        return "c10::StringType::get()";
      case c10::TypeKind::OptionalType:
        return "c10::OptionalType::create(" + cpp_type(t->expectRef<c10::OptionalType>().getElementType()) + ")";
      case c10::TypeKind::ListType:
        return "c10::ListType::create(" + cpp_type(t->expectRef<c10::ListType>().getElementType()) + ")";
      default:
        throw std::runtime_error("a list of " + t->str() + " in the op's call cannot be written out");
    }
  }

  void node(const Node* n) {
    const auto kind = n->kind();
    if (!n->blocks().empty())
      throw std::runtime_error(std::string("the op's call has control flow (") + kind.toQualString() + ")");
    std::vector<std::string> in, outs;
    for (const Value* v : n->inputs()) in.push_back(name(v));
    for (const Value* v : n->outputs()) outs.push_back(name(v));
    if (kind == torch::jit::prim::Constant) {
      const auto [py, cc] = literal(*torch::jit::toIValue(n->output()));
      python += fmt::format("    {} = {}\n", outs[0], py);
      cpp += fmt::format("  c10::IValue {} = {};\n", outs[0], cc);
    } else if (kind == torch::jit::prim::ListConstruct) {
      const c10::TypePtr elem = n->output()->type()->expectRef<c10::ListType>().getElementType();
      python += fmt::format("    {} = [{}]\n", outs[0], fmt::join(in, ", "));
      cpp += fmt::format("  c10::IValue {} = make_list({}, {{{}}});\n", outs[0], cpp_type(elem), fmt::join(in, ", "));
    } else if (kind == torch::jit::prim::TupleConstruct) {
      python += fmt::format("    {} = ({}{})\n", outs[0], fmt::join(in, ", "), in.size() == 1 ? "," : "");
      cpp += fmt::format("  c10::IValue {} = c10::ivalue::Tuple::create(std::vector<c10::IValue>{{{}}});\n", outs[0],
                         fmt::join(in, ", "));
    } else if (kind == torch::jit::prim::ListUnpack || kind == torch::jit::prim::TupleUnpack) {
      python += fmt::format("    {}{} = {}\n", fmt::join(outs, ", "), outs.size() == 1 ? "," : "", in[0]);
      for (std::size_t k = 0; k < outs.size(); ++k) {
        cpp += fmt::format("  c10::IValue {} = {}.{}[{}];\n", outs[k], in[0],
                           kind == torch::jit::prim::ListUnpack ? "toListRef()" : "toTupleRef().elements()", k);
      }
    } else {
      const c10::FunctionSchema* schema = n->maybeSchema();
      if (!schema)
        throw std::runtime_error(std::string("the op's call has a node without a schema: ") + kind.toQualString());
      const std::string ns = kind.ns().toUnqualString(), op = kind.toUnqualString();
      const std::string overload = schema->overload_name();
      ops.push_back(std::string(kind.toQualString()) + (overload.empty() ? "" : "." + overload));
      std::vector<std::string> py_args;
      for (std::size_t i = 0; i < in.size(); ++i) {
        const bool kw = i < schema->arguments().size() && schema->arguments()[i].kwarg_only();
        py_args.push_back(kw ? schema->arguments()[i].name() + "=" + in[i] : in[i]);
      }
      const std::string lhs = outs.empty() ? "" : fmt::format("{} = ", fmt::join(outs, ", "));
      python += fmt::format("    {}torch.ops.{}.{}.{}({})\n", lhs, ns, op, overload.empty() ? "default" : overload,
                            fmt::join(py_args, ", "));
      const std::string r = "r" + std::to_string(++calls_);
      cpp += fmt::format("  std::vector<c10::IValue> {} = call_op({}, {}, {{{}}});\n", r,
                         quoted(std::string(kind.toQualString())), quoted(overload), fmt::join(in, ", "));
      for (std::size_t k = 0; k < outs.size(); ++k)
        cpp += fmt::format("  c10::IValue {} = {}.at({});\n", outs[k], r, k);
    }
  }
};

// The op table's call of the case's op, traced on its CPU inputs (Note [Bundles]).
CallWriter trace_op_call(const OpDef& def, const CaseKey& key, const std::vector<at::Tensor>& inputs) {
  for (const at::Tensor& t : inputs) {
    if (!t.defined())
      throw std::runtime_error("the case has an absent optional input, which a traced call cannot take");
  }
  torch::jit::Stack stack;
  for (const at::Tensor& t : inputs) stack.emplace_back(t.detach());
  std::shared_ptr<torch::jit::Graph> graph;
  try {
    at::AutoGradMode no_grad(false);
    auto traced = torch::jit::tracer::trace(
        std::move(stack),
        [&](torch::jit::Stack in) {
          std::vector<at::Tensor> ts;
          for (const c10::IValue& v : in) ts.push_back(v.toTensor());
          OpCall call(def.spec, key, std::move(ts));
          std::vector<at::Tensor> outs = def.fn(call);
          return torch::jit::Stack(outs.begin(), outs.end());
        },
        [](const at::Tensor&) { return std::string(); }, /*strict=*/false,
        /*force_outplace=*/false);
    graph = traced.first->graph;
  } catch (const std::exception& e) {
    std::string what = e.what();
    throw std::runtime_error("the op's call cannot be traced into plain torch calls: " +
                             what.substr(0, what.find('\n')));
  }
  return CallWriter(*graph);
}

// The storage behind `t`, whole, as a 1-D tensor of its dtype: with size, stride and offset it
// rebuilds `t` exactly.
at::Tensor storage_of(const at::Tensor& t) {
  const std::int64_t n = static_cast<std::int64_t>(t.storage().nbytes() / t.element_size());
  return at::empty({0}, t.options()).set_(t.storage(), 0, {n}, {1}).clone();
}

nlohmann::json input_meta(const std::string& name, const at::Tensor& t, bool requires_grad) {
  return {{"name", name},
          {"dtype", torch_dtype(t.scalar_type())},
          {"size", t.sizes().vec()},
          {"stride", t.strides().vec()},
          {"storage_offset", t.storage_offset()},
          {"requires_grad", requires_grad}};
}

std::string cpp_ints(const std::vector<std::int64_t>& v) { return fmt::format("{{{}}}", fmt::join(v, ", ")); }

// The C++ program's data block: what the manifest says, as constants.
std::string cpp_data(const nlohmann::json& man) {
  std::string s;
  s += fmt::format("const char* const kKey = {};\n", quoted(man["key"].get<std::string>()));
  s += fmt::format("const char* const kKind = {};\n", quoted(man["kind"].get<std::string>()));
  s += fmt::format("const char* const kBackend = {};\n", quoted(man["backend"]["name"].get<std::string>()));
  s += fmt::format("const bool kBackward = {};\n",
                   man["mode"] == "eager-bwd" || man["mode"] == "train" ? "true" : "false");
  s += fmt::format("const int kNumThreads = {};\n", man["replay"]["num_threads"].get<int>());
  s += fmt::format("const bool kSavedActual = {};\n", man["saved_actual"].get<bool>() ? "true" : "false");
  s += fmt::format("const char* const kGauntletStatus = {};\n", quoted(man["gauntlet"]["status"].get<std::string>()));
  const auto& mae = man["gauntlet"]["max_abs_err"];
  s += fmt::format("const double kGauntletMaxAbsErr = {};\n",
                   mae.is_number() ? fmt::format("{}", mae.get<double>()) : "std::numeric_limits<double>::quiet_NaN()");
  s += "const std::vector<InputMeta> kInputs = {\n";
  for (const auto& m : man["inputs"]) {
    s += fmt::format("    {{{}, {}, {}, {}, {}}},\n", quoted(m["name"].get<std::string>()),
                     cpp_ints(m["size"].get<std::vector<std::int64_t>>()),
                     cpp_ints(m["stride"].get<std::vector<std::int64_t>>()), m["storage_offset"].get<std::int64_t>(),
                     m["requires_grad"].get<bool>() ? "true" : "false");
  }
  s += "};\nconst std::vector<OutputMeta> kOutputs = {\n";
  for (const auto& o : man["outputs"]) {
    const bool promised = o.contains("promised_strides") && o["promised_strides"].is_array();
    s += fmt::format("    {{{}, {}, {}, {}, {}, {}, {}, {}, {}}},\n", quoted(o["name"].get<std::string>()),
                     quoted(o["dtype"].get<std::string>()), fmt::format("{}", o["rtol"].get<double>()),
                     fmt::format("{}", o["atol"].get<double>()), promised ? "true" : "false",
                     promised ? cpp_ints(o["promised_strides"].get<std::vector<std::int64_t>>()) : "{}",
                     quoted(o.value("compare", std::string())), fmt::format("{}", o.value("tolerance", 0.0)),
                     o.value("dim", std::int64_t{-1}));
  }
  s += "};\n";
  s += fmt::format("const bool kModelFile = {};\n", man.contains("model_file") ? "true" : "false");
  s += "const std::vector<std::string> kLibraries = {";
  if (man.contains("model_file")) {
    for (const auto& lib : man["model_file"]["libraries"]) s += quoted(lib["path"].get<std::string>()) + ", ";
  }
  s += "};\n";
  const nlohmann::json c = man.value("collective", nlohmann::json::object());
  s += fmt::format("const int kWorld = {};\n", c.value("world", 0));
  s += fmt::format("const char* const kCollective = {};\n", quoted(c.value("name", std::string())));
  s += fmt::format("const char* const kReduceOp = {};\n", quoted(c.value("op", std::string())));
  s += fmt::format("const int kRoot = {};\n", c.value("root", 0));
  s += "const std::vector<std::vector<std::int64_t>> kSplits = {";
  if (c.contains("splits")) {
    for (const auto& row : c["splits"]) s += cpp_ints(row.get<std::vector<std::int64_t>>()) + ", ";
  }
  s += "};\n";
  return s;
}

// A zoo model's forward graph (helpers inlined, as the case runs it) as a module's forward.
torch::jit::Module model_module(const ModelSpec& spec) {
  auto cu = compile_model(spec);
  std::shared_ptr<torch::jit::Graph> graph = model_graph(*cu, spec);
  torch::jit::Module m(c10::QualifiedName("__torch__.gauntlet_bundle." + spec.name));
  Value* self = graph->insertInput(0, "self");
  self->setType(m._ivalue()->type());
  torch::jit::Function* fn =
      m._ivalue()->compilation_unit()->create_function(c10::QualifiedName(*m.type()->name(), "forward"), graph);
  m.type()->addMethod(fn);
  return m;
}

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream f(p, std::ios::binary);
  f << text;
  if (!f) throw std::runtime_error("cannot write " + p.string());
}

}  // namespace

namespace {

// What a bundle is made of before it is written: its tensors, its manifest, the op call as
// Python and C++ (op cases), and the module (model cases).
struct Bundle {
  c10::Dict<std::string, at::Tensor> tensors;
  nlohmann::json man;
  std::string call_py = "call = None  # not an op case\n";
  std::string call_cpp =
      "std::vector<c10::IValue> call(const c10::Device&, const std::vector<c10::IValue>&, const "
      "std::map<std::string, at::Tensor>&) {\n"
      "  throw std::runtime_error(\"not an op case\");\n}\n";
  std::optional<torch::jit::Module> module;
  std::string program_py;   // a compile case's program (program.py), or ""
  std::string module_file;  // the .py file that registers its dynamo backend, copied beside it, or ""
};

// A model file's spec when the case is one (Note [Model file cases]); throws for a case that
// cannot be bundled.
const ModelFileSpec* check_bundleable(const BundleSource& src) {
  const CaseKey& key = src.key;
  const ModelFileSpec* file_spec = nullptr;
  if (key.kind == "model" && is_model_file_target(key.target)) {
    file_spec = find_model_file(key.target);
    if (!file_spec) throw std::runtime_error("model file " + key.target + " is not registered in this process");
    if (key.mode == Mode::EagerBwd) {
      throw std::runtime_error(
          "a model file's training scenario cannot be bundled (its steps are an optimiser's, judged against fp64 "
          "steps): bundle the model's inference case");
    }
  }
  if ((key.kind == "op" || key.kind == "model") &&
      (!src.detail || !src.detail->keep_tensors || src.detail->tensors.golden.empty())) {
    throw std::runtime_error(fmt::format("the case kept no outputs to bundle (it ended {}{})",
                                         status_name(src.outcome.status),
                                         src.outcome.error.empty() ? "" : ": " + src.outcome.error.substr(0, 200)));
  }
  return file_spec;
}

// The manifest's fields every bundle has: the case, the backend, the environment, the verdict.
nlohmann::json manifest_head(const BundleSource& src) {
  const CaseKey& key = src.key;
  nlohmann::json man;
  man["bundle_schema_version"] = kBundleSchemaVersion;
  man["key"] = key.str();
  man["id"] = fmt::format("{:016x}", key.id());
  man["kind"] = key.kind;
  man["target"] = key.target;
  man["dtype"] = std::string(dtype_name(key.dtype));
  man["mode"] = key.mode_text();
  man["backend"] = {{"name", src.backend}, {"version", src.backend_version}, {"profile", src.profile}};
  man["environment"] = src.environment;
  man["command"] = src.command;
  if (!src.restored_from.empty()) man["restored_from"] = src.restored_from;
  man["replay"] = {{"num_threads", at::get_num_threads()}, {"torch_version", TORCH_VERSION}};
  const Outcome& o = src.outcome;
  man["gauntlet"] = {{"status", std::string(status_name(o.status))},
                     {"error", o.error},
                     {"reason", o.reason},
                     {"max_abs_err", json_number(o.metrics.max_abs_err)},
                     {"max_rel_err", json_number(o.metrics.max_rel_err)},
                     {"mismatches", o.metrics.mismatches},
                     {"numel", o.metrics.numel},
                     {"max_ulp", json_number(o.metrics.max_ulp)},
                     {"rtol", json_number(o.rtol)},
                     {"atol", json_number(o.atol)},
                     {"tolerance_profile", o.tolerance_profile}};
  man["inputs"] = nlohmann::json::array();
  man["outputs"] = nlohmann::json::array();
  return man;
}

// An op case: its traced call, its constants and (backward) its gradient seeds; which inputs
// take a gradient in `grads`.
void add_op_call(Bundle& b, const CaseKey& key, const CaseTensors& kept, std::vector<bool>& grads) {
  const OpDef& def = *find_op_def(key.target);
  b.man["aten"] = def.spec.aten;
  for (std::size_t i = 0; i < kept.inputs.size(); ++i) {
    grads[i] = key.mode == Mode::EagerBwd && def.spec.inputs[i].differentiable &&
               at::isFloatingType(kept.inputs[i].value.scalar_type());
  }
  std::vector<at::Tensor> cpu_inputs;
  for (const NamedTensor& t : kept.inputs) cpu_inputs.push_back(t.value);
  CallWriter w = trace_op_call(def, key, cpu_inputs);
  b.call_py = w.python;
  b.call_cpp = w.cpp;
  b.man["replay"]["calls"] = w.ops;
  for (const NamedTensor& c : w.constants) b.tensors.insert("const." + c.name, c.value);
  if (key.mode != Mode::EagerBwd) return;
  for (std::size_t k = 0; k < kept.golden.size(); ++k) {
    const std::string out = "out" + std::to_string(k);
    if (kept.golden[k].name != out || !at::isFloatingType(kept.golden[k].value.scalar_type())) continue;
    b.tensors.insert(
        "grad_seed." + out,
        make_grad_output(
            key, k, at::empty(kept.golden[k].value.sizes(), at::TensorOptions().dtype(to_scalar_type(key.dtype)))));
  }
}

// A model file's case: the module as the case ran it (weightless tensors refilled from the case
// seed, floating tensors in the case dtype), its custom-op libraries named for the replay to load.
void add_model_file(Bundle& b, const CaseKey& key, const ModelFileSpec& file_spec) {
  const at::ScalarType dtype = model_dtype(std::string(dtype_name(key.dtype)));
  b.module = load_model_module(file_spec, dtype, dtype, c10::Device(c10::kCPU), key.id());
  nlohmann::json libs = nlohmann::json::array();
  for (const std::string& lib : file_spec.libraries) {
    libs.push_back({{"name", lib}, {"path", model_library_path(file_spec, lib)}});
  }
  b.man["model_file"] = {{"name", file_spec.name},
                         {"hash", file_spec.hash},
                         {"file", file_spec.file},
                         {"manifest", file_spec.manifest},
                         {"libraries", libs}};
  if (key.exec != "eager")
    b.man["note"] = "the replay calls the module's forward once; the case ran it through the backend's compile path";
}

// A zoo model's case: its module, its trainable inputs and loss weights.
void add_zoo_model(Bundle& b, const CaseKey& key, const CaseTensors& kept, std::vector<bool>& grads) {
  const ModelSpec& spec = model_catalog().get(key.target);
  if (key.args.count("seq"))
    throw std::runtime_error("shape-sequence model cases (seq=) cannot be bundled: bundle the case without seq");
  if (key.exec != "eager")
    b.man["note"] =
        "the replay runs the model op by op (eager); the case ran it through the backend's "
        "compile path";
  if (key.mode == Mode::EagerBwd) {
    for (std::size_t i : spec.trainable_args()) grads[i] = true;
  }
  b.module = model_module(spec);
  for (const NamedTensor& w : kept.loss_weights) b.tensors.insert("loss_weight." + w.name, w.value);
}

// A compile case's program as the backend compiled it, and the dynamo backend and settings it
// compiled with: repro.py compiles it again the same way (docs/repro.md, "Compile cases").
void add_compiled_program(Bundle& b, const python::Program& program, const python::DynamoBackend& dynamo) {
  b.program_py = program.source;
  nlohmann::json c = {{"backend", dynamo.name},
                      {"module", dynamo.module},
                      {"function", program.function},
                      {"filename", program.filename},
                      {"constants", program.constants.size()},
                      {"dynamic", program.dynamic ? nlohmann::json(*program.dynamic) : nlohmann::json()}};
  const nlohmann::json options = nlohmann::json::parse(dynamo.options_json, nullptr, false);
  c["options"] = options.is_object() ? options : nlohmann::json::object();
  if (dynamo.module.ends_with(".py")) {  // a file: the bundle keeps a copy, named as the module
    b.module_file = dynamo.module;
    c["module"] = fs::path(dynamo.module).filename().string();
  }
  for (std::size_t i = 0; i < program.constants.size(); ++i)
    b.tensors.insert(fmt::format("program_const.{}", i), program.constants[i].detach().cpu().contiguous());
  b.man["compile"] = c;
  b.man["note"] =
      "repro.py compiles the case's program (program.py) with torch.compile and the case's dynamo backend; "
      "repro.cpp runs the call eagerly (torch.compile is Python's)";
}

// The tensors an op or model case kept: inputs as laid out, goldens (as computed and cast), and
// the device's outputs.
void add_kept_tensors(Bundle& b, const CaseKey& key, const CaseTensors& kept, const std::vector<bool>& grads) {
  for (std::size_t i = 0; i < kept.inputs.size(); ++i) {
    const NamedTensor& t = kept.inputs[i];
    b.man["inputs"].push_back(input_meta(t.name, t.value, grads[i]));
    b.tensors.insert("input." + t.name, storage_of(t.value));
  }
  for (std::size_t k = 0; k < kept.golden.size(); ++k) {
    const NamedTensor& g = kept.golden[k];
    nlohmann::json out = {{"name", g.name},
                          {"dtype", torch_dtype(kept.dtypes[k])},
                          {"rtol", kept.tolerances[k].rtol},
                          {"atol", kept.tolerances[k].atol},
                          {"tolerance_source", kept.tolerances[k].source},
                          {"shape", g.value.sizes().vec()}};
    if (key.kind == "op" && k == 0 && g.name == "out0" && !kept.promised_strides.empty())
      out["promised_strides"] = kept.promised_strides;
    if (k < kept.rules.size()) {  // Note [Output quality]
      out["compare"] = kept.rules[k].kind;
      out["tolerance"] = kept.rules[k].tolerance;
      out["dim"] = kept.rules[k].dim;
    }
    b.man["outputs"].push_back(out);
    b.tensors.insert("golden." + g.name, g.value.contiguous());
    b.tensors.insert("golden_cast." + g.name, g.value.to(kept.dtypes[k]).contiguous());
  }
  b.man["saved_actual"] = kept.actual.size() == kept.golden.size();
  b.man["saved_actual_note"] =
      b.man["saved_actual"].get<bool>() ? "" : "the device returned other outputs than the golden's";
  for (const NamedTensor& a : kept.actual) b.tensors.insert("actual." + a.name, a.value);
}

// A collective case: every rank's input and golden, computed again here.
void add_collective(Bundle& b, const BundleSource& src) {
  const CaseKey& key = src.key;
  const Tolerance base =
      src.tolerances ? src.tolerances->lookup(key, key.dtype, src.profile) : default_tolerance(key.dtype);
  const Tolerance tol = coll_tolerance(key, base);
  nlohmann::json c = {{"name", key.target}, {"world", key.world}};
  if (auto it = key.args.find("op"); it != key.args.end()) c["op"] = it->second;
  if (auto it = key.args.find("root"); it != key.args.end()) c["root"] = std::stoi(it->second);
  if (key.target == "all_to_all") {
    const auto split = key.args.find("split");
    for (int r = 0; r < key.world; ++r) {
      c["splits"].push_back(all_to_all_splits(key.shapes.at(0).at(0), key.world, r,
                                              split != key.args.end() && split->second == "uneven"));
    }
  }
  if (key.target == "barrier") throw std::runtime_error("a barrier moves no data: nothing to bundle");
  b.man["collective"] = c;
  for (int r = 0; r < key.world; ++r) {
    const std::string name = "rank" + std::to_string(r);
    const at::Tensor x = coll_input(key, r);
    b.man["inputs"].push_back(input_meta(name, x, false));
    b.tensors.insert("input." + name, storage_of(x));
    const at::Tensor g = coll_golden(key, r);
    b.man["outputs"].push_back({{"name", name},
                                {"dtype", torch_dtype(x.scalar_type())},
                                {"rtol", tol.rtol},
                                {"atol", tol.atol},
                                {"tolerance_source", tol.source},
                                {"shape", g.sizes().vec()}});
    b.tensors.insert("golden." + name, g);
    b.tensors.insert("golden_cast." + name, g.to(x.scalar_type()));
  }
  b.man["saved_actual"] = false;
  b.man["saved_actual_note"] =
      "a collective's outputs stay in its rank processes; the replay computes them in one "
      "process";
}

// Writes the bundle's files into `dir` (created): tensors.pt, model.pt (model cases),
// manifest.json and the three replay programs.
BundleWritten save_bundle(const std::string& dir, const CaseKey& key, Bundle& b) {
  const fs::path root(dir);
  claim_output_dir(dir, "bundle");  // Note [Output folders]: never over a folder of the user's
  BundleWritten written;
  const std::vector<char> bytes = torch::jit::pickle_save(c10::IValue(b.tensors));
  {
    std::ofstream f(root / "tensors.pt", std::ios::binary);
    f.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
    if (!f) throw std::runtime_error("cannot write " + (root / "tensors.pt").string());
  }
  written.files.push_back("tensors.pt");
  if (b.module) {
    b.module->save((root / "model.pt").string());
    written.files.push_back("model.pt");
  } else {
    fs::remove(root / "model.pt");
  }
  if (!b.program_py.empty()) {
    write_text(root / "program.py", b.program_py);
    written.files.push_back("program.py");
  } else {
    fs::remove(root / "program.py");
  }
  if (!b.module_file.empty()) {
    const std::string name = fs::path(b.module_file).filename().string();
    std::error_code ec;
    fs::copy_file(b.module_file, root / name, fs::copy_options::overwrite_existing, ec);
    if (ec) throw std::runtime_error(fmt::format("cannot copy {} into the bundle: {}", b.module_file, ec.message()));
    written.files.push_back(name);
  }
  write_text(root / "manifest.json", b.man.dump(1) + "\n");
  const std::string py = replace_all(bundle_text::kReproPy, "{{CALL}}", b.call_py);
  write_text(root / "repro.py", py);
  fs::permissions(root / "repro.py", fs::perms::owner_exec | fs::perms::group_exec | fs::perms::others_exec,
                  fs::perm_options::add);
  write_text(root / "repro.cpp", replace_all(replace_all(replace_all(bundle_text::kReproCpp, "{{KEY}}", key.str()),
                                                         "{{DATA}}", cpp_data(b.man)),
                                             "{{CALL}}", b.call_cpp));
  write_text(root / "CMakeLists.txt", replace_all(bundle_text::kCMakeLists, "{{KEY}}", key.str()));
  written.files.insert(written.files.end(), {"manifest.json", "repro.py", "repro.cpp", "CMakeLists.txt"});
  for (const std::string& f : written.files) written.bytes += fs::file_size(root / f);
  return written;
}

}  // namespace

BundleWritten write_bundle(const std::string& dir, const BundleSource& src) {
  const CaseKey& key = src.key;
  const ModelFileSpec* file_spec = check_bundleable(src);
  Bundle b;
  b.man = manifest_head(src);
  if (key.kind == "op" || key.kind == "model") {
    const CaseTensors& kept = src.detail->tensors;
    std::vector<bool> grads(kept.inputs.size(), false);
    if (key.kind == "op") {
      add_op_call(b, key, kept, grads);
    } else if (file_spec) {
      add_model_file(b, key, *file_spec);
    } else {
      add_zoo_model(b, key, kept, grads);
    }
    add_kept_tensors(b, key, kept, grads);
    if (src.detail->program && src.detail->dynamo) add_compiled_program(b, *src.detail->program, *src.detail->dynamo);
  } else if (key.kind == "coll") {
    add_collective(b, src);
  } else {
    throw std::runtime_error("cases of kind " + key.kind + " cannot be bundled");
  }
  return save_bundle(dir, key, b);
}

}  // namespace gauntlet
