// torch.compile from C++ (Note [Compile path] in compiled.cpp): a program, written as Python,
// compiled in the embedded interpreter with a dynamo backend chosen by name, and called with C++
// tensors. What dynamo and the backend recorded comes back as CompileStats.
#pragma once

#include <ATen/core/ivalue.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace torch::jit {
struct Graph;
}

namespace gauntlet::python {

// A program as Python source: `function` of `source`, which dynamo's records and tracebacks name
// as `filename` (a model's own file, or "<op aten::add>" for a traced op). `constants` are tensors
// the program takes after its inputs (a traced graph's tensor constants).
struct Program {
  std::string source, filename, function;
  std::vector<at::Tensor> constants;
  // torch.compile's `dynamic`: none, dynamo's default (sizes specialised, then a dimension that
  // changed marked dynamic: automatic dynamic shapes); false: every new size a recompile; true:
  // sizes dynamic from the first compile.
  std::optional<bool> dynamic;
};

// A dynamo backend: the name it registered with torch._dynamo ("inductor", a vendor's "neuron"),
// the Python module to import first so that it is registered (empty: none, or autoload did it),
// and torch.compile's `options` as a JSON object ("{}": none).
struct DynamoBackend {
  std::string name = "inductor";
  std::string module;
  std::string options_json = "{}";
};

}  // namespace gauntlet::python

namespace gauntlet {

// What a compile path did, summed over every call since the program was made: read from dynamo's
// records and, where the backend keeps its own (Note [Backend records] in compiled.cpp), from
// the backend's.
struct CompileStats {
  std::int64_t graph_breaks = 0;    // dynamo's graph breaks, plus nodes the backend's compiler left to the CPU
  std::int64_t regions = 0;         // graphs dynamo made, or the regions the backend compiled of them
  std::int64_t compiles = 0;        // frames dynamo compiled
  std::int64_t recompiles = 0;      // of those, the ones after the first (a guard failed: a new shape or dtype)
  double compile_ms = 0;            // dynamo_ms + aot_ms + backend_ms
  std::vector<std::string> breaks;  // "Unsupported Tensor.item() call (mlp.py:12)": why and where
  double dynamo_ms = 0;             // dynamo's tracing and guards
  double aot_ms = 0;                // AOT autograd's tracing into aten graphs (0 where not told apart)
  double backend_ms = 0;            // the backend's compiler: inductor for `cpu`, the modelled cost on `sim`
  std::vector<std::string> recompile_reasons;  // the guard that failed, per recompile
  std::string recompile_limit;                 // non-empty: the limit was reached and the frame ran eagerly
  // Graphs whose compiled code a compiler's on-disk cache served (inductor's FX graph cache, AOT
  // autograd's); none where no such cache was consulted (Note [Compiler cache]).
  std::optional<std::int64_t> cache_hits;
};

// A compiled program, called many times: with the inputs of the first call, then possibly with
// inputs of other shapes (a shape sequence).
class CompiledGraph {
 public:
  virtual ~CompiledGraph() = default;
  // Runs the program on the backend: its inputs in, its outputs out (autograd records the
  // operations, so a backward through the outputs works).
  virtual std::vector<c10::IValue> run(std::vector<c10::IValue> inputs) = 0;
  virtual CompileStats stats() const = 0;
  // What was compiled, and with which dynamo backend and settings: a bundle compiles it again the
  // same way (Note [Bundles] in harness/core/bundle/bundle.cpp). Null where not told.
  virtual const python::Program* program() const { return nullptr; }
  virtual const python::DynamoBackend* dynamo_backend() const { return nullptr; }
};

}  // namespace gauntlet

namespace gauntlet::python {

// Writes a traced graph (straight-line aten calls, constants, lists and tuples: what the tracer
// records for an op's call) as a Python function `program` calling torch.ops.<ns>.<op>.<overload>.
// Throws c10::NotImplementedError naming the node kind for what it cannot write (control flow,
// module attributes): the harness cannot make a program of it, which says nothing of the backend.
Program program_from_graph(const torch::jit::Graph& graph, const std::string& filename);

// Compiles `program` with torch.compile and `backend`. Compilation happens at the first run() as it
// does for a user (a failure then is the backend's: it throws, with dynamo's or the backend's
// exception in one line). Its stats are read from dynamo's own records.
std::unique_ptr<CompiledGraph> compile_with_dynamo(Program program, const DynamoBackend& backend);

// The dynamo backend `$GAUNTLET_DYNAMO_BACKEND` names (Note [Compile path]), with the options of
// dynamo_options_from_env(): "NAME" or
// "NAME@MODULE", MODULE a Python module to import first (a vendor's package that registers NAME)
// or a .py file's path; unset or empty: none (nullopt). Throws gauntlet::Error naming the variable
// for a value that is not of that form. Read in every process, so workers follow their run.
std::optional<DynamoBackend> dynamo_backend_from_env();
// "NAME" or "NAME@MODULE" as a DynamoBackend (no options), checked as above; `where` names the
// value's source in the error.
DynamoBackend parse_dynamo_backend(const std::string& value, const std::string& where);
// torch.compile's options `$GAUNTLET_DYNAMO_OPTIONS` gives, a JSON object ("{}" when unset or
// empty); they apply to whichever dynamo backend compiles. Throws gauntlet::Error naming the
// variable for anything else.
std::string dynamo_options_from_env();

// Once per process and backend: imports what `backend` compiles with and compiles one small
// program with it, so that these one-time costs are paid before any case's clock starts.
void warm_up(const DynamoBackend& backend);

}  // namespace gauntlet::python
