// Op table: elementwise math (unary, binary, ternary), activations, comparisons, logic, bits.
#include "gauntlet/suites/op_impl.h"

namespace gauntlet {

namespace {

using T = std::vector<at::Tensor>;
constexpr DTypeSet kNumeric = kFloatDTypes | kIntDTypes;
constexpr DTypeSet kSigned =
    kFloatDTypes | dtype_bit(DType::I64) | dtype_bit(DType::I32) | dtype_bit(DType::I16) | dtype_bit(DType::I8);
constexpr DTypeSet kIntBool = kIntDTypes | kBoolDType;

// A unary float op with a backward that must propagate NaN/Inf: the common case.
OpBuilder unary(const char* name, const char* aten, double lo = -2, double hi = 2) {
  OpBuilder b(name, aten, "unary");
  b.x(lo, hi).grad().special().strides_like_input();
  return b;
}

OpBuilder activation(const char* name, const char* aten) {
  OpBuilder b(name, aten, "activation");
  b.x(-4, 4).grad().special().strides_like_input();
  return b;
}

OpBuilder binary(const char* name, const char* aten, DTypeSet dtypes = kFloatDTypes) {
  OpBuilder b(name, aten, "binary");
  b.x().x().dtypes(dtypes);
  return b;
}

OpBuilder compare(const char* name, const char* aten) {
  OpBuilder b(name, aten, "comparison");
  b.x().x().dtypes(kAllTypes).special();
  return b;
}

}  // namespace

void register_elementwise_ops(OpRegistry& r) {
  auto add = [&r](OpBuilder& b) { r.add(std::move(b).build()); };
#define UNARY(NAME, LO, HI, EXPR)                  \
  {                                                \
    auto b = unary(#NAME, "aten::" #NAME, LO, HI); \
    b.fn([](const OpCall& c) {                     \
      const auto& x = c.t(0);                      \
      return T{EXPR};                              \
    });                                            \
    add(b);                                        \
  }

  // Transcendental, in their domains.
  UNARY(exp, -4, 4, at::exp(x))
  UNARY(exp2, -4, 4, at::exp2(x))
  UNARY(expm1, -2, 2, at::expm1(x)) {
    // Positive-domain ops get a positive input instead of the default real one.
    struct P {
      const char* name;
      double lo, hi;
      at::Tensor (*f)(const at::Tensor&);
    };
    const P pos_ops[] = {
        {"log", 0.05, 8, [](const at::Tensor& x) { return at::log(x); }},
        {"log2", 0.05, 8, [](const at::Tensor& x) { return at::log2(x); }},
        {"log10", 0.05, 8, [](const at::Tensor& x) { return at::log10(x); }},
        {"sqrt", 0.01, 9, [](const at::Tensor& x) { return at::sqrt(x); }},
        {"rsqrt", 0.05, 9, [](const at::Tensor& x) { return at::rsqrt(x); }},
        {"reciprocal", 0.1, 4, [](const at::Tensor& x) { return at::reciprocal(x); }},
        {"lgamma", 0.1, 6, [](const at::Tensor& x) { return at::lgamma(x); }},
        {"digamma", 0.5, 6, [](const at::Tensor& x) { return at::digamma(x); }},
        {"acosh", 1.05, 5, [](const at::Tensor& x) { return at::acosh(x); }},
    };
    for (const P& p : pos_ops) {
      OpBuilder b(p.name, std::string("aten::") + p.name, "unary");
      b.pos(p.lo, p.hi).grad().special().strides_like_input();
      auto f = p.f;
      b.fn([f](const OpCall& c) { return T{f(c.t(0))}; });
      add(b);
    }
  }
  UNARY(log1p, -0.9, 4, at::log1p(x))
  UNARY(sin, -4, 4, at::sin(x))
  UNARY(cos, -4, 4, at::cos(x))
  UNARY(tan, -1.2, 1.2, at::tan(x))
  UNARY(asin, -0.95, 0.95, at::asin(x))
  UNARY(acos, -0.95, 0.95, at::acos(x))
  UNARY(atan, -4, 4, at::atan(x))
  UNARY(sinh, -3, 3, at::sinh(x))
  UNARY(cosh, -3, 3, at::cosh(x))
  UNARY(tanh, -3, 3, at::tanh(x))
  UNARY(asinh, -4, 4, at::asinh(x))
  UNARY(atanh, -0.95, 0.95, at::atanh(x))
  UNARY(sigmoid, -6, 6, at::sigmoid(x))
  UNARY(erf, -3, 3, at::erf(x))
  UNARY(erfc, -3, 3, at::erfc(x))
  UNARY(erfinv, -0.95, 0.95, at::erfinv(x))
  UNARY(frac, -4, 4, at::frac(x))
#undef UNARY

  // Rounding: exact results, no useful gradient.
  for (const char* name : {"floor", "ceil", "round", "trunc"}) {
    OpBuilder b(name, std::string("aten::") + name, "rounding");
    b.x(-8, 8).special().strides_like_input();
    std::string n = name;
    b.fn([n](const OpCall& c) {
      const auto& x = c.t(0);
      if (n == "floor") return T{at::floor(x)};
      if (n == "ceil") return T{at::ceil(x)};
      if (n == "round") return T{at::round(x)};
      return T{at::trunc(x)};
    });
    add(b);
  }
  {
    OpBuilder b("round_decimals", "aten::round.decimals", "rounding");
    b.x(-8, 8).arg("decimals", ArgType::Int, "2").strides_like_input();
    b.fn([](const OpCall& c) { return T{at::round(c.t(0), c.i("decimals"))}; });
    add(b);
  }

  // Sign-like and integer-friendly unary ops.
  {
    OpBuilder b("abs", "aten::abs", "unary");
    b.x().dtypes(kSigned).grad().special().strides_like_input();
    b.fn([](const OpCall& c) { return T{at::abs(c.t(0))}; });
    add(b);
  }
  {
    OpBuilder b("neg", "aten::neg", "unary");
    b.x().dtypes(kSigned).grad().special().strides_like_input();
    b.fn([](const OpCall& c) { return T{at::neg(c.t(0))}; });
    add(b);
  }
  {
    OpBuilder b("sign", "aten::sign", "unary");
    b.x().dtypes(kSigned).special().strides_like_input();
    b.fn([](const OpCall& c) { return T{at::sign(c.t(0))}; });
    add(b);
  }
  {
    OpBuilder b("square", "aten::square", "unary");
    b.x().dtypes(kSigned).grad().special().strides_like_input();
    b.fn([](const OpCall& c) { return T{at::square(c.t(0))}; });
    add(b);
  }
  {
    OpBuilder b("nan_to_num", "aten::nan_to_num", "unary");
    b.x().special().strides_like_input();
    b.arg("nan", ArgType::Float, "0").arg("posinf", ArgType::Float, "100").arg("neginf", ArgType::Float, "-100");
    b.fn([](const OpCall& c) { return T{at::nan_to_num(c.t(0), c.f("nan"), c.f("posinf"), c.f("neginf"))}; });
    add(b);
  }

  // Activations.
  {
    auto b = activation("relu", "aten::relu");
    b.dtypes(kSigned).kinks({0});
    b.fn([](const OpCall& c) { return T{at::relu(c.t(0))}; });
    add(b);
  }
  {
    auto b = activation("relu6", "aten::hardtanh");
    b.kinks({0, 6});
    b.fn([](const OpCall& c) { return T{at::relu6(c.t(0))}; });
    add(b);
  }
  {
    auto b = activation("gelu", "aten::gelu");
    b.arg("approximate", ArgType::Str, "none", {"none", "tanh"});
    b.fn([](const OpCall& c) { return T{at::gelu(c.t(0), c.s("approximate"))}; });
    add(b);
  }
  {
    auto b = activation("silu", "aten::silu");
    b.fn([](const OpCall& c) { return T{at::silu(c.t(0))}; });
    add(b);
  }
  {
    auto b = activation("mish", "aten::mish");
    b.fn([](const OpCall& c) { return T{at::mish(c.t(0))}; });
    add(b);
  }
  {
    auto b = activation("softplus", "aten::softplus");
    b.arg("beta", ArgType::Float, "1").arg("threshold", ArgType::Float, "20");
    b.fn([](const OpCall& c) { return T{at::softplus(c.t(0), c.f("beta"), c.f("threshold"))}; });
    add(b);
  }
  {
    auto b = activation("hardswish", "aten::hardswish");
    b.kinks({-3, 3});
    b.fn([](const OpCall& c) { return T{at::hardswish(c.t(0))}; });
    add(b);
  }
  {
    auto b = activation("hardsigmoid", "aten::hardsigmoid");
    b.kinks({-3, 3});
    b.fn([](const OpCall& c) { return T{at::hardsigmoid(c.t(0))}; });
    add(b);
  }
  {
    auto b = activation("hardtanh", "aten::hardtanh");
    b.arg("min_val", ArgType::Float, "-1").arg("max_val", ArgType::Float, "1");
    b.fn([](const OpCall& c) { return T{at::hardtanh(c.t(0), c.f("min_val"), c.f("max_val"))}; });
    add(b);
  }
  {
    auto b = activation("elu", "aten::elu");
    b.arg("alpha", ArgType::Float, "1");
    b.fn([](const OpCall& c) { return T{at::elu(c.t(0), c.f("alpha"))}; });
    add(b);
  }
  {
    auto b = activation("selu", "aten::selu");
    b.fn([](const OpCall& c) { return T{at::selu(c.t(0))}; });
    add(b);
  }
  {
    auto b = activation("celu", "aten::celu");
    b.arg("alpha", ArgType::Float, "1");
    b.fn([](const OpCall& c) { return T{at::celu(c.t(0), c.f("alpha"))}; });
    add(b);
  }
  {
    auto b = activation("leaky_relu", "aten::leaky_relu");
    b.arg("negative_slope", ArgType::Float, "0.01");
    b.fn([](const OpCall& c) { return T{at::leaky_relu(c.t(0), c.f("negative_slope"))}; });
    add(b);
  }
  {
    OpBuilder b("logsigmoid", "aten::log_sigmoid", "activation");
    b.x(-4, 4).grad().special();
    b.fn([](const OpCall& c) { return T{at::log_sigmoid(c.t(0))}; });
    add(b);
  }
  {
    OpBuilder b("logit", "aten::logit", "activation");
    b.in(InputSpec{"self", Domain::Prob}).grad().strides_like_input();
    b.fn([](const OpCall& c) { return T{at::logit(c.t(0))}; });
    add(b);
  }

  // Binary arithmetic.
  {
    auto b = binary("add", "aten::add.Tensor", kNumeric);
    b.arg("alpha", ArgType::Float, "1").grad().special().strides_like_input();
    b.fn([](const OpCall& c) {
      double a = c.f("alpha");
      if (!at::isFloatingType(c.dtype())) return T{at::add(c.t(0), c.t(1), static_cast<std::int64_t>(a))};
      return T{at::add(c.t(0), c.t(1), a)};
    });
    add(b);
  }
  {
    auto b = binary("sub", "aten::sub.Tensor", kNumeric);
    b.arg("alpha", ArgType::Float, "1").grad().special().strides_like_input();
    b.fn([](const OpCall& c) {
      double a = c.f("alpha");
      if (!at::isFloatingType(c.dtype())) return T{at::sub(c.t(0), c.t(1), static_cast<std::int64_t>(a))};
      return T{at::sub(c.t(0), c.t(1), a)};
    });
    add(b);
  }
  {
    auto b = binary("mul", "aten::mul.Tensor", kNumeric | kBoolDType);
    b.grad().special().strides_like_input();
    b.fn([](const OpCall& c) { return T{at::mul(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("div", "aten::div.Tensor", "binary");
    b.x().pos(0.25, 4).grad().special().strides_like_input();
    b.fn([](const OpCall& c) { return T{at::div(c.t(0), c.t(1))}; });
    add(b);
  }
  // Rounded division is its own case family: its result jumps by 1 where the quotient crosses
  // an integer, so it needs its own tolerance rules (tolerances.yaml).
  {
    OpBuilder b("div_rounding", "aten::div.Tensor_mode", "binary");
    b.x(-8, 8).pos(0.25, 4).special().strides_like_input();
    b.dtypes(kFloatDTypes | kIntDTypes);
    b.arg("rounding_mode", ArgType::Str, "trunc", {"trunc", "floor"});
    b.fn([](const OpCall& c) { return T{at::div(c.t(0), c.t(1), c.s("rounding_mode"))}; });
    add(b);
  }
  {
    OpBuilder b("remainder", "aten::remainder.Tensor", "binary");
    b.x(-8, 8).pos(0.5, 4).dtypes(kFloatDTypes | kIntDTypes);
    b.fn([](const OpCall& c) { return T{at::remainder(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("fmod", "aten::fmod.Tensor", "binary");
    b.x(-8, 8).pos(0.5, 4).dtypes(kFloatDTypes | kIntDTypes);
    b.fn([](const OpCall& c) { return T{at::fmod(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("pow", "aten::pow.Tensor_Tensor", "binary");
    b.pos(0.1, 3).x(-2, 2).grad().special();
    b.fn([](const OpCall& c) { return T{at::pow(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("pow_scalar", "aten::pow.Tensor_Scalar", "unary");
    b.pos(0.1, 3).grad();
    b.arg("exponent", ArgType::Float, "2");
    b.fn([](const OpCall& c) { return T{at::pow(c.t(0), c.f("exponent"))}; });
    add(b);
  }
  {
    auto b = binary("atan2", "aten::atan2");
    b.grad().special();
    b.fn([](const OpCall& c) { return T{at::atan2(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("hypot", "aten::hypot");
    b.grad();
    b.fn([](const OpCall& c) { return T{at::hypot(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("copysign", "aten::copysign.Tensor");
    b.fn([](const OpCall& c) { return T{at::copysign(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("xlogy", "aten::xlogy.Tensor", "binary");
    b.x().pos(0.1, 4).grad();
    b.fn([](const OpCall& c) { return T{at::xlogy(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("maximum", "aten::maximum", kNumeric);
    b.grad().special();
    b.fn([](const OpCall& c) { return T{at::maximum(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("minimum", "aten::minimum", kNumeric);
    b.grad().special();
    b.fn([](const OpCall& c) { return T{at::minimum(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("fmax", "aten::fmax");
    b.special();
    b.fn([](const OpCall& c) { return T{at::fmax(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("fmin", "aten::fmin");
    b.special();
    b.fn([](const OpCall& c) { return T{at::fmin(c.t(0), c.t(1))}; });
    add(b);
  }

  // Comparisons: bool outputs, exact.
  {
    auto b = compare("eq", "aten::eq.Tensor");
    b.fn([](const OpCall& c) { return T{at::eq(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = compare("ne", "aten::ne.Tensor");
    b.fn([](const OpCall& c) { return T{at::ne(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = compare("lt", "aten::lt.Tensor");
    b.fn([](const OpCall& c) { return T{at::lt(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = compare("le", "aten::le.Tensor");
    b.fn([](const OpCall& c) { return T{at::le(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = compare("gt", "aten::gt.Tensor");
    b.fn([](const OpCall& c) { return T{at::gt(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = compare("ge", "aten::ge.Tensor");
    b.fn([](const OpCall& c) { return T{at::ge(c.t(0), c.t(1))}; });
    add(b);
  }
  for (const char* name : {"isnan", "isinf", "isfinite"}) {
    OpBuilder b(name, std::string("aten::") + name, "comparison");
    b.x().special();
    std::string n = name;
    b.fn([n](const OpCall& c) {
      if (n == "isnan") return T{at::isnan(c.t(0))};
      if (n == "isinf") return T{at::isinf(c.t(0))};
      return T{at::isfinite(c.t(0))};
    });
    add(b);
  }

  // Logic and bits.
  {
    auto b = binary("logical_and", "aten::logical_and", kAllTypes);
    b.fn([](const OpCall& c) { return T{at::logical_and(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("logical_or", "aten::logical_or", kAllTypes);
    b.fn([](const OpCall& c) { return T{at::logical_or(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("logical_xor", "aten::logical_xor", kAllTypes);
    b.fn([](const OpCall& c) { return T{at::logical_xor(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("logical_not", "aten::logical_not", "logic");
    b.x().dtypes(kAllTypes);
    b.fn([](const OpCall& c) { return T{at::logical_not(c.t(0))}; });
    add(b);
  }
  {
    auto b = binary("bitwise_and", "aten::bitwise_and.Tensor", kIntBool);
    b.fn([](const OpCall& c) { return T{at::bitwise_and(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("bitwise_or", "aten::bitwise_or.Tensor", kIntBool);
    b.fn([](const OpCall& c) { return T{at::bitwise_or(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    auto b = binary("bitwise_xor", "aten::bitwise_xor.Tensor", kIntBool);
    b.fn([](const OpCall& c) { return T{at::bitwise_xor(c.t(0), c.t(1))}; });
    add(b);
  }
  {
    OpBuilder b("bitwise_not", "aten::bitwise_not", "logic");
    b.x().dtypes(kIntBool);
    b.fn([](const OpCall& c) { return T{at::bitwise_not(c.t(0))}; });
    add(b);
  }

  // Ternary and clamping.
  {
    OpBuilder b("clamp", "aten::clamp", "ternary");
    b.x(-4, 4).dtypes(kNumeric).grad().special().strides_like_input();
    b.arg("min", ArgType::Float, "-1").arg("max", ArgType::Float, "1");
    b.fn([](const OpCall& c) {
      if (!at::isFloatingType(c.dtype()))
        return T{at::clamp(c.t(0), static_cast<std::int64_t>(c.f("min")), static_cast<std::int64_t>(c.f("max")))};
      return T{at::clamp(c.t(0), c.f("min"), c.f("max"))};
    });
    add(b);
  }
  // libtorch 1.13's clamp.Tensor backward combines masks of (self, min) and (self, max) in place,
  // so it raises unless each pair broadcasts to the output's shape ("output with shape [7, 1, 5]
  // doesn't match the broadcast shape [7, 3, 5]" for 7x1x5,1x3x5,5): no golden.
  {
    OpBuilder b("clamp_tensor", "aten::clamp.Tensor", "ternary");
    b.x(-4, 4).x(-2, 0).x(0, 2).grad_pairwise_broadcast();
    b.note(
        "bwd only where self broadcast with min, and with max, gives the output's shape (libtorch 1.13 raises "
        "otherwise)");
    b.fn([](const OpCall& c) { return T{at::clamp(c.t(0), c.t(1), c.t(2))}; });
    add(b);
  }
  {
    OpBuilder b("where", "aten::where.self", "ternary");
    InputSpec cond{"condition", Domain::Mask};
    cond.differentiable = false;
    b.in(cond).x().x().dtypes(kAllTypes).grad();
    b.fn([](const OpCall& c) { return T{at::where(c.t(0), c.t(1), c.t(2))}; });
    add(b);
  }
  {
    OpBuilder b("lerp", "aten::lerp.Scalar", "ternary");
    b.x().x().grad().arg("weight", ArgType::Float, "0.3");
    b.fn([](const OpCall& c) { return T{at::lerp(c.t(0), c.t(1), c.f("weight"))}; });
    add(b);
  }
  {
    OpBuilder b("addcmul", "aten::addcmul", "ternary");
    b.x().x().x().grad().arg("value", ArgType::Float, "0.5");
    b.fn([](const OpCall& c) { return T{at::addcmul(c.t(0), c.t(1), c.t(2), c.f("value"))}; });
    add(b);
  }
  {
    OpBuilder b("addcdiv", "aten::addcdiv", "ternary");
    b.x().x().pos(0.25, 4).grad().arg("value", ArgType::Float, "0.5");
    b.fn([](const OpCall& c) { return T{at::addcdiv(c.t(0), c.t(1), c.t(2), c.f("value"))}; });
    add(b);
  }
}

}  // namespace gauntlet
