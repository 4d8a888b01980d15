// One TorchScript node run outside the interpreter, on values kept per graph value: what the
// first-divergent-node walk (model_case.cpp) does.
#pragma once

#include <torch/csrc/jit/ir/ir.h>
#include <torch/csrc/jit/runtime/operator.h>

#include <optional>
#include <unordered_map>
#include <vector>

namespace gauntlet {

using GraphEnv = std::unordered_map<const torch::jit::Value*, c10::IValue>;

// Runs `node` (not control flow) with its inputs from `env`, and puts its outputs there: the
// structural prim ops (constants, lists, tuples) directly, every other node its registered
// operation.
inline void step_node(const torch::jit::Node* node, GraphEnv& env) {
  const auto kind = node->kind();
  const std::size_t n = node->outputs().size();
  if (kind == torch::jit::prim::Constant) {
    // A constant without a value (a Function left behind by inlining: `prim::Constant[name="heads"]`)
    // is never read as data; 2.x's toIValue gives nothing for it.
    std::optional<c10::IValue> value = torch::jit::toIValue(node->output());
    env[node->output()] = value ? std::move(*value) : c10::IValue();
    return;
  }
  torch::jit::Stack stack;
  for (const torch::jit::Value* v : node->inputs()) stack.push_back(env.at(v));
  if (kind == torch::jit::prim::ListConstruct) {
    const c10::TypePtr elem = node->output()->type()->expectRef<c10::ListType>().getElementType();
    c10::impl::GenericList list(elem);
    for (c10::IValue& v : stack) list.push_back(std::move(v));
    env[node->output()] = c10::IValue(std::move(list));
    return;
  }
  if (kind == torch::jit::prim::TupleConstruct) {
    env[node->output()] = c10::ivalue::Tuple::create(std::vector<c10::IValue>(stack.begin(), stack.end()));
    return;
  }
  if (kind == torch::jit::prim::GetAttr) {  // a module's attribute (the interpreter's own instruction)
    env[node->output()] = stack.at(0).toObject()->getAttr(node->s(torch::jit::attr::name));
    return;
  }
  if (kind == torch::jit::prim::ListUnpack || kind == torch::jit::prim::TupleUnpack) {
    const std::vector<c10::IValue> items =
        stack.at(0).isTuple() ? stack.at(0).toTupleRef().elements().vec() : stack.at(0).toListRef().vec();
    for (std::size_t k = 0; k < n; ++k) env[node->outputs()[k]] = items.at(k);
    return;
  }
  // A vararg op (aten::format, prim::tolist, ...) reads its number of inputs from the stack, as
  // the interpreter's OPN instruction pushes it.
  const c10::FunctionSchema* schema = node->maybeSchema();
  if (schema && schema->is_vararg()) stack.emplace_back(static_cast<std::int64_t>(node->inputs().size()));
  node->getOperation()(stack);
  for (std::size_t k = 0; k < n; ++k) env[node->outputs()[k]] = stack[stack.size() - n + k];
}

}  // namespace gauntlet
