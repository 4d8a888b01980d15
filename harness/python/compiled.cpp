// Note [Compile path]: exec=compile cases run through torch.compile, as a user's compiled code
// does (docs/compile-path.md).
//   - What is compiled is Python. An op case's call is traced (torch::jit::tracer, as before) and
//     the traced graph written as a Python function calling torch.ops.aten.<op>.<overload> on its
//     inputs (program_from_graph); a model is its own Python file. Dynamo traces that function
//     as it traces a user's, so graph breaks, guards and recompiles are dynamo's own.
//   - The backend's compiler is a dynamo backend by name: `cpu` compiles with inductor; `sim` with
//     gauntlet_sim, the simulator's (simulator/python/gauntlet_sim.py); $GAUNTLET_DYNAMO_BACKEND
//     names another, and the module that registers it (a plugin library's).
//   - Compilation happens at the program's first call, as for a user: the first call's time holds
//     it, and a backend compiler's failure surfaces there as an exception (the case's ERROR).
//   - What is recorded is read from dynamo's own records (gauntlet_compile.program_stats): the
//     graphs it made, each graph break with its reason and user-code location (its
//     `graph_breaks` log artifact), each recompile with the guard that failed (compilation
//     metrics' recompile_reason), the recompile limit reached (after which the frame runs
//     eagerly), and compile time split into dynamo's, AOT autograd's and the backend compiler's
//     (inductor's, from the same metrics).
//   - dynamo is reset when a program is made: one program per case, so its records are the
//     case's. Inductor's on-disk caches are not reset (a user's second run hits them too): the
//     first run of a program on a host compiles, later ones mostly load.
//
// Note [Backend records]: dynamo sees a backend as one call per graph; what the backend's own
// compiler did inside (nodes it left to the CPU, regions it compiled, what compiling cost) only
// the backend can say. A backend module may define gauntlet_compile_records(reset=False)
// returning {"breaks": ["op (file:line): why", ...], "regions": n, "compile_ms": ms}: its breaks
// join dynamo's, its regions replace dynamo's graph count and its compile_ms is backend_ms (the
// backend compiles at a graph's first call, so all of dynamo's backend time is AOT autograd's).
// `sim` does (its compile cost is modelled, Note [Modelled compile cost]); a vendor's backend
// needs nothing of the kind, and its time is dynamo's backend_compile_time.
#include "gauntlet/python/compiled.h"

#include <c10/util/Exception.h>
#include <fmt/format.h>
#include <torch/csrc/jit/ir/ir.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>
#include <unordered_map>

#include "gauntlet/base/command_line.h"
#include "gauntlet/base/error.h"
#include "gauntlet/python/interpreter.h"

namespace gauntlet::python {

namespace {

constexpr const char* kModule = "gauntlet_compile";

[[noreturn]] void cannot_write(const std::string& what) {
  throw c10::NotImplementedError({__func__, __FILE__, __LINE__},
                                 "the compile path cannot write this graph as Python: " + what);
}

std::string python_string(const std::string& s) {
  std::string out = "'";
  for (const unsigned char c : s) {
    if (c == '\\' || c == '\'') {
      out += '\\';
      out += static_cast<char>(c);
    } else if (c < 0x20 || c == 0x7f) {
      out += fmt::format("\\x{:02x}", c);
    } else {
      out += static_cast<char>(c);
    }
  }
  return out + "'";
}

std::string python_float(double d) {
  if (std::isnan(d)) return "nan";
  if (std::isinf(d)) return d > 0 ? "inf" : "-inf";
  std::string s = fmt::format("{}", d);  // shortest text that reads back the same
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

std::string dtype_name(c10::ScalarType t) {
  switch (t) {
    case c10::kByte:
      return "torch.uint8";
    case c10::kChar:
      return "torch.int8";
    case c10::kShort:
      return "torch.int16";
    case c10::kInt:
      return "torch.int32";
    case c10::kLong:
      return "torch.int64";
    case c10::kHalf:
      return "torch.float16";
    case c10::kFloat:
      return "torch.float32";
    case c10::kDouble:
      return "torch.float64";
    case c10::kComplexHalf:
      return "torch.complex32";
    case c10::kComplexFloat:
      return "torch.complex64";
    case c10::kComplexDouble:
      return "torch.complex128";
    case c10::kBool:
      return "torch.bool";
    case c10::kBFloat16:
      return "torch.bfloat16";
    case c10::kFloat8_e5m2:
      return "torch.float8_e5m2";
    case c10::kFloat8_e4m3fn:
      return "torch.float8_e4m3fn";
    case c10::kUInt16:
      return "torch.uint16";
    case c10::kUInt32:
      return "torch.uint32";
    case c10::kUInt64:
      return "torch.uint64";
    default:
      cannot_write(fmt::format("dtype {}", c10::toString(t)));
  }
}

std::string layout_name(c10::Layout l) {
  switch (l) {
    case c10::kStrided:
      return "torch.strided";
    case c10::kSparse:
      return "torch.sparse_coo";
    case c10::kSparseCsr:
      return "torch.sparse_csr";
    case c10::kSparseCsc:
      return "torch.sparse_csc";
    case c10::kSparseBsr:
      return "torch.sparse_bsr";
    case c10::kSparseBsc:
      return "torch.sparse_bsc";
    default:
      cannot_write(fmt::format("layout {}", static_cast<int>(l)));
  }
}

std::string memory_format_name(c10::MemoryFormat m) {
  switch (m) {
    case c10::MemoryFormat::Contiguous:
      return "torch.contiguous_format";
    case c10::MemoryFormat::Preserve:
      return "torch.preserve_format";
    case c10::MemoryFormat::ChannelsLast:
      return "torch.channels_last";
    case c10::MemoryFormat::ChannelsLast3d:
      return "torch.channels_last_3d";
    default:
      cannot_write("a memory format");
  }
}

// The Python text of constant `v`, for an argument whose declared type is `type` (a dtype, layout
// or memory format travels as an int in the graph; its schema says which).
std::string literal(const c10::IValue& v, const c10::TypePtr& type) {
  c10::TypePtr t = type;
  if (t && t->kind() == c10::TypeKind::OptionalType) t = t->expectRef<c10::OptionalType>().getElementType();
  if (v.isNone()) return "None";
  if (v.isBool()) return v.toBool() ? "True" : "False";
  if (v.isInt()) {
    const auto kind = t ? t->kind() : c10::TypeKind::IntType;
    if (kind == c10::TypeKind::ScalarTypeType) return dtype_name(static_cast<c10::ScalarType>(v.toInt()));
    if (kind == c10::TypeKind::LayoutType) return layout_name(static_cast<c10::Layout>(v.toInt()));
    if (kind == c10::TypeKind::MemoryFormatType) return memory_format_name(static_cast<c10::MemoryFormat>(v.toInt()));
    return std::to_string(v.toInt());
  }
  if (v.isDouble()) return python_float(v.toDouble());
  if (v.isComplexDouble()) {
    const c10::complex<double> c = v.toComplexDouble();
    return fmt::format("complex({}, {})", python_float(c.real()), python_float(c.imag()));
  }
  if (v.isString()) return python_string(v.toStringRef());
  if (v.isDevice()) return "torch.device(" + python_string(v.toDevice().str()) + ")";
  if (v.isList() || v.isTuple()) {
    c10::TypePtr element;
    if (t && t->kind() == c10::TypeKind::ListType) element = t->expectRef<c10::ListType>().getElementType();
    const std::vector<c10::IValue> items = v.isList() ? v.toListRef().vec() : v.toTupleRef().elements().vec();
    std::string out = v.isList() ? "[" : "(";
    for (const c10::IValue& item : items) out += literal(item, element) + ", ";
    return out + (v.isList() ? "]" : ")");
  }
  cannot_write("a constant of type " + v.tagKind());
}

class Writer {
 public:
  explicit Writer(Program& program) : program_(program) {}

  std::string name(const torch::jit::Value* v) {
    auto it = names_.find(v);
    if (it != names_.end()) return it->second;
    return names_[v] = fmt::format("v{}", v->unique());
  }

  // The text of value `v` used as an argument of declared type `type`.
  std::string use(const torch::jit::Value* v, const c10::TypePtr& type) {
    const torch::jit::Node* def = v->node();
    if (def->kind() == torch::jit::prim::Constant) {
      const std::optional<c10::IValue> value = torch::jit::toIValue(v);
      if (!value) cannot_write("a constant without a value");
      if (value->isTensor()) {  // a tensor constant: the program takes it after its inputs
        auto it = names_.find(v);
        if (it != names_.end()) return it->second;
        program_.constants.push_back(value->toTensor());
        const std::string n = fmt::format("c{}", program_.constants.size() - 1);
        constant_params_.push_back(n);
        return names_[v] = n;
      }
      return literal(*value, type ? type : v->type());
    }
    return name(v);
  }

  void node(const torch::jit::Node* n) {
    const auto kind = n->kind();
    if (kind == torch::jit::prim::Constant) return;  // written where it is used
    std::vector<std::string> outs;
    for (const torch::jit::Value* o : n->outputs()) outs.push_back(name(o));
    const std::string lhs = outs.empty() ? "" : fmt::format("{} = ", fmt::join(outs, ", "));
    if (kind == torch::jit::prim::ListConstruct || kind == torch::jit::prim::TupleConstruct) {
      c10::TypePtr element;
      if (n->output()->type()->kind() == c10::TypeKind::ListType)
        element = n->output()->type()->expectRef<c10::ListType>().getElementType();
      std::vector<std::string> items;
      for (const torch::jit::Value* in : n->inputs()) items.push_back(use(in, element));
      const bool list = kind == torch::jit::prim::ListConstruct;
      body_ += fmt::format("    {}{}{}{}\n", lhs, list ? "[" : "(", fmt::join(items, ", "),
                           list ? "]" : (items.size() == 1 ? ",)" : ")"));
      return;
    }
    if (kind == torch::jit::prim::ListUnpack || kind == torch::jit::prim::TupleUnpack) {
      body_ += fmt::format("    {}, = {}\n", fmt::join(outs, ", "), use(n->input(), nullptr));
      return;
    }
    const c10::FunctionSchema* schema = n->maybeSchema();
    if (!schema) cannot_write(fmt::format("a {} node", kind.toQualString()));
    const std::string qualified = schema->name();  // "aten::add"
    const auto sep = qualified.find("::");
    if (sep == std::string::npos) cannot_write("an op without a namespace: " + qualified);
    const std::string overload = schema->overload_name().empty() ? "default" : schema->overload_name();
    std::vector<std::string> args;
    const auto& params = schema->arguments();
    if (n->inputs().size() != params.size() && !schema->is_vararg())
      cannot_write(fmt::format("{} with {} inputs for {} arguments", qualified, n->inputs().size(), params.size()));
    for (std::size_t i = 0; i < n->inputs().size(); ++i) {
      const c10::Argument* p = i < params.size() ? &params[i] : nullptr;
      const std::string text = use(n->input(i), p ? p->real_type() : nullptr);
      args.push_back(p && p->kwarg_only() ? p->name() + "=" + text : text);
    }
    body_ += fmt::format("    {}torch.ops.{}.{}.{}({})\n", lhs, qualified.substr(0, sep), qualified.substr(sep + 2),
                         overload, fmt::join(args, ", "));
  }

  std::string finish(const torch::jit::Graph& g) {
    std::vector<std::string> params;
    for (const torch::jit::Value* in : g.inputs()) params.push_back(name(in));
    std::vector<std::string> results;
    for (const torch::jit::Value* out : g.outputs()) results.push_back(use(out, nullptr));
    params.insert(params.end(), constant_params_.begin(), constant_params_.end());
    return fmt::format("def program({}):\n{}    return ({}{})\n", fmt::join(params, ", "), body_,
                       fmt::join(results, ", "), results.size() == 1 ? "," : "");
  }

 private:
  Program& program_;
  std::unordered_map<const torch::jit::Value*, std::string> names_;
  std::vector<std::string> constant_params_;
  std::string body_;
};

class DynamoCompiled final : public CompiledGraph {
 public:
  DynamoCompiled(Program program, const DynamoBackend& backend)
      : program_(std::move(program)), dynamo_(backend), constants_(program_.constants), backend_(backend.name) {
    nlohmann::json kwargs = {{"source", program_.source},
                             {"filename", program_.filename},
                             {"function", program_.function},
                             {"backend", backend.name},
                             {"module", backend.module}};
    const nlohmann::json options = nlohmann::json::parse(backend.options_json, nullptr, false);
    if (options.is_discarded() || !options.is_object())
      throw Error("torch.compile options are not a JSON object: " + backend.options_json);
    if (!options.empty()) kwargs["options"] = options;
    if (program_.dynamic) kwargs["dynamic"] = *program_.dynamic;
    handle_ = nlohmann::json::parse(call_json(kModule, "compile_program", kwargs.dump()))["handle"].get<int>();
    kwargs_ = nlohmann::json{{"handle", handle_}}.dump();
  }

  ~DynamoCompiled() override {
    try {
      call_json(kModule, "drop_program", kwargs_);
    } catch (...) {  // a destructor says nothing; the interpreter holds the program until exit
    }
  }

  std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) override {
    std::vector<at::Tensor> tensors;
    tensors.reserve(inputs.size() + constants_.size());
    for (const c10::IValue& v : inputs) {
      if (!v.isTensor()) throw Error("a compiled program takes tensors; one input is a " + v.tagKind());
      tensors.push_back(v.toTensor());
    }
    tensors.insert(tensors.end(), constants_.begin(), constants_.end());
    std::vector<at::Tensor> out;
    try {
      out = call(kModule, "run_program", tensors, kwargs_);
    } catch (const Error& e) {
      // "python: gauntlet_compile.run_program raised X: ..." names our module: say torch.compile's
      std::string what = e.what();
      const std::string prefix = fmt::format("python: {}.run_program raised ", kModule);
      if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
      throw Error(fmt::format("torch.compile (backend {}): {}", backend_, what));
    }
    return std::vector<c10::IValue>(out.begin(), out.end());
  }

  CompileStats stats() const override {
    const nlohmann::json j = nlohmann::json::parse(call_json(kModule, "program_stats", kwargs_));
    CompileStats s;
    s.graph_breaks = j.value("graph_breaks", 0);
    s.regions = j.value("graphs", 0);
    s.compiles = j.value("frames", 0);
    s.recompiles = j.value("recompiles", 0);
    s.compile_ms = j.value("compile_ms", 0.0);
    s.dynamo_ms = j.value("dynamo_ms", 0.0);
    s.aot_ms = j.value("aot_ms", 0.0);
    s.backend_ms = j.value("backend_ms", 0.0);
    if (j.contains("cache_hits") && j["cache_hits"].is_number()) s.cache_hits = j["cache_hits"].get<std::int64_t>();
    s.breaks = j.value("breaks", std::vector<std::string>{});
    s.recompile_reasons = j.value("recompile_reasons", std::vector<std::string>{});
    const auto limit = j.value("recompile_limit", std::vector<std::string>{});
    if (!limit.empty()) s.recompile_limit = limit.front();
    return s;
  }

  const Program* program() const override { return &program_; }
  const DynamoBackend* dynamo_backend() const override { return &dynamo_; }

 private:
  Program program_;
  DynamoBackend dynamo_;
  std::vector<at::Tensor> constants_;
  std::string backend_;
  int handle_ = 0;
  std::string kwargs_;
};

}  // namespace

Program program_from_graph(const torch::jit::Graph& graph, const std::string& filename) {
  Program program;
  program.filename = filename;
  program.function = "program";
  Writer writer(program);
  for (const torch::jit::Node* n : graph.nodes()) {
    if (!n->blocks().empty()) cannot_write(fmt::format("control flow ({})", n->kind().toQualString()));
    writer.node(n);
  }
  program.source = writer.finish(graph);
  return program;
}

std::optional<DynamoBackend> dynamo_backend_from_env() {
  const char* env = std::getenv("GAUNTLET_DYNAMO_BACKEND");
  const std::string v = env ? env : "";
  if (v.empty()) return std::nullopt;
  DynamoBackend b = parse_dynamo_backend(v, "$GAUNTLET_DYNAMO_BACKEND");
  b.options_json = dynamo_options_from_env();
  return b;
}

DynamoBackend parse_dynamo_backend(const std::string& value, const std::string& where) {
  check_dynamo_backend(value, where);
  DynamoBackend b;
  const auto at = value.find('@');
  b.name = value.substr(0, at);
  if (at != std::string::npos) b.module = value.substr(at + 1);
  return b;
}

std::string dynamo_options_from_env() {
  const char* env = std::getenv("GAUNTLET_DYNAMO_OPTIONS");
  const std::string v = env ? env : "";
  if (v.empty()) return "{}";
  check_dynamo_options(v, "$GAUNTLET_DYNAMO_OPTIONS");
  return v;
}

void warm_up(const DynamoBackend& backend) {
  call_json(kModule, "warm_up", nlohmann::json{{"backend", backend.name}, {"module", backend.module}}.dump());
}

std::unique_ptr<CompiledGraph> compile_with_dynamo(Program program, const DynamoBackend& backend) {
  return std::make_unique<DynamoCompiled>(std::move(program), backend);
}

}  // namespace gauntlet::python
