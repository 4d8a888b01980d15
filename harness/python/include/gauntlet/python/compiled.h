// torch.compile from C++ (Note [Compile path] in compiled.cpp): a program, written as Python,
// compiled in the embedded interpreter with a dynamo backend chosen by name, and called with C++
// tensors. What dynamo and the backend recorded comes back as CompileStats.
#pragma once

#include <ATen/Tensor.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/plugin/compile_abi.h"

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

// Writes a traced graph (straight-line aten calls, constants, lists and tuples: what the tracer
// records for an op's call) as a Python function `program` calling torch.ops.<ns>.<op>.<overload>.
// Throws c10::NotImplementedError naming the node kind for what it cannot write (control flow,
// module attributes): the harness cannot make a program of it, which says nothing of the backend.
Program program_from_graph(const torch::jit::Graph& graph, const std::string& filename);

// Compiles `program` with torch.compile and `backend`. Compilation happens at the first run() as it
// does for a user (a failure then is the backend's: it throws, with dynamo's or the backend's
// exception in one line). Its stats are read from dynamo's own records.
std::unique_ptr<CompiledGraph> compile_with_dynamo(Program program, const DynamoBackend& backend);

// The dynamo backend `$GAUNTLET_DYNAMO_BACKEND` names (Note [Compile path]): "NAME" or
// "NAME@MODULE", MODULE a Python module to import first (a vendor's package that registers NAME)
// or a .py file's path; unset or empty: none (nullopt). Throws gauntlet::Error naming the variable
// for a value that is not of that form. Read in every process, so workers follow their run.
std::optional<DynamoBackend> dynamo_backend_from_env();

// Once per process and backend: imports what `backend` compiles with and compiles one small
// program with it, so that these one-time costs are paid before any case's clock starts.
void warm_up(const DynamoBackend& backend);

}  // namespace gauntlet::python
