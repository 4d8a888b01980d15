// The embedded interpreter (Note [Embedded interpreter]): started once, torch imported from the
// environment this build links, tensors passed and returned without copies, torch.compile run on
// them, dynamo's own records read back, Python's errors turned into one line. Its own program:
// a process that started Python leaves with _exit (never finalised).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <torch/csrc/jit/frontend/tracer.h>
#include <unistd.h>

#include <functional>
#include <nlohmann/json.hpp>

#include "gauntlet/base/error.h"
#include "gauntlet/python/compiled.h"
#include "gauntlet/python/interpreter.h"

namespace gauntlet::python {
namespace {

TEST(EmbeddedPython, ImportsTheTorchThisBuildLinks) {
  start();
  EXPECT_TRUE(started());
  const std::string version = torch_version();
  EXPECT_EQ(version.rfind("2.", 0), 0u) << version;
}

TEST(EmbeddedPython, TorchCompileRunsOnTheSameTensors) {
  const at::Tensor x = at::linspace(-2, 2, 7);
  const std::vector<at::Tensor> out = call("gauntlet_compile", "selftest_compiled_sin", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(at::allclose(out[0], at::sin(x) + 1));
  const auto stats = nlohmann::json::parse(call_json("gauntlet_compile", "last_stats"));
  EXPECT_EQ(stats["unique_graphs"], 1) << stats.dump();
  EXPECT_EQ(stats["graph_breaks"], 0) << stats.dump();
}

TEST(EmbeddedPython, AGraphBreakIsReadFromDynamosOwnRecords) {
  const at::Tensor x = at::ones({3});
  const std::vector<at::Tensor> out = call("gauntlet_compile", "selftest_graph_break", {x});
  ASSERT_EQ(out.size(), 1u);
  EXPECT_TRUE(at::equal(out[0], x * 2 + 1));
  const auto stats = nlohmann::json::parse(call_json("gauntlet_compile", "last_stats"));
  EXPECT_GE(stats["graph_breaks"].get<int>(), 1) << stats.dump();
  EXPECT_FALSE(stats["break_reasons"].empty()) << stats.dump();
}

TEST(EmbeddedPython, PythonErrorsBecomeOneLineErrors) {
  try {
    call("gauntlet_compile", "fail", {}, R"({"message": "planted"})");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_NE(what.find("gauntlet_compile.fail raised ValueError: planted (at "), std::string::npos) << what;
    EXPECT_NE(what.find("gauntlet_compile.py:"), std::string::npos) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_THROW(call("no_such_module_here", "f", {}), Error);
  EXPECT_THROW(call("gauntlet_compile", "no_such_function", {}), Error);
  EXPECT_THROW(call("gauntlet_compile", "last_stats", {}, "[1]"), Error);
}

// A traced call, as an op case's compile path traces it.
std::shared_ptr<torch::jit::Graph> trace(const std::vector<at::Tensor>& inputs,
                                         const std::function<std::vector<at::Tensor>(std::vector<at::Tensor>)>& fn) {
  torch::jit::Stack stack(inputs.begin(), inputs.end());
  auto traced = torch::jit::tracer::trace(
      std::move(stack),
      [&](torch::jit::Stack in) {
        std::vector<at::Tensor> ts;
        for (const c10::IValue& v : in) ts.push_back(v.toTensor());
        std::vector<at::Tensor> outs = fn(ts);
        return torch::jit::Stack(outs.begin(), outs.end());
      },
      [](const at::Tensor&) { return std::string(); }, /*strict=*/false, /*force_outplace=*/false);
  return traced.first->graph;
}

std::vector<at::Tensor> run(CompiledGraph& program, const std::vector<at::Tensor>& inputs) {
  std::vector<at::Tensor> out;
  for (const c10::IValue& v : program.run(std::vector<c10::IValue>(inputs.begin(), inputs.end())))
    out.push_back(v.toTensor());
  return out;
}

TEST(CompilePath, ATracedGraphIsWrittenAsCallsOfTorchOps) {
  const at::Tensor a = at::randn({3, 4}), b = at::randn({3, 4});
  auto graph = trace({a, b}, [](std::vector<at::Tensor> t) {
    return std::vector<at::Tensor>{at::add(t[0], t[1], 2.5).to(at::kDouble), std::get<0>(at::max(t[0], 1))};
  });
  const Program p = program_from_graph(*graph, "<traced op>");
  EXPECT_NE(p.source.find("torch.ops.aten.add.Tensor("), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("alpha=2.5"), std::string::npos) << p.source;
  EXPECT_NE(p.source.find("torch.float64"), std::string::npos) << p.source;  // a dtype, not the int 7
  EXPECT_NE(p.source.find("torch.ops.aten.max.dim("), std::string::npos) << p.source;
  auto compiled = compile_with_dynamo(p, DynamoBackend{"eager", "", "{}"});
  const std::vector<at::Tensor> out = run(*compiled, {a, b});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_TRUE(at::allclose(out[0], at::add(a, b, 2.5).to(at::kDouble)));
  EXPECT_EQ(out[0].scalar_type(), at::kDouble);
  EXPECT_TRUE(at::equal(out[1], std::get<0>(at::max(a, 1))));
  const CompileStats st = compiled->stats();
  EXPECT_EQ(st.regions, 1);
  EXPECT_EQ(st.graph_breaks, 0);
  EXPECT_GT(st.compile_ms, 0);
}

TEST(CompilePath, InductorCompilesATracedOp) {
  const at::Tensor x = at::randn({5, 7});
  auto graph = trace({x}, [](std::vector<at::Tensor> t) { return std::vector<at::Tensor>{at::gelu(t[0])}; });
  auto compiled = compile_with_dynamo(program_from_graph(*graph, "<traced op>"), DynamoBackend{});
  EXPECT_TRUE(at::allclose(run(*compiled, {x})[0], at::gelu(x), 1e-5, 1e-6));
  const CompileStats st = compiled->stats();
  EXPECT_EQ(st.regions, 1);
  EXPECT_GT(st.backend_ms, 0);
}

TEST(CompilePath, GraphBreaksRecompilesAndTheLimitAreDynamosOwnRecords) {
  Program p;
  p.filename = "/zoo/branchy.py";
  p.function = "forward";
  p.source =
      "def forward(x: Tensor) -> Tensor:\n"
      "    y = x * 2\n"
      "    if y.sum().item() > 0:\n"
      "        return y + 1\n"
      "    return y - 1\n";
  auto compiled = compile_with_dynamo(p, DynamoBackend{"eager", "", "{}"});
  EXPECT_TRUE(at::equal(run(*compiled, {at::ones({3})})[0], at::full({3}, 3.0)));
  CompileStats st = compiled->stats();
  EXPECT_EQ(st.graph_breaks, 1);
  ASSERT_EQ(st.breaks.size(), 1u);
  EXPECT_NE(st.breaks[0].find("Tensor.item()"), std::string::npos) << st.breaks[0];
  EXPECT_NE(st.breaks[0].find("(/zoo/branchy.py:3)"), std::string::npos) << st.breaks[0];

  // A size read as a Python number: every new size is a recompile, up to the limit (8).
  p.source = "def forward(x: Tensor) -> Tensor:\n    return x * x.shape[0]\n";
  auto sized = compile_with_dynamo(p, DynamoBackend{"eager", "", "{}"});
  run(*sized, {at::ones({2})});
  run(*sized, {at::ones({3})});
  st = sized->stats();
  EXPECT_EQ(st.recompiles, 1);
  ASSERT_EQ(st.recompile_reasons.size(), 1u);
  EXPECT_NE(st.recompile_reasons[0].find("size mismatch at index 0. expected 2, actual 3"), std::string::npos)
      << st.recompile_reasons[0];
  EXPECT_TRUE(st.recompile_limit.empty());
}

TEST(CompilePath, ABackendThatFailsToCompileIsAnErrorInOneLine) {
  Program p;
  p.filename = "<traced op>";
  p.function = "program";
  p.source = "def program(v0):\n    return (torch.relu(v0),)\n";
  // one of torch's own test backends: raises while compiling any graph with a relu
  auto compiled = compile_with_dynamo(p, DynamoBackend{"relu_compile_error_TESTING_ONLY", "", "{}"});
  try {
    run(*compiled, {at::ones({2})});
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.rfind("torch.compile (backend relu_compile_error_TESTING_ONLY): ", 0), 0u) << what;
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
  }
  EXPECT_THROW(compile_with_dynamo(p, DynamoBackend{"no_such_backend", "", "{}"}), Error);
}

}  // namespace
}  // namespace gauntlet::python

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(rc);  // never finalise an interpreter that imported torch (Note [Embedded interpreter])
}
