// Compiling and calling a model's TorchScript source (Note [Model zoo], Note [Executor settings]).
#include <fmt/format.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/api/function_impl.h>
#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/passes/inliner.h>
#include <torch/csrc/jit/python/update_graph_executor_opt.h>
#include <torch/csrc/jit/runtime/graph_executor.h>
#include <torch/jit.h>

#include "gauntlet/models/models.h"

namespace gauntlet {

namespace {

// libtorch names a compiled string "<string>"; name the file instead. (Its line numbers are the
// file's.) Leading blank lines go.
std::string with_path(std::string msg, const std::string& path) {
  msg.erase(0, msg.find_first_not_of("\n "));
  const std::string from = "File \"<string>\"";
  const std::string to = "File \"" + path + "\"";
  for (auto pos = msg.find(from); pos != std::string::npos; pos = msg.find(from, pos + to.size())) {
    msg.replace(pos, from.size(), to);
  }
  return msg;
}

void flatten(const c10::IValue& v, std::vector<at::Tensor>& out) {
  if (v.isTensor()) {
    out.push_back(v.toTensor());
  } else if (v.isTuple()) {
    for (const auto& e : v.toTupleRef().elements()) flatten(e, out);
  } else if (v.isList()) {
    for (const auto& e : v.toListRef()) flatten(e, out);
  } else {
    throw ModelError(fmt::format("a model returned a {}, not tensors", v.tagKind()));
  }
}

torch::jit::Function& model_function(torch::jit::CompilationUnit& cu, const ModelSpec& spec) {
  torch::jit::Function* fn = cu.find_function(c10::QualifiedName(spec.function));
  if (!fn) throw ModelError(fmt::format("{}: defines no function '{}'", spec.path, spec.function));
  return *fn;
}

}  // namespace

std::vector<at::Tensor> flatten_model_result(const c10::IValue& result) {
  std::vector<at::Tensor> out;
  flatten(result, out);
  return out;
}

std::shared_ptr<torch::jit::CompilationUnit> compile_model(const ModelSpec& spec) {
  std::shared_ptr<torch::jit::CompilationUnit> cu;
  try {
    cu = torch::jit::compile(spec.source);
  } catch (const c10::Error& e) {
    throw ModelError(
        fmt::format("{}: TorchScript compile failed: {}", spec.path, with_path(e.what_without_backtrace(), spec.path)));
  } catch (const std::exception& e) {
    // Frontend errors are torch::jit::ErrorReport: the message, then the source excerpt with a
    // caret under the offending expression.
    throw ModelError(fmt::format("{}: TorchScript compile failed: {}", spec.path, with_path(e.what(), spec.path)));
  }
  model_function(*cu, spec);
  return cu;
}

std::vector<at::Tensor> run_model(torch::jit::CompilationUnit& cu, const ModelSpec& spec,
                                  const std::vector<at::Tensor>& inputs) {
  if (inputs.size() != spec.args.size()) {
    throw ModelError(fmt::format("model {} takes {} arguments, not {}", spec.name, spec.args.size(), inputs.size()));
  }
  torch::jit::Stack stack(inputs.begin(), inputs.end());
  c10::IValue result = model_function(cu, spec)(std::move(stack));
  std::vector<at::Tensor> out;
  flatten(result, out);
  return out;
}

std::shared_ptr<torch::jit::Graph> model_graph(torch::jit::CompilationUnit& cu, const ModelSpec& spec) {
  std::shared_ptr<torch::jit::Graph> g = torch::jit::toGraphFunction(model_function(cu, spec)).graph()->copy();
  torch::jit::Inline(*g);
  return g;
}

int source_line(const torch::jit::Node& node) {
  const torch::jit::SourceRange& r = node.sourceRange();
  const auto src = r.source();
  if (!src) return 0;
  // CompilationUnit::define names its source "<string>" starting at line 1, so this is the
  // file's own 1-based line number.
  return static_cast<int>(src->lineno_to_source_lineno(src->lineno_for_offset(r.start())));
}

ExecutorSettings ExecutorSettings::current() {
  return {torch::jit::getExecutorMode().load(), torch::jit::getGraphExecutorOptimize()};
}

// Restores all three flags exactly (profiling mode and executor mode may differ from each other).
ScopedExecutor::ScopedExecutor(ExecutorSettings s) {
  saved_profiling_ = torch::jit::getProfilingMode().load();
  saved_executor_ = torch::jit::getExecutorMode().load();
  saved_optimize_ = torch::jit::getGraphExecutorOptimize();
  torch::jit::getProfilingMode() = s.profiling;
  torch::jit::getExecutorMode() = s.profiling;
  torch::jit::setGraphExecutorOptimize(s.optimize);
}

ScopedExecutor::~ScopedExecutor() {
  torch::jit::getProfilingMode() = saved_profiling_;
  torch::jit::getExecutorMode() = saved_executor_;
  torch::jit::setGraphExecutorOptimize(saved_optimize_);
}

}  // namespace gauntlet
