// How each op of the op table is called (torch). See Note [Op table] in op_spec.h.
#pragma once

#include <torch/torch.h>

#include <functional>
#include <string>
#include <vector>

#include "gauntlet/suites/op_spec.h"

namespace gauntlet {

// The arguments of one call: tensor inputs (already on the device, in the case's dtype or the
// golden's fp64) and the key's scalar arguments with the spec's defaults filled in.
class OpCall {
 public:
  OpCall(const OpSpec& spec, const CaseKey& key, std::vector<at::Tensor> tensors);

  const at::Tensor& t(std::size_t i) const { return tensors_.at(i); }
  bool has(std::size_t i) const { return i < tensors_.size() && tensors_[i].defined(); }
  at::Tensor opt(std::size_t i) const { return has(i) ? tensors_[i] : at::Tensor(); }
  std::size_t size() const { return tensors_.size(); }

  std::int64_t i(const std::string& name) const;
  double f(const std::string& name) const;
  bool b(const std::string& name) const;
  std::vector<std::int64_t> ints(const std::string& name) const;
  std::string s(const std::string& name) const;
  // The case's dtype as the op's native tensor options would see it (the input's dtype).
  at::ScalarType dtype() const { return tensors_.empty() ? at::kFloat : tensors_[0].scalar_type(); }

 private:
  const std::string& raw(const std::string& name) const;
  const OpSpec& spec_;
  std::map<std::string, std::string> args_;
  std::vector<at::Tensor> tensors_;
};

// Returns the outputs to compare with the golden. Ops whose raw output is not comparable
// element by element (indices of sort/topk/argmax with ties) return a comparable form instead,
// e.g. the input values gathered at the returned indices.
using OpFn = std::function<std::vector<at::Tensor>(const OpCall&)>;

struct OpDef {
  OpSpec spec;
  OpFn fn;
};

const OpDef* find_op_def(const std::string& name);

// A compact way to write op table entries (suites/src/ops_*.cpp).
class OpBuilder {
 public:
  OpBuilder(std::string name, std::string aten, std::string family);
  OpBuilder& in(InputSpec s);
  OpBuilder& x(double lo = -2, double hi = 2);     // a real-valued input named self/other/...
  OpBuilder& pos(double lo = 0.1, double hi = 4);  // a positive input
  OpBuilder& arg(std::string name, ArgType type, std::string def, std::vector<std::string> choices = {});
  OpBuilder& dtypes(DTypeSet s);
  OpBuilder& grad(bool on = true);
  OpBuilder& grad_pairwise_broadcast();  // a backward, not for every broadcast (backward_any_broadcast)
  OpBuilder& nondeterministic();
  OpBuilder& special();
  OpBuilder& rank(int min_rank);
  OpBuilder& strides_like_input();
  OpBuilder& note(std::string text);
  OpBuilder& check_key(std::function<std::optional<std::string>(const CaseKey&)> rule);  // OpSpec::check_key
  OpBuilder& kinks(std::vector<double> points);                                          // of the last input added
  OpBuilder& fn(OpFn f);
  OpDef build() &&;

 private:
  OpDef d_;
};

// Families register themselves into the registry (suites/src/ops_*.cpp).
class OpRegistry {
 public:
  void add(OpDef d);

 private:
  friend const OpDef* find_op_def(const std::string&);
  friend std::vector<const OpSpec*> all_ops();
  std::map<std::string, OpDef> ops_;
};

void register_elementwise_ops(OpRegistry& r);
void register_reduction_ops(OpRegistry& r);
void register_linalg_nn_ops(OpRegistry& r);
void register_shape_index_ops(OpRegistry& r);
void register_corpus_ops(OpRegistry& r);
void register_extra_ops(OpRegistry& r);

// The at::ScalarType for a dtype.
at::ScalarType to_scalar_type(DType d);

}  // namespace gauntlet
