// Note [Model zoo]: every model is one TorchScript source file (models/zoo/*.py) defining a
// function whose arguments are the input(s) AND every weight, all tensors: no nn.Module and no
// attributes, so the same source runs op by op (the graph executor with optimisation off) and
// through a compile path. models/models.yaml names each model's file, its arguments in order with
// a shape expression and a value domain, its outputs, its size configs (tiny, small, medium,
// large) and dtypes. docs/models.md describes the format and how to add a model.
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "gauntlet/base/error.h"

namespace torch::jit {
struct CompilationUnit;
struct Graph;
struct Node;
}  // namespace torch::jit

namespace gauntlet {

// A problem with the model catalog or a model: what() is one line, "file:line: message" when the
// problem is in a file.
class ModelError : public Error {
 public:
  using Error::Error;
};

// What an argument is; this fixes its type and how its values are drawn (Note [Model inputs]).
enum class ArgKind {
  Input,      // floating activations: uniform in `range` (default [-1, 1])
  Weight,     // floating parameter: uniform in +-1/sqrt(fan_in), or in `range`; gets a gradient
  Buffer,     // floating, not trained (batch-norm running stats): uniform in `range`
  Index,      // int64 in [0, bound)
  Offsets,    // int64, offsets[0] = 0, non-decreasing, every value in [0, bound]
  Positions,  // int64 0, 1, ..., n-1 along the last dim (token positions)
};

const char* arg_kind_name(ArgKind k);
bool is_floating(ArgKind k);

struct ModelArg {
  std::string name;
  ArgKind kind = ArgKind::Input;
  std::vector<std::string> shape;  // size expressions, as written ("b*s", "h*4", "hw/2")
  std::string fan_in;              // Weight: expression; empty when `range` is given
  double lo = -1.0, hi = 1.0;      // Input, Buffer, Weight with `range`
  std::string bound;               // Index, Offsets: expression
  std::string where;               // "models.yaml:42"
  bool floating() const { return is_floating(kind); }
  bool trainable() const { return kind == ArgKind::Weight; }
};

struct ModelOutput {
  std::string name;
  std::vector<std::string> shape;
};

// One argument under one size config: every expression evaluated.
struct ConfigArg {
  std::vector<std::int64_t> shape;
  double lo = -1.0, hi = 1.0;  // the value range (fan-in already applied)
  std::int64_t bound = 0;      // Index, Offsets
};

struct ModelConfig {
  std::string name;                                // "tiny"
  std::map<std::string, std::int64_t> sizes;       // {"b": 2, "d": 8}
  std::vector<ConfigArg> args;                     // one per ModelSpec::args, same order
  std::vector<std::vector<std::int64_t>> outputs;  // one shape per ModelSpec::outputs
  std::int64_t numel() const;                      // elements over every argument
};

struct ModelSpec {
  std::string name;
  std::string description;
  std::string path;    // absolute path of the source file
  std::string source;  // its text, exactly (graph nodes' source lines are the file's lines)
  std::string function = "forward";
  std::vector<ModelArg> args;        // in the function's argument order
  std::vector<ModelOutput> outputs;  // a tuple result flattens to these, in order
  std::vector<ModelConfig> configs;  // tiny, small, medium, large (then any others), as written
  std::vector<std::string> dtypes;   // "f32", "bf16", "f16", "f64"
  bool trainable = false;            // backward runs; every Weight gets a gradient
  std::vector<std::string> ops;      // the aten ops the file's header claims ("aten::linear")
  std::string where;                 // "models.yaml:12"

  const ModelConfig& config(const std::string& name) const;  // throws ModelError
  const ModelConfig* find_config(const std::string& name) const;
  std::vector<std::string> config_names() const;
  std::vector<std::size_t> trainable_args() const;  // indices of Weight args
  bool supports(at::ScalarType dtype) const;
};

struct ModelCatalog {
  std::string dir;                // the models folder
  std::string file;               // its models.yaml
  std::vector<ModelSpec> models;  // in file order

  const ModelSpec& get(const std::string& name) const;  // throws ModelError
  const ModelSpec* find(const std::string& name) const;
  std::vector<std::string> names() const;
};

// The configs every model must define, smallest first.
inline const std::vector<std::string>& standard_configs() {
  static const std::vector<std::string> names{"tiny", "small", "medium", "large"};
  return names;
}

// $GAUNTLET_MODELS when set, else the source tree's models/ folder.
std::string default_models_dir();

// Reads and validates dir/models.yaml and every source file it names; every problem is a
// ModelError naming file:line and the field.
ModelCatalog load_model_catalog(const std::string& dir);

// Evaluates a size expression: integers and size names joined by + - * / and parentheses; a
// division must be exact. Throws std::invalid_argument with a message naming the problem.
std::int64_t eval_size_expr(const std::string& expr, const std::map<std::string, std::int64_t>& sizes);

// "f32" -> kFloat, "bf16", "f16", "f64"; throws ModelError otherwise. And back.
at::ScalarType model_dtype(const std::string& name);
std::string model_dtype_name(at::ScalarType t);

// Note [Model inputs]: the arguments of `spec` under `config`, in order, on the CPU, contiguous.
// Floating arguments have `dtype`, the others int64. Values come from a splitmix64 stream per
// argument seeded from (seed, argument name) alone: identical across processes, machines and
// libtorch versions (libtorch's RNG is never used). Values are drawn in double and rounded to
// `dtype` once; the same seed with f64 gives the unrounded values. `batch_scale` multiplies the
// batch size `b` (a shape sequence, Note [Shape sequences]); every model has one.
std::vector<at::Tensor> make_model_inputs(const ModelSpec& spec, const std::string& config, at::ScalarType dtype,
                                          std::uint64_t seed, std::int64_t batch_scale = 1);

// Deterministic values uniform in [lo, hi] (a splitmix64 stream from `seed`), e.g. the fixed
// weights of a loss sum(output * w).
at::Tensor splitmix_uniform(at::IntArrayRef shape, at::ScalarType dtype, std::uint64_t seed, double lo = -1.0,
                            double hi = 1.0);

// Compiles the model's source with torch::jit::compile; a compile error is a ModelError naming
// the file (libtorch's message, with its source excerpt, follows).
std::shared_ptr<torch::jit::CompilationUnit> compile_model(const ModelSpec& spec);

// Calls spec.function with `inputs` and flattens the result (a tensor, a tuple or a list of
// tensors, nested) into its tensors, in order.
std::vector<at::Tensor> run_model(torch::jit::CompilationUnit& cu, const ModelSpec& spec,
                                  const std::vector<at::Tensor>& inputs);

// A model's result (a tensor, a tuple or a list of tensors, nested) as its tensors, in order.
std::vector<at::Tensor> flatten_model_result(const c10::IValue& result);

// The forward graph as compiled, with calls to the file's helper functions inlined and no other
// pass run (a copy: the executor's optimisations never show here), for inspecting nodes.
std::shared_ptr<torch::jit::Graph> model_graph(torch::jit::CompilationUnit& cu, const ModelSpec& spec);

// The 1-based line of the model's source file that produced `node` (0 when unknown). Nodes
// inlined from a helper function point into the helper's body.
int source_line(const torch::jit::Node& node);

// Note [Executor settings]: how the graph executor runs. A function's executor is created on its
// first call and keeps the settings it saw then, so set these before the first call of a fresh
// CompilationUnit. The settings are process-wide; ScopedExecutor restores the previous ones.
struct ExecutorSettings {
  bool profiling = true;  // torch::jit::getProfilingMode() and getExecutorMode(): false = legacy
  bool optimize = true;   // torch::jit::setGraphExecutorOptimize
  static ExecutorSettings current();
  static ExecutorSettings op_by_op() { return {false, false}; }  // legacy executor, no passes
};

class ScopedExecutor {
 public:
  explicit ScopedExecutor(ExecutorSettings s);
  ~ScopedExecutor();
  ScopedExecutor(const ScopedExecutor&) = delete;
  ScopedExecutor& operator=(const ScopedExecutor&) = delete;

 private:
  bool saved_profiling_, saved_executor_, saved_optimize_;
};

}  // namespace gauntlet

// ---- Model cases (Note [Model keys] in harness/base/case_key.cpp)

namespace gauntlet {
struct CaseKey;
// The catalog of default_models_dir(), loaded once per process (thread-safe); throws ModelError.
const ModelCatalog& model_catalog();
// Checks a model case key against the catalog: the model, its config and dtype, train only for
// trainable models, no arguments. The problem as text, or nullopt when valid.
std::optional<std::string> validate_model_key(const CaseKey& key);
}  // namespace gauntlet
