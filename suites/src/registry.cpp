// The op registry, the builder that fills it, and key validation against an op's spec.
#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <mutex>

#include "gauntlet/base/strings.h"
#include "gauntlet/models/models.h"
#include "gauntlet/suites/coll_spec.h"
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

const OpRegistry& registry();

bool parse_int(const std::string& s, std::int64_t& v) {
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  return ec == std::errc() && p == s.data() + s.size();
}

bool parse_double(const std::string& s, double& v) {
  if (s == "inf") {
    v = INFINITY;
    return true;
  }
  if (s == "-inf") {
    v = -INFINITY;
    return true;
  }
  char* end = nullptr;
  v = std::strtod(s.c_str(), &end);
  return !s.empty() && end == s.c_str() + s.size();
}

// Checks one argument value against its declared type; returns the problem or "".
std::string check_arg(const ArgSpec& a, const std::string& v) {
  std::int64_t i = 0;
  double f = 0;
  switch (a.type) {
    case ArgType::Int:
      return parse_int(v, i) ? "" : "expects an integer";
    case ArgType::Float:
      return parse_double(v, f) ? "" : "expects a number";
    case ArgType::Bool:
      return (v == "0" || v == "1") ? "" : "expects 0 or 1";
    case ArgType::Ints:
      for (const auto& part : split(v, ":")) {
        if (!parse_int(part, i)) return "expects integers separated by ':'";
      }
      return "";
    case ArgType::Str:
      if (a.choices.empty() || std::find(a.choices.begin(), a.choices.end(), v) != a.choices.end()) return "";
      return fmt::format("expects one of {}", fmt::join(a.choices, ", "));
  }
  return "";
}

}  // namespace

// ---- OpSpec ----

std::size_t OpSpec::min_inputs() const {
  std::size_t n = 0;
  for (const auto& in : inputs) n += in.optional ? 0 : 1;
  return n;
}

const ArgSpec* OpSpec::arg(const std::string& n) const {
  for (const auto& a : args) {
    if (a.name == n) return &a;
  }
  return nullptr;
}

namespace {
// The shape two shapes broadcast to, or nullopt when they do not.
std::optional<Shape> broadcast(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (std::size_t i = 0; i < out.size(); ++i) {
    const std::int64_t x = i < a.size() ? a[a.size() - 1 - i] : 1, y = i < b.size() ? b[b.size() - 1 - i] : 1;
    if (x != y && x != 1 && y != 1) return std::nullopt;
    out[out.size() - 1 - i] = x == 1 ? y : x;
  }
  return out;
}
}  // namespace

bool OpSpec::backward_fits(const std::vector<Shape>& shapes) const {
  if (!has_backward) return false;
  if (backward_any_broadcast || shapes.empty()) return true;
  std::optional<Shape> all = shapes.front();
  for (const Shape& s : shapes) all = all ? broadcast(*all, s) : std::nullopt;
  for (const Shape& s : shapes) {
    if (!all || broadcast(shapes.front(), s) != all) return false;
  }
  return true;
}

// ---- OpCall ----

OpCall::OpCall(const OpSpec& spec, const CaseKey& key, std::vector<at::Tensor> tensors)
    : spec_(spec), tensors_(std::move(tensors)) {
  for (const auto& a : spec.args) args_[a.name] = a.default_value;
  for (const auto& [k, v] : key.args) args_[k] = v;
}

const std::string& OpCall::raw(const std::string& name) const {
  auto it = args_.find(name);
  TORCH_INTERNAL_ASSERT(it != args_.end(), "op ", spec_.name, " reads undeclared argument ", name);
  return it->second;
}

std::int64_t OpCall::i(const std::string& name) const {
  std::int64_t v = 0;
  TORCH_CHECK(parse_int(raw(name), v), "argument ", name, " is not an integer");
  return v;
}

double OpCall::f(const std::string& name) const {
  double v = 0;
  TORCH_CHECK(parse_double(raw(name), v), "argument ", name, " is not a number");
  return v;
}

bool OpCall::b(const std::string& name) const { return raw(name) == "1"; }

std::vector<std::int64_t> OpCall::ints(const std::string& name) const {
  std::vector<std::int64_t> out;
  for (const auto& part : split(raw(name), ":")) {
    std::int64_t v = 0;
    TORCH_CHECK(parse_int(part, v), "argument ", name, " is not a list of integers");
    out.push_back(v);
  }
  return out;
}

std::string OpCall::s(const std::string& name) const { return raw(name); }

// ---- OpBuilder ----

OpBuilder::OpBuilder(std::string name, std::string aten, std::string family) {
  d_.spec.name = std::move(name);
  d_.spec.aten = std::move(aten);
  d_.spec.family = std::move(family);
}

OpBuilder& OpBuilder::in(InputSpec s) {
  d_.spec.inputs.push_back(std::move(s));
  return *this;
}

OpBuilder& OpBuilder::x(double lo, double hi) {
  static const char* kNames[] = {"self", "other", "third", "fourth", "fifth"};
  InputSpec s;
  s.name = kNames[std::min<std::size_t>(d_.spec.inputs.size(), 4)];
  s.lo = lo;
  s.hi = hi;
  return in(s);
}

OpBuilder& OpBuilder::pos(double lo, double hi) {
  x(lo, hi);
  d_.spec.inputs.back().domain = Domain::Positive;
  return *this;
}

OpBuilder& OpBuilder::arg(std::string name, ArgType type, std::string def, std::vector<std::string> choices) {
  d_.spec.args.push_back(ArgSpec{std::move(name), type, std::move(def), std::move(choices)});
  return *this;
}

OpBuilder& OpBuilder::dtypes(DTypeSet s) {
  d_.spec.dtypes = s;
  return *this;
}
OpBuilder& OpBuilder::grad(bool on) {
  d_.spec.has_backward = on;
  return *this;
}
OpBuilder& OpBuilder::grad_pairwise_broadcast() {
  d_.spec.has_backward = true;
  d_.spec.backward_any_broadcast = false;
  return *this;
}
OpBuilder& OpBuilder::nondeterministic() {
  d_.spec.deterministic = false;
  return *this;
}
OpBuilder& OpBuilder::special() {
  d_.spec.special_values = true;
  return *this;
}
OpBuilder& OpBuilder::rank(int r) {
  d_.spec.min_rank = r;
  return *this;
}
OpBuilder& OpBuilder::strides_like_input() {
  d_.spec.promise.strides_like_input = true;
  return *this;
}
OpBuilder& OpBuilder::note(std::string text) {
  d_.spec.note = std::move(text);
  return *this;
}
OpBuilder& OpBuilder::check_key(std::function<std::optional<std::string>(const CaseKey&)> rule) {
  d_.spec.check_key = std::move(rule);
  return *this;
}
OpBuilder& OpBuilder::kinks(std::vector<double> points) {
  TORCH_INTERNAL_ASSERT(!d_.spec.inputs.empty(), "kinks() before any input");
  d_.spec.inputs.back().kinks = std::move(points);
  return *this;
}
OpBuilder& OpBuilder::fn(OpFn f) {
  d_.fn = std::move(f);
  return *this;
}
OpDef OpBuilder::build() && { return std::move(d_); }

// ---- OpRegistry ----

void OpRegistry::add(OpDef d) {
  TORCH_INTERNAL_ASSERT(d.fn, "op ", d.spec.name, " has no call");
  std::string name = d.spec.name;
  bool inserted = ops_.emplace(name, std::move(d)).second;
  TORCH_INTERNAL_ASSERT(inserted, "op ", name, " registered twice");
}

namespace {
const OpRegistry& registry() {
  static const OpRegistry r = [] {
    OpRegistry reg;
    register_elementwise_ops(reg);
    register_reduction_ops(reg);
    register_linalg_nn_ops(reg);
    register_shape_index_ops(reg);
    register_corpus_ops(reg);
    register_extra_ops(reg);
    return reg;
  }();
  return r;
}
}  // namespace

const OpDef* find_op_def(const std::string& name) {
  const auto& ops = registry().ops_;
  auto it = ops.find(name);
  return it == ops.end() ? nullptr : &it->second;
}

const OpSpec* find_op(const std::string& name) {
  const OpDef* d = find_op_def(name);
  return d ? &d->spec : nullptr;
}

std::vector<const OpSpec*> all_ops() {
  std::vector<const OpSpec*> out;
  for (const auto& [name, d] : registry().ops_) out.push_back(&d.spec);
  return out;
}

// ---- Exempt ops (Note [Exempt ops]) ----

const std::vector<OpExemption>& op_exemptions() {
  static const std::vector<OpExemption> kExemptOps = {
      {"view", "view",
       "a view: same storage, new sizes; every reshape/flatten case and every output read goes through views"},
      {"slice", "view", "a view (x[a:b]): narrow, split and chunk cases cover it, and layout step2 inputs are slices"},
      {"select", "view", "a view (x[i]): unbind and index cases cover it"},
      {"t", "view", "a view (transpose of a 2-d tensor): transpose cases and layout t inputs cover it"},
      {"expand_as", "view", "a view: expand cases cover it"},
      {"as_strided", "view", "a view: every non-contiguous layout is made with strided views"},
      {"alias", "view", "a view of the same tensor"},
      {"detach", "view", "an autograd alias: no data moves; every eager-bwd case detaches its outputs"},
      {"contiguous", "copy", "a copy into dense strides: every non-contiguous layout case compares contiguous copies"},
      {"clone", "copy", "a copy: golden inputs and outputs are cloned in every case"},
      {"copy", "copy", "a copy (copy_): every case copies its inputs to the device and its outputs back"},
      {"to", "copy", "a dtype or device move: every case moves its inputs to the device in the case dtype"},
      {"_to_copy", "copy", "what to() calls: as to"},
      {"type_as", "copy", "a dtype move (to the other tensor's dtype): as to"},
      {"empty", "factory", "uninitialised memory: no values to compare; every output is allocated with it"},
      {"empty_like", "factory", "uninitialised memory: as empty"},
      {"empty_strided", "factory", "uninitialised memory: as empty"},
      {"zeros", "factory", "a constant: zeros_like and full cases cover constant factories"},
      {"ones", "factory", "a constant: ones_like and full cases cover constant factories"},
      {"new_zeros", "factory", "a constant (a tensor method form of zeros): as zeros"},
      {"new_ones", "factory", "a constant: as ones"},
      {"new_full", "factory", "a constant: full cases cover it"},
      {"new_empty", "factory", "uninitialised memory: as empty"},
      {"scalar_tensor", "factory", "a 0-d constant; ops with scalar arguments make them in every case"},
      {"fill", "factory",
       "an in-place constant (fill_): full and full_like cases cover it; the strided layout fills its padding"},
      {"zero", "factory", "an in-place zero (zero_): as fill_; every backward zeroes its gradients"},
      {"item", "host read", "reads one value to the host (_local_scalar_dense): every comparison reads device values"},
      {"_local_scalar_dense", "host read", "what item() calls: as item"},
      {"is_floating_point", "host read", "a dtype query: no kernel runs"},
      {"size", "host read", "a shape query: no kernel runs"},
      {"dim", "host read", "a shape query: no kernel runs"},
      {"numel", "host read", "a shape query: no kernel runs"},
      {"dropout", "eval identity",
       "the identity in eval (train=False), which is how models run; training dropout is random"},
      {"feature_dropout", "eval identity", "as dropout"},
      {"alpha_dropout", "eval identity", "as dropout"},
  };
  return kExemptOps;
}

const OpExemption* find_op_exemption(const std::string& executed_op) {
  std::string base = executed_op.rfind("aten::", 0) == 0 ? executed_op.substr(6) : executed_op;
  if (base.find("::") != std::string::npos) return nullptr;  // other namespaces (torchvision::) are ops
  base = base.substr(0, base.find('.'));
  if (base.size() > 1 && base.back() == '_' && base[base.size() - 2] != '_') base.pop_back();  // in-place form
  for (const OpExemption& e : op_exemptions()) {
    if (base == e.name) return &e;
  }
  return nullptr;
}

std::int64_t contraction_length(const CaseKey& key) {
  const OpSpec* op = key.kind == "op" ? find_op(key.target) : nullptr;
  if (!op) return 0;
  const std::vector<Shape>& s = key.shapes;
  // Size of input i along dim d (negative: from the end); 0 when there is no such dim.
  auto dim = [&s](std::size_t i, int d) -> std::int64_t {
    if (i >= s.size()) return 0;
    const int n = static_cast<int>(s[i].size()), j = d < 0 ? n + d : d;
    return j >= 0 && j < n ? s[i][static_cast<std::size_t>(j)] : 0;
  };
  auto largest_dim = [&s](std::size_t from, std::size_t to) {
    std::int64_t m = 0;
    for (std::size_t i = from; i < std::min(to, s.size()); ++i) {
      for (std::int64_t d : s[i]) m = std::max(m, d);
    }
    return m;
  };
  const bool bwd = key.mode == Mode::EagerBwd;
  const std::string& n = op->name;
  if (n == "mm" || n == "bmm" || n == "matmul" || n == "linear" || n == "dot" || n == "mv") {
    return bwd ? largest_dim(0, 2) : dim(0, -1);
  }
  if (n == "addmm" || n == "baddbmm" || n == "addmv") return bwd ? largest_dim(1, 3) : dim(1, -1);
  if (n == "einsum") {  // the contracted index is not named by the shapes: the largest last dim bounds it
    std::int64_t m = 0;
    for (std::size_t i = 0; i < s.size(); ++i) m = std::max(m, bwd ? largest_dim(i, i + 1) : dim(i, -1));
    return m;
  }
  if (op->family == "conv") {
    if (s.size() < 2 || s[1].size() < 2 || s[0].size() < 2) return 0;
    const auto t = key.args.find("transposed");
    const bool transposed = n.rfind("conv_transpose", 0) == 0 || (t != key.args.end() && t->second == "1");
    const auto g = key.args.find("groups");
    std::int64_t groups = 1;
    if (g != key.args.end()) std::from_chars(g->second.data(), g->second.data() + g->second.size(), groups);
    // forward: weight (C_out, C_in/groups, k...); transposed: (C_in, C_out/groups, k...), whose
    // outputs sum C_in/groups channels over at most the whole kernel.
    const std::int64_t w = std::max<std::int64_t>(1, s[1][transposed ? 1 : 0]);
    std::int64_t k = numel(s[1]) / w / (transposed ? std::max<std::int64_t>(1, groups) : 1);
    // The weight's gradient sums over the batch and every position: numel(input) / C bounds it
    // (an unbatched (C, spatial...) input has its channels first too).
    const bool batched = s[0].size() == s[1].size();
    if (bwd) k = std::max(k, numel(s[0]) / std::max<std::int64_t>(1, dim(0, batched ? 1 : 0)));
    return k;
  }
  if (op->family == "recurrent") {
    if (n == "pack_padded_sequence" || n == "pad_packed_sequence") return 0;
    const std::int64_t k = dim(0, -1) + dim(1, -1);   // the gates: w_ih x input (I) + w_hh x h (H)
    return bwd ? std::max(k, largest_dim(0, 1)) : k;  // the weights' gradients sum over time and batch
  }
  if (n == "sdpa_math" || n == "_native_multi_head_attention") {
    return bwd ? largest_dim(0, 3) : std::max(dim(0, -1), dim(1, -2));  // q k^T sums E, weights x v sums S
  }
  if (n == "_transformer_encoder_layer_fwd")
    return std::max({dim(0, -1), dim(0, -2), dim(9, 0)});  // E, L, the FFN width
  return 0;
}

std::string unknown_op_message(const std::string& name) {
  std::vector<std::string> names;
  for (const OpSpec* o : all_ops()) names.push_back(o->name);
  const std::string hint = nearest_hint(name, names);
  return fmt::format("unknown op '{}'{}", name, hint.empty() ? " (see gauntlet list --ops)" : hint);
}

std::optional<std::string> validate_key(const CaseKey& key) {
  if (key.kind == "coll") return validate_coll_key(key);
  if (key.kind == "model") return validate_model_key(key);
  const OpSpec* op = find_op(key.target);
  if (!op) return unknown_op_message(key.target);
  if (!contains(op->dtypes, key.dtype)) {
    return fmt::format("op {} does not support dtype {} (supports {})", op->name, dtype_name(key.dtype),
                       dtype_set_str(op->dtypes));
  }
  if (key.shapes.size() < op->min_inputs() || key.shapes.size() > op->max_inputs()) {
    return fmt::format("op {} takes {} tensor inputs, the key gives {}", op->name,
                       op->min_inputs() == op->max_inputs()
                           ? std::to_string(op->min_inputs())
                           : fmt::format("{} to {}", op->min_inputs(), op->max_inputs()),
                       key.shapes.size());
  }
  const Shape& first = key.shapes.front();
  if (static_cast<int>(first.size()) < op->min_rank) {
    return fmt::format("op {} needs an input of rank >= {}", op->name, op->min_rank);
  }
  for (const auto& [name, value] : key.args) {
    const ArgSpec* a = op->arg(name);
    if (!a) {
      if (name == "values" && value == "special" && op->special_values && is_floating(key.dtype)) continue;
      if (name == "values" && value != "special") {
        return fmt::format("argument values={} is not allowed: 'values' is 'special' or left out", value);
      }
      if (name == "values") {
        return fmt::format("values=special needs a floating dtype and an op that propagates special values ({} {})",
                           op->name, dtype_name(key.dtype));
      }
      return fmt::format("op {} has no argument '{}'", op->name, name);
    }
    std::string problem = check_arg(*a, value);
    if (!problem.empty()) return fmt::format("argument {}={} of op {} {}", name, value, op->name, problem);
  }
  // A "dim" argument names a dim of the first input (stack and unsqueeze: of their output, one
  // more): out of range, or not a number, it is a usage error here rather than an ERROR when the
  // case runs. A Str dim is "all" or dims separated by ':'.
  if (const ArgSpec* a = op->arg("dim"); a && (a->type == ArgType::Int || a->type == ArgType::Str)) {
    std::string value = a->default_value;
    for (const auto& [name, v] : key.args) {
      if (name == "dim") value = v;
    }
    const bool adds_dim = op->name == "stack" || op->name == "unsqueeze";
    const std::int64_t rank = std::max<std::int64_t>(static_cast<std::int64_t>(first.size()), 1) + (adds_dim ? 1 : 0);
    if (!(a->type == ArgType::Str && value == "all")) {
      for (const auto& part : split(value, ":")) {
        std::int64_t d = 0;
        if (!parse_int(part, d)) {
          return fmt::format(
              "argument dim={} of op {} {}", value, op->name,
              a->type == ArgType::Str ? "expects 'all' or dims separated by ':' (0, 0:2, -1)" : "expects an integer");
        }
        if (d < -rank || d >= rank) {
          return fmt::format("argument dim={} of op {}: dim {} is out of range for {} input of rank {} (from {} to {})",
                             value, op->name, d, adds_dim ? "an" : "a first", first.size(), -rank, rank - 1);
        }
      }
    }
  }
  switch (key.layout) {
    case Layout::Contig:
      break;
    case Layout::Transposed:
      if (first.size() < 2) return std::string("layout t needs an input of rank >= 2");
      break;
    case Layout::Strided:
      if (first.empty()) return std::string("layout step2 needs an input of rank >= 1");
      break;
    case Layout::ChannelsLast:
      if (first.size() != 4) return std::string("layout cl needs a 4-d first input");
      break;
  }
  if (key.mode == Mode::EagerBwd && (!op->has_backward || !is_floating(key.dtype))) {
    return fmt::format("op {} has no backward in dtype {}", op->name, dtype_name(key.dtype));
  }
  if (key.mode == Mode::EagerBwd && !op->backward_fits(key.shapes)) {
    std::vector<std::string> shapes;
    for (const Shape& sh : key.shapes) shapes.push_back(shape_str(sh));
    return fmt::format(
        "op {} has no backward for inputs {}: its first input, broadcast with each other input alone, "
        "must have the output's shape (libtorch 1.13 raises, in the golden too)",
        op->name, fmt::join(shapes, ","));
  }
  if (op->check_key) return op->check_key(key);
  return std::nullopt;
}

at::ScalarType to_scalar_type(DType d) {
  switch (d) {
    case DType::F64:
      return at::kDouble;
    case DType::F32:
      return at::kFloat;
    case DType::F16:
      return at::kHalf;
    case DType::BF16:
      return at::kBFloat16;
    case DType::I64:
      return at::kLong;
    case DType::I32:
      return at::kInt;
    case DType::I16:
      return at::kShort;
    case DType::I8:
      return at::kChar;
    case DType::U8:
      return at::kByte;
    case DType::Bool:
      return at::kBool;
  }
  return at::kFloat;
}

}  // namespace gauntlet
