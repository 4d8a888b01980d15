// The model zoo: the catalog and its errors, size expressions, inputs, and every model's compile,
// forward, backward, executor modes and op claims (Note [Model zoo]).
#include "gauntlet/models/models.h"

#include <ATen/Parallel.h>
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/api/compilation_unit.h>
#include <torch/csrc/jit/ir/ir.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iterator>
#include <set>
#include <sstream>
#include <tuple>

#include "gauntlet/base/case_key.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

constexpr std::uint64_t kSeed = 0x6a09e667f3bcc908ULL;

const ModelCatalog& catalog() {
  static const ModelCatalog c = load_model_catalog(GAUNTLET_SOURCE_MODELS_DIR);
  return c;
}

// Model names for the parameterised tests; empty (and CatalogTest fails) if the catalog is bad.
std::vector<std::string> model_names() {
  try {
    return catalog().names();
  } catch (const std::exception&) {
    return {};
  }
}

std::vector<std::string> trainable_model_names() {
  std::vector<std::string> out;
  for (const auto& n : model_names()) {
    if (catalog().get(n).trainable) out.push_back(n);
  }
  return out;
}

std::vector<at::Tensor> to_dtype(const std::vector<at::Tensor>& in, at::ScalarType dtype) {
  std::vector<at::Tensor> out;
  for (const auto& t : in) out.push_back(at::isFloatingType(t.scalar_type()) ? t.to(dtype) : t);
  return out;
}

std::vector<std::int64_t> sizes_of(const at::Tensor& t) { return t.sizes().vec(); }

// Agreement in the spirit of torch.testing.assert_close, loose: |a - b| <= atol + rtol * |b|
// with atol scaled by b's largest magnitude. Returns "" or a description of the worst element.
std::string close(const at::Tensor& a, const at::Tensor& ref, double rtol, double atol_rel) {
  at::Tensor x = a.to(at::kDouble), y = ref.to(at::kDouble);
  if (x.sizes() != y.sizes())
    return fmt::format("shape {} vs {}", fmt::join(x.sizes(), "x"), fmt::join(y.sizes(), "x"));
  const double scale = std::max(1.0, y.abs().max().item<double>());
  at::Tensor err = (x - y).abs();
  at::Tensor allowed = atol_rel * scale + rtol * y.abs();
  if ((err <= allowed).all().item<bool>()) return "";
  const auto worst = (err - allowed).argmax().item<std::int64_t>();
  return fmt::format("max abs error {:.3g} (at flat index {}: {} vs {}), scale {:.3g}", err.max().item<double>(), worst,
                     x.flatten()[worst].item<double>(), y.flatten()[worst].item<double>(), scale);
}

// sum(output * fixed weights) over every output: a loss whose gradient reaches every output
// element with a different weight. The weights depend on the output index alone.
at::Tensor weighted_loss(const std::vector<at::Tensor>& outs) {
  at::Tensor loss = at::zeros({}, outs.at(0).options());
  for (std::size_t i = 0; i < outs.size(); ++i) {
    at::Tensor w = splitmix_uniform(outs[i].sizes(), at::kFloat, kSeed + 101 * (i + 1)).to(outs[i].scalar_type());
    loss = loss + (outs[i] * w).sum();
  }
  return loss;
}

struct Grads {
  std::vector<at::Tensor> outputs, grads;
};

// Forward and the gradients of weighted_loss w.r.t. every trainable argument.
Grads forward_backward(torch::jit::CompilationUnit& cu, const ModelSpec& spec, std::vector<at::Tensor> inputs) {
  std::vector<at::Tensor> wrt;
  for (std::size_t i : spec.trainable_args()) {
    inputs[i] = inputs[i].detach().requires_grad_(true);
    wrt.push_back(inputs[i]);
  }
  Grads g;
  g.outputs = run_model(cu, spec, inputs);
  g.grads = torch::autograd::grad({weighted_loss(g.outputs)}, wrt);
  return g;
}

// ---- catalog ----

TEST(ModelCatalog, LoadsTheZoo) {
  const ModelCatalog& c = catalog();
  EXPECT_GE(c.models.size(), 10u);
  for (const auto& m : c.models) {
    SCOPED_TRACE(m.name);
    EXPECT_TRUE(fs::is_regular_file(m.path)) << m.path;
    EXPECT_FALSE(m.source.empty());
    EXPECT_FALSE(m.ops.empty());
    EXPECT_EQ(m.config_names().size(), m.configs.size());
    for (std::size_t i = 0; i < standard_configs().size(); ++i) EXPECT_EQ(m.configs.at(i).name, standard_configs()[i]);
    EXPECT_TRUE(m.supports(at::kFloat));
    EXPECT_TRUE(m.supports(at::kDouble)) << "f64 is the golden dtype";
    for (const auto& cfg : m.configs) {
      EXPECT_EQ(cfg.args.size(), m.args.size());
      EXPECT_EQ(cfg.outputs.size(), m.outputs.size());
    }
    // Sizes grow from tiny to large.
    for (std::size_t i = 1; i < standard_configs().size(); ++i) {
      EXPECT_GT(m.configs[i].numel(), m.configs[i - 1].numel()) << m.configs[i].name;
    }
  }
  EXPECT_EQ(&c.get("mlp"), c.find("mlp"));
  EXPECT_THROW(c.get("no_such_model"), ModelError);
  EXPECT_THROW(c.get("mlp").config("huge"), ModelError);
}

TEST(ModelCatalog, KeyArgumentsSeqAndShapesAreCheckedWithTheirRange) {
  auto problem = [](const std::string& key) { return validate_model_key(CaseKey::parse(key)).value_or(""); };
  EXPECT_EQ(problem("model/mlp/f32/tiny/compile/infer/seq=4,shapes=static"), "");
  EXPECT_EQ(problem("model/mlp/f32/tiny/compile/infer/shapes=dynamic"), "");
  EXPECT_NE(
      problem("model/mlp/f32/tiny/compile/infer/shapes=symbolic").find("shapes=symbolic is not static or dynamic"),
      std::string::npos);
  EXPECT_NE(problem("model/mlp/f32/tiny/eager/infer/shapes=static").find("needs exec compile"), std::string::npos);
  EXPECT_NE(problem("model/mlp/f32/tiny/compile/infer/seq=17").find("not a count from 1 to 16"), std::string::npos);
  EXPECT_NE(problem("model/mlp/f32/tiny/compile/infer/x=1").find("unknown argument 'x'"), std::string::npos);
}

TEST(ModelCatalog, ArgsAndConfigsAsWritten) {
  const ModelSpec& m = catalog().get("mlp");
  ASSERT_EQ(m.args.size(), 7u);
  EXPECT_EQ(m.args[0].name, "x");
  EXPECT_EQ(m.args[0].kind, ArgKind::Input);
  EXPECT_EQ(m.args[1].kind, ArgKind::Weight);
  EXPECT_EQ(m.args[1].shape, (std::vector<std::string>{"h", "d"}));
  const ModelConfig& tiny = m.config("tiny");
  EXPECT_EQ(tiny.args[1].shape, (std::vector<std::int64_t>{16, 8}));
  EXPECT_DOUBLE_EQ(tiny.args[1].hi, 1.0 / std::sqrt(8.0));
  EXPECT_EQ(tiny.outputs.at(0), (std::vector<std::int64_t>{2, 4}));
  EXPECT_EQ(m.trainable_args(), (std::vector<std::size_t>{1, 2, 3, 4, 5, 6}));

  const ModelSpec& eb = catalog().get("embedding_bag_mlp");
  EXPECT_EQ(eb.args[1].kind, ArgKind::Index);
  EXPECT_EQ(eb.config("tiny").args[1].bound, 10);
  EXPECT_EQ(eb.config("tiny").args[2].bound, 4);  // b*p0
}

TEST(SizeExpr, Evaluates) {
  const std::map<std::string, std::int64_t> s{{"b", 2}, {"s", 3}, {"h", 5}, {"hw", 8}};
  EXPECT_EQ(eval_size_expr("b", s), 2);
  EXPECT_EQ(eval_size_expr("b*s", s), 6);
  EXPECT_EQ(eval_size_expr("h*4", s), 20);
  EXPECT_EQ(eval_size_expr("h + 9", s), 14);
  EXPECT_EQ(eval_size_expr("(b+s)*h - 1", s), 24);
  EXPECT_EQ(eval_size_expr("hw/2", s), 4);
  EXPECT_EQ(eval_size_expr("12", s), 12);
  EXPECT_THROW(eval_size_expr("h/2", s), std::invalid_argument);  // not exact
  EXPECT_THROW(eval_size_expr("b*q", s), std::invalid_argument);  // unknown name
  EXPECT_THROW(eval_size_expr("b*", s), std::invalid_argument);
  EXPECT_THROW(eval_size_expr("(b", s), std::invalid_argument);
  EXPECT_THROW(eval_size_expr("b/0", s), std::invalid_argument);
  EXPECT_THROW(eval_size_expr("b s", s), std::invalid_argument);
}

// A models folder in a temporary directory: models.yaml and a one-file zoo.
class BadCatalog : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / fmt::format("gauntlet_models_test_{}", ::getpid());
    fs::create_directories(dir_ / "zoo");
    std::ofstream(dir_ / "zoo" / "m.py") << "# m: a test model.\n#\n# ops: aten::linear\n#\n# inputs:\n"
                                            "#   x  [b, d]\n#   w  [h, d]\n\n\n"
                                            "def forward(x: Tensor, w: Tensor) -> Tensor:\n"
                                            "    return torch.linear(x, w)\n";
  }
  void TearDown() override { fs::remove_all(dir_); }

  // The error loading `yaml`; fails the test if it loads.
  std::string error(const std::string& yaml) {
    std::ofstream(dir_ / "models.yaml") << yaml;
    try {
      load_model_catalog(dir_.string());
    } catch (const ModelError& e) {
      return e.what();
    }
    ADD_FAILURE() << "loaded:\n" << yaml;
    return "";
  }

  static std::string good(const std::string& replace_from = "", const std::string& replace_to = "") {
    std::string y =
        "models:\n"                                                    // 1
        "  - name: m\n"                                                // 2
        "    file: zoo/m.py\n"                                         // 3
        "    dtypes: [f32, f64]\n"                                     // 4
        "    trainable: true\n"                                        // 5
        "    sizes:\n"                                                 // 6
        "      tiny: {b: 1, d: 2, h: 3}\n"                             // 7
        "      small: {b: 2, d: 2, h: 3}\n"                            // 8
        "      medium: {b: 3, d: 2, h: 3}\n"                           // 9
        "      large: {b: 4, d: 2, h: 3}\n"                            // 10
        "    args:\n"                                                  // 11
        "      - {name: x, kind: input, shape: [b, d]}\n"              // 12
        "      - {name: w, kind: weight, shape: [h, d], fan_in: d}\n"  // 13
        "    outputs:\n"                                               // 14
        "      - {name: y, shape: [b, h]}\n";                          // 15
    if (!replace_from.empty()) {
      auto pos = y.find(replace_from);
      EXPECT_NE(pos, std::string::npos) << replace_from;
      if (pos != std::string::npos) y.replace(pos, replace_from.size(), replace_to);
    }
    return y;
  }

  // The error names models.yaml and the line, mentions `needle`, and is one line.
  void expect_error(const std::string& yaml, int line, const std::string& needle) {
    const std::string e = error(yaml);
    SCOPED_TRACE(e);
    EXPECT_NE(e.find(fmt::format("models.yaml:{}: ", line)), std::string::npos);
    EXPECT_NE(e.find(needle), std::string::npos);
    EXPECT_EQ(e.find('\n'), std::string::npos);
  }

  fs::path dir_;
};

TEST_F(BadCatalog, TheGoodOneLoads) {
  std::ofstream(dir_ / "models.yaml") << good();
  const ModelCatalog c = load_model_catalog(dir_.string());
  ASSERT_EQ(c.models.size(), 1u);
  EXPECT_EQ(c.models[0].ops, std::vector<std::string>{"aten::linear"});
  EXPECT_EQ(c.models[0].config("large").outputs.at(0), (std::vector<std::int64_t>{4, 3}));
}

TEST_F(BadCatalog, OneLineErrorsWithFileAndLine) {
  expect_error("models:\n  - name: m\n    file: [zoo/m.py\n", 4, "malformed YAML");
  expect_error(good("    trainable: true\n", "    trainable: true\n    colour: red\n"), 6, "unknown field 'colour'");
  expect_error(good("shape: [b, d]}", "shape: [b, q]}"), 12, "no size named 'q'");
  expect_error(good("shape: [b, h]}", "shape: [b, h/2]}"), 15, "not a multiple");
  expect_error(good("kind: input", "kind: tensor"), 12, "field 'kind'");
  expect_error(good("file: zoo/m.py", "file: zoo/nope.py"), 3, "field 'file'");
  expect_error(good("[f32, f64]", "[f32, f8]"), 4, "'f8'");
  expect_error(good("      large: {b: 4, d: 2, h: 3}\n", ""), 6, "no config 'large'");
  expect_error(good("    dtypes: [f32, f64]\n", "    dtypes: []\n"), 4, "'dtypes' is empty");
  expect_error(good("      small: {b: 2, d: 2, h: 3}\n", "      small: {b: 2, d: 0, h: 3}\n"), 8, "positive integer");
  expect_error(good(", fan_in: d}", "}"), 13, "needs 'fan_in' or 'range'");
  expect_error(good("{name: w, kind: weight", "{name: x, kind: weight"), 13, "appears twice");
  expect_error(good("{name: w, kind: weight", "{name: v, kind: weight"), 11, "'# inputs:' list");
  expect_error(good("    trainable: true\n", "    trainable: maybe\n"), 5, "true or false");
  expect_error(
      good("      - {name: x, kind: input, shape: [b, d]}\n", "      - {name: x, kind: index, shape: [b, d]}\n"), 12,
      "missing field 'bound'");
}

// ---- inputs ----

class ModelTest : public ::testing::TestWithParam<std::string> {
 protected:
  const ModelSpec& spec() const { return catalog().get(GetParam()); }
};

TEST_P(ModelTest, InputsAreDeterministicAndInDomain) {
  const ModelSpec& m = spec();
  for (const char* config : {"tiny", "small"}) {
    SCOPED_TRACE(config);
    const ModelConfig& c = m.config(config);
    auto a = make_model_inputs(m, config, at::kFloat, kSeed);
    auto b = make_model_inputs(m, config, at::kFloat, kSeed);
    auto other = make_model_inputs(m, config, at::kFloat, kSeed + 1);
    ASSERT_EQ(a.size(), m.args.size());
    bool any_differs = false;
    for (std::size_t i = 0; i < a.size(); ++i) {
      const ModelArg& arg = m.args[i];
      SCOPED_TRACE(arg.name);
      EXPECT_TRUE(a[i].is_contiguous());
      EXPECT_EQ(sizes_of(a[i]), c.args[i].shape);
      EXPECT_TRUE(a[i].equal(b[i])) << "same seed, different values";
      if (arg.floating() || arg.kind == ArgKind::Index) any_differs = any_differs || !a[i].equal(other[i]);
      if (arg.floating()) {
        EXPECT_EQ(a[i].scalar_type(), at::kFloat);
        EXPECT_GE(a[i].min().item<double>(), c.args[i].lo - 1e-6);
        EXPECT_LE(a[i].max().item<double>(), c.args[i].hi + 1e-6);
        EXPECT_GT(a[i].abs().sum().item<double>(), 0.0);
      } else {
        EXPECT_EQ(a[i].scalar_type(), at::kLong);
      }
      if (arg.kind == ArgKind::Index) {
        EXPECT_GE(a[i].min().item<std::int64_t>(), 0);
        EXPECT_LT(a[i].max().item<std::int64_t>(), c.args[i].bound);
      }
      if (arg.kind == ArgKind::Offsets) {
        EXPECT_EQ(a[i][0].item<std::int64_t>(), 0);
        EXPECT_TRUE((a[i].diff() >= 0).all().item<bool>()) << "offsets not sorted";
        EXPECT_LE(a[i].max().item<std::int64_t>(), c.args[i].bound);
      }
      if (arg.kind == ArgKind::Positions) {
        EXPECT_TRUE(a[i].equal(at::arange(c.args[i].shape.back(), at::kLong).expand_as(a[i])));
      }
    }
    EXPECT_TRUE(any_differs) << "a different seed gave the same inputs";
    // f64 inputs are the unrounded draws; f32 ones are them rounded once.
    auto d = make_model_inputs(m, config, at::kDouble, kSeed);
    auto h = make_model_inputs(m, config, at::kBFloat16, kSeed);
    for (std::size_t i = 0; i < a.size(); ++i) {
      if (!m.args[i].floating()) continue;
      EXPECT_TRUE(d[i].to(at::kFloat).equal(a[i])) << m.args[i].name;
      EXPECT_TRUE(d[i].to(at::kBFloat16).equal(h[i])) << m.args[i].name;
    }
  }
}

// The values depend on the seed alone: pinned here (from an independent splitmix64) so a change
// in the generator, which would change every case's inputs, shows as a test failure.
TEST(ModelInputs, PinnedValues) {
  at::Tensor u = splitmix_uniform({3}, at::kDouble, 42);
  EXPECT_DOUBLE_EQ(u[0].item<double>(), 0.4831297575436466);
  EXPECT_DOUBLE_EQ(u[1].item<double>(), -0.6801792142461598);
  EXPECT_DOUBLE_EQ(u[2].item<double>(), -0.4427977394897227);
  at::Tensor f = splitmix_uniform({3}, at::kFloat, 42);
  EXPECT_EQ(f[1].item<float>(), static_cast<float>(-0.6801792142461598));
}

// ---- compile and run ----

TEST_P(ModelTest, CompilesWithTheCatalogsArguments) {
  const ModelSpec& m = spec();
  auto cu = compile_model(m);
  auto g = model_graph(*cu, m);
  ASSERT_EQ(g->inputs().size(), m.args.size());
  for (std::size_t i = 0; i < m.args.size(); ++i) EXPECT_EQ(g->inputs()[i]->debugNameBase(), m.args[i].name);
}

// The header's "# ops:" list is exactly the aten ops of the graph that produce tensors, and every
// such node points at a line of the file's code (below the header).
TEST_P(ModelTest, HeaderNamesTheGraphsOps) {
  const ModelSpec& m = spec();
  auto cu = compile_model(m);
  auto g = model_graph(*cu, m);
  std::set<std::string> in_graph;
  std::vector<std::string> lines;
  {
    std::istringstream s(m.source);
    for (std::string l; std::getline(s, l);) lines.push_back(l);
  }
  std::size_t first_code = 0;
  while (first_code < lines.size() && lines[first_code].rfind('#', 0) == 0) ++first_code;
  std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* b) {
    for (torch::jit::Node* n : b->nodes()) {
      for (torch::jit::Block* sub : n->blocks()) walk(sub);
      // List plumbing (append to a list of tensors) is no tensor op.
      if (!n->kind().is_aten() || n->kind() == c10::Symbol::fromQualString("aten::append")) continue;
      bool tensor_out = false;
      for (const torch::jit::Value* v : n->outputs()) {
        tensor_out =
            tensor_out || v->type()->cast<c10::TensorType>() || v->type()->isSubtypeOf(*c10::ListType::ofTensors());
      }
      if (!tensor_out) continue;
      in_graph.insert(n->kind().toQualString());
      const int line = source_line(*n);
      EXPECT_GT(line, static_cast<int>(first_code)) << n->kind().toQualString() << " has no line in the code";
      EXPECT_LE(line, static_cast<int>(lines.size()));
    }
  };
  walk(g->block());
  const std::set<std::string> claimed(m.ops.begin(), m.ops.end());
  std::vector<std::string> unclaimed, absent;
  std::set_difference(in_graph.begin(), in_graph.end(), claimed.begin(), claimed.end(), std::back_inserter(unclaimed));
  std::set_difference(claimed.begin(), claimed.end(), in_graph.begin(), in_graph.end(), std::back_inserter(absent));
  EXPECT_TRUE(unclaimed.empty()) << m.path << " does not list " << fmt::format("{}", fmt::join(unclaimed, ", "));
  EXPECT_TRUE(absent.empty()) << m.path
                              << " lists ops not in its graph: " << fmt::format("{}", fmt::join(absent, ", "));
}

TEST_P(ModelTest, ForwardTinyAndSmallF32) {
  const ModelSpec& m = spec();
  auto cu = compile_model(m);
  for (const char* config : {"tiny", "small"}) {
    SCOPED_TRACE(config);
    auto out = run_model(*cu, m, make_model_inputs(m, config, at::kFloat, kSeed));
    const ModelConfig& c = m.config(config);
    ASSERT_EQ(out.size(), c.outputs.size());
    for (std::size_t i = 0; i < out.size(); ++i) {
      SCOPED_TRACE(m.outputs[i].name);
      EXPECT_EQ(out[i].scalar_type(), at::kFloat);
      EXPECT_EQ(sizes_of(out[i]), c.outputs[i]);
      EXPECT_TRUE(out[i].isfinite().all().item<bool>());
      EXPECT_GT(out[i].abs().max().item<double>(), 0.0) << "all zeros";
    }
  }
}

TEST_P(ModelTest, F32AgreesWithF64) {
  const ModelSpec& m = spec();
  auto cu = compile_model(m);
  auto in32 = make_model_inputs(m, "tiny", at::kFloat, kSeed);
  auto out32 = run_model(*cu, m, in32);
  auto out64 = run_model(*cu, m, to_dtype(in32, at::kDouble));
  ASSERT_EQ(out32.size(), out64.size());
  for (std::size_t i = 0; i < out32.size(); ++i) {
    EXPECT_EQ(out64[i].scalar_type(), at::kDouble);
    EXPECT_EQ(close(out32[i], out64[i], 1e-3, 1e-4), "") << m.outputs[i].name;
  }
}

TEST_P(ModelTest, OpByOpAndDefaultExecutorsAgree) {
  const ModelSpec& m = spec();
  auto in = make_model_inputs(m, "tiny", at::kFloat, kSeed);
  const ExecutorSettings before = ExecutorSettings::current();
  std::vector<at::Tensor> ref;
  {
    ScopedExecutor guard(ExecutorSettings::op_by_op());
    auto cu = compile_model(m);  // a fresh unit: its executor takes the settings of its first call
    ref = run_model(*cu, m, in);
  }
  {
    ScopedExecutor guard(ExecutorSettings{});
    auto cu = compile_model(m);
    // The profiling executor profiles the first run(s), then runs an optimised plan.
    for (int run = 0; run < 3; ++run) {
      auto out = run_model(*cu, m, in);
      ASSERT_EQ(out.size(), ref.size());
      for (std::size_t i = 0; i < out.size(); ++i) {
        EXPECT_EQ(close(out[i], ref[i], 1e-5, 1e-6), "") << "run " << run << ", " << m.outputs[i].name;
      }
    }
  }
  const ExecutorSettings after = ExecutorSettings::current();
  EXPECT_EQ(after.profiling, before.profiling);
  EXPECT_EQ(after.optimize, before.optimize);
}

class TrainableModelTest : public ModelTest {};

TEST_P(TrainableModelTest, BackwardGivesFiniteGradientsThatAgreeWithF64) {
  const ModelSpec& m = spec();
  auto cu = compile_model(m);
  auto in32 = make_model_inputs(m, "tiny", at::kFloat, kSeed);
  const auto trainable = m.trainable_args();
  // Twice in f32: the second call runs the executor's optimised plan (with autodiff).
  Grads g32 = forward_backward(*cu, m, in32);
  Grads again = forward_backward(*cu, m, in32);
  Grads g64 = forward_backward(*cu, m, to_dtype(in32, at::kDouble));
  ASSERT_EQ(g32.grads.size(), trainable.size());
  for (std::size_t k = 0; k < trainable.size(); ++k) {
    const std::string& name = m.args[trainable[k]].name;
    SCOPED_TRACE(name);
    ASSERT_TRUE(g32.grads[k].defined());
    EXPECT_EQ(sizes_of(g32.grads[k]), sizes_of(in32[trainable[k]]));
    EXPECT_TRUE(g32.grads[k].isfinite().all().item<bool>());
    EXPECT_GT(g32.grads[k].abs().max().item<double>(), 0.0) << "all-zero gradient";
    EXPECT_EQ(close(again.grads[k], g32.grads[k], 1e-5, 1e-6), "") << "second run";
    EXPECT_EQ(close(g32.grads[k], g64.grads[k], 1e-3, 1e-4), "") << "f32 vs f64";
  }
  // Backward at the next size up runs too.
  Grads small = forward_backward(*cu, m, make_model_inputs(m, "small", at::kFloat, kSeed));
  for (std::size_t k = 0; k < trainable.size(); ++k) {
    EXPECT_TRUE(small.grads[k].isfinite().all().item<bool>()) << "small, " << m.args[trainable[k]].name;
    EXPECT_GT(small.grads[k].abs().max().item<double>(), 0.0) << "small, " << m.args[trainable[k]].name;
  }
}

// bf16 and f16 on the CPU: libtorch 1.13 lacks some CPU kernels in half precision (most in f16);
// those skip, naming the kernel. What runs must be finite and near the f64 result of the same
// (rounded) inputs.
void check_low_precision(const ModelSpec& m, at::ScalarType dt, double tol) {
  if (!m.supports(dt)) GTEST_SKIP() << m.name << " does not list " << model_dtype_name(dt);
  auto cu = compile_model(m);
  auto in = make_model_inputs(m, "tiny", dt, kSeed);
  std::vector<at::Tensor> out;
  try {
    out = run_model(*cu, m, in);
  } catch (const std::exception& e) {
    // The interpreter rethrows a kernel's c10::Error as a std::runtime_error whose last line
    // is the kernel's message.
    std::string msg = e.what();
    const bool unsupported = msg.find("not implemented for '") != std::string::npos ||
                             msg.find("to have one of the following scalar types") != std::string::npos;
    if (!unsupported) throw;
    while (!msg.empty() && msg.back() == '\n') msg.pop_back();
    GTEST_SKIP() << "no CPU kernel: " << msg.substr(msg.rfind('\n') + 1);
  }
  auto ref = run_model(*cu, m, to_dtype(in, at::kDouble));
  ASSERT_EQ(out.size(), ref.size());
  for (std::size_t i = 0; i < out.size(); ++i) {
    EXPECT_EQ(out[i].scalar_type(), dt);
    EXPECT_TRUE(out[i].isfinite().all().item<bool>()) << m.outputs[i].name;
    EXPECT_EQ(close(out[i], ref[i], tol, tol), "") << m.outputs[i].name;
  }
}

TEST_P(ModelTest, Bf16OnCpuWhereImplemented) { check_low_precision(spec(), at::kBFloat16, 5e-2); }
TEST_P(ModelTest, F16OnCpuWhereImplemented) { check_low_precision(spec(), at::kHalf, 1e-2); }

// ---- what the models compute ----

// The explicit gate math agrees with libtorch's own GRU kernel.
TEST(ModelSemantics, GruMatchesAtenGru) {
  const ModelSpec& m = catalog().get("gru");
  auto cu = compile_model(m);
  for (const char* config : {"tiny", "small"}) {
    SCOPED_TRACE(config);
    auto in = make_model_inputs(m, config, at::kDouble, kSeed);  // x, h0, w_ih, b_ih, w_hh, b_hh
    auto out = run_model(*cu, m, in);
    auto ref = at::gru(in[0], in[1].unsqueeze(0), {in[2], in[4], in[3], in[5]}, true, 1, 0.0, false, false, false);
    EXPECT_EQ(close(out.at(0), std::get<0>(ref), 1e-10, 1e-12), "");
    EXPECT_EQ(close(out.at(1), std::get<1>(ref).squeeze(0), 1e-10, 1e-12), "");
  }
}

// A token's output depends on no later token; and every output depends on the first token.
TEST(ModelSemantics, LlamaBlockIsCausal) {
  const ModelSpec& m = catalog().get("llama_block");
  auto cu = compile_model(m);
  auto in = make_model_inputs(m, "small", at::kDouble, kSeed);
  auto y = run_model(*cu, m, in).at(0);
  const std::int64_t s = in[0].size(1);
  auto later = in;
  later[0] = in[0].clone();
  later[0].select(1, s - 1).add_(0.5);
  auto y_later = run_model(*cu, m, later).at(0);
  EXPECT_TRUE(y_later.narrow(1, 0, s - 1).equal(y.narrow(1, 0, s - 1)));
  EXPECT_FALSE(y_later.select(1, s - 1).equal(y.select(1, s - 1)));
  auto first = in;
  first[0] = in[0].clone();
  first[0].select(1, 0).add_(0.5);
  auto y_first = run_model(*cu, m, first).at(0);
  EXPECT_GT((y_first - y).abs().amax({0, 2}).min().item<double>(), 0.0);
}

// The top-2 routing: only two experts' weights get a gradient from one token.
TEST(ModelSemantics, MoeRoutesEachTokenToTwoExperts) {
  const ModelSpec& m = catalog().get("moe");
  auto cu = compile_model(m);
  auto in = make_model_inputs(m, "tiny", at::kDouble, kSeed);  // x, wr, w1, b1, w2, b2
  in[0] = in[0].narrow(1, 0, 1).contiguous();                  // one token
  in[3] = in[3].detach().requires_grad_(true);
  auto y = run_model(*cu, m, in).at(0);
  auto g = torch::autograd::grad({y.sum()}, {in[3]}).at(0);  // b1: [ne, f]
  EXPECT_EQ((g.abs().sum(1) > 0).sum().item<std::int64_t>(), 2);
}

// Graph nodes name the line of the call that made them, inlined helpers included.
TEST(ModelSource, NodesPointAtTheirCalls) {
  for (const auto& [model, op, text] : std::vector<std::tuple<std::string, std::string, std::string>>{
           {"mlp", "aten::linear", "torch.linear("},
           {"gru", "aten::sigmoid", "torch.sigmoid("},
           {"llama_block", "aten::rsqrt", "torch.rsqrt("},  // inside the rms_norm helper
           {"llama_block", "aten::repeat_interleave", ".repeat_interleave("}}) {
    SCOPED_TRACE(model + " " + op);
    const ModelSpec& m = catalog().get(model);
    auto cu = compile_model(m);
    std::vector<std::string> lines{""};
    std::istringstream src(m.source);
    for (std::string l; std::getline(src, l);) lines.push_back(l);
    int seen = 0;
    std::function<void(torch::jit::Block*)> walk = [&](torch::jit::Block* b) {
      for (torch::jit::Node* n : b->nodes()) {
        for (torch::jit::Block* sub : n->blocks()) walk(sub);
        if (n->kind().toQualString() != op) continue;
        ++seen;
        const int line = source_line(*n);
        ASSERT_GT(line, 0);
        ASSERT_LT(line, static_cast<int>(lines.size()));
        EXPECT_NE(lines[static_cast<std::size_t>(line)].find(text), std::string::npos) << "line " << line;
      }
    };
    walk(model_graph(*cu, m)->block());
    EXPECT_GT(seen, 0);
  }
}

TEST_F(BadCatalog, CompileErrorsNameTheFileAndLine) {
  std::ofstream(dir_ / "models.yaml") << good();
  std::ofstream(dir_ / "zoo" / "m.py", std::ios::app) << "\n\ndef broken(x: Tensor) -> Tensor:\n"
                                                         "    return torch.no_such_op(x)\n";
  const ModelCatalog c = load_model_catalog(dir_.string());
  try {
    compile_model(c.models.at(0));
    ADD_FAILURE() << "compiled";
  } catch (const ModelError& e) {
    const std::string msg = e.what();
    EXPECT_EQ(msg.rfind(c.models[0].path + ": TorchScript compile failed: ", 0), 0u) << msg;
    EXPECT_NE(msg.find("File \"" + c.models[0].path + "\", line 15"), std::string::npos) << msg;
    EXPECT_NE(msg.find("no_such_op"), std::string::npos) << msg;
  }
}

// Not a check: compile, input and forward times per model, tiny and large, f32 on the CPU, with
// 1 and 2 threads. Run with --gtest_also_run_disabled_tests --gtest_filter='*Timing*'.
TEST(ModelTiming, DISABLED_ForwardF32) {
  const int threads_before = at::get_num_threads();
  for (int threads : {1, 2}) {
    at::set_num_threads(threads);
    for (const auto& m : catalog().models) {
      auto t0 = std::chrono::steady_clock::now();
      auto cu = compile_model(m);
      const double compile_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      for (const char* config : {"tiny", "large"}) {
        t0 = std::chrono::steady_clock::now();
        auto in = make_model_inputs(m, config, at::kFloat, kSeed);
        const double inputs_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        torch::NoGradGuard no_grad;
        t0 = std::chrono::steady_clock::now();
        run_model(*cu, m, in);  // the profiling run
        const double first_ms =
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
        run_model(*cu, m, in);
        std::vector<double> ms;
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
        while (ms.size() < 5 || (ms.size() < 100 && std::chrono::steady_clock::now() < deadline)) {
          t0 = std::chrono::steady_clock::now();
          run_model(*cu, m, in);
          ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
        }
        std::sort(ms.begin(), ms.end());
        std::printf(
            "%-20s %-6s threads %d  forward median %8.3f ms (min %8.3f, %3zu reps)  first %8.3f ms "
            " "
            "inputs %7.1f ms  compile %5.1f ms  args %.2f M elements\n",
            m.name.c_str(), config, threads, ms[ms.size() / 2], ms[0], ms.size(), first_ms, inputs_ms, compile_ms,
            static_cast<double>(m.config(config).numel()) / 1e6);
      }
    }
  }
  at::set_num_threads(threads_before);
}

INSTANTIATE_TEST_SUITE_P(Zoo, ModelTest, ::testing::ValuesIn(model_names()),
                         [](const auto& info) { return info.param; });
INSTANTIATE_TEST_SUITE_P(Zoo, TrainableModelTest, ::testing::ValuesIn(trainable_model_names()),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace gauntlet
