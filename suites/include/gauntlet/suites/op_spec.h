// Note [Op table]: the OpInfo-like registry. An OpSpec says, without torch, everything the
// catalog and the docs need to know about an op: its tensor inputs and their value domains, its
// scalar arguments and their defaults, the dtypes it supports, what it promises about its outputs,
// whether it is deterministic and whether it has a backward. How it is *called* lives beside it in
// op_impl.h (torch). Both are registered together in suites/src/ops_*.cpp.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/dtype.h"

namespace gauntlet {

// What values a tensor input holds. Inputs are drawn from a fixed-seed generator (inputs.h).
enum class Domain {
  Real,         // uniform in [lo, hi] (default [-2, 2])
  Positive,     // uniform in [lo, hi] with lo > 0 (log, sqrt, rsqrt, pow base)
  Index,        // integers in [0, bound): bound = size of input `index_of` along arg `dim`
  UniqueIndex,  // as Index, but distinct along the indexed dim (deterministic scatter)
  Mask,         // bools, about half true
  Prob,         // uniform in (0, 1) (binary cross entropy targets)
  Class,        // integer class ids in [0, size of input `index_of` along dim 1 (or 0 if 1-d))
};

// How an input's dtype follows the case dtype.
enum class InputType { CaseDType, Int64, Bool, Float32IfInt };

struct InputSpec {
  std::string name;
  Domain domain = Domain::Real;
  double lo = -2.0, hi = 2.0;
  InputType type = InputType::CaseDType;
  int index_of = 0;            // for Index/Class domains: whose size bounds the values
  bool differentiable = true;  // gets requires_grad in eager-bwd mode
  bool optional = false;       // may be left out by giving fewer shapes (e.g. bias)
  // Points where the op is not differentiable (hardswish at +-3): inputs that round onto one
  // are moved off it, since the gradient there is a convention, not a value to compare.
  // The values of the arguments min, max, min_val and max_val are kinks too.
  std::vector<double> kinks = {};
};

enum class ArgType { Int, Float, Bool, Ints, Str };

struct ArgSpec {
  std::string name;
  ArgType type = ArgType::Int;
  std::string default_value;         // canonical text, as in a case key
  std::vector<std::string> choices;  // for Str: the allowed values
};

// What an op promises about its outputs; the runner checks these.
struct OutputPromise {
  bool same_shape_as_golden = true;  // always true today: compared to the CPU op's output
  bool dtype_matches_golden = true;  // output dtype equals the golden op's in the case dtype
  bool strides_like_input = false;   // elementwise ops keep a dense input's strides
};

struct OpSpec {
  std::string name;    // key target, e.g. "add"
  std::string aten;    // the aten overload it exercises, e.g. "aten::add.Tensor"
  std::string family;  // unary, binary, reduction, matmul, conv, ...
  std::vector<InputSpec> inputs;
  std::vector<ArgSpec> args;
  DTypeSet dtypes = kFloatDTypes;
  bool has_backward = false;
  // false: the backward raises unless the first input, broadcast with each other input alone,
  // already has the output's shape (libtorch 1.13's clamp.Tensor backward combines masks in
  // place: clamp(7x1x5, 1x3x5, 5) raises "output with shape [7, 1, 5] doesn't match the broadcast
  // shape [7, 3, 5]", in the golden too). The catalog does not expand eager-bwd cases with other
  // shapes and validate_key rejects them.
  bool backward_any_broadcast = true;
  bool deterministic = true;
  bool special_values = false;  // propagates NaN/Inf: gets the special-values variant
  int min_rank = 0;             // of the first input
  OutputPromise promise;
  std::string note;  // free text for the op table listing
  // The op's own rules on a key, beyond the generic ones validate_key checks (pad_reflect: the
  // pad's length against the input's rank), so that a key whose golden the CPU cannot compute is
  // rejected. Returns the problem as text, or nullopt; unset: no rules of its own.
  std::function<std::optional<std::string>(const CaseKey&)> check_key;

  std::size_t min_inputs() const;
  std::size_t max_inputs() const { return inputs.size(); }
  const ArgSpec* arg(const std::string& n) const;
  // Whether the op has a backward for these input shapes (in a floating dtype): has_backward, and
  // unless backward_any_broadcast, the first input broadcast with each other one gives the output's shape.
  bool backward_fits(const std::vector<Shape>& shapes) const;
};

// The registry. find_op returns nullptr for an unknown name.
const OpSpec* find_op(const std::string& name);
std::vector<const OpSpec*> all_ops();  // sorted by name
// "unknown op 'NAME'" with the nearest op's name when one is close ("did you mean"), else with
// where to see the table.
std::string unknown_op_message(const std::string& name);

// Note [Exempt ops]: ops real models execute that the op table leaves out on purpose, because
// every case already exercises them and they compute nothing of their own: views (view, slice,
// select, t, expand_as, ...), copies and moves (contiguous, to, copy_, clone, type_as, detach),
// factories without arguments to get wrong (empty, zeros, ones, new_*, fill_, zero_), host reads
// (item, is_floating_point) and dropout, the identity in eval. The one list, with reasons, is
// kExemptOps in registry.cpp; docs/writing-suites.md lists it too.
struct OpExemption {
  const char* name;    // the aten base name ("view", "to", "dropout")
  const char* kind;    // view, copy, factory, host read, eval identity
  const char* reason;  // why a table entry would add nothing
};
// The exemption of an executed op ("aten::view", "aten::to.dtype", "aten::fill_.Scalar": any
// overload, in-place forms as their op), or nullptr when the op table should have it.
const OpExemption* find_op_exemption(const std::string& executed_op);
const std::vector<OpExemption>& op_exemptions();

// Note [Contraction length]: K, the number of products each output element of an op case sums
// (mm's inner dim, a convolution's C_in/groups x kernel, a recurrent cell's I + H, attention's
// max(E, S)), from the key's shapes; in eager-bwd the largest sum the gradients take too (every
// operand dim of a product, a convolution's N x positions). Tolerance rules may scale atol with
// sqrt(K) (atol_per_sqrt_k, docs/tolerances.md): a K-term sum of rounded products errs by
// O(sqrt(K)). 0 when the op sums no products (or the key is not an op case).
std::int64_t contraction_length(const CaseKey& key);

// Checks a key against its op's spec (arity, dtypes, argument names and types, layout, mode).
// Returns the problem as text, or nullopt when the key is valid.
std::optional<std::string> validate_key(const CaseKey& key);

}  // namespace gauntlet
