// The embedded interpreter (Note [Embedded interpreter]): started once, torch imported from the
// environment this build links, tensors passed and returned without copies, torch.compile run on
// them, dynamo's own records read back, Python's errors turned into one line. Its own program:
// a process that started Python leaves with _exit (never finalised).
#include <ATen/ATen.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "gauntlet/base/error.h"
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

}  // namespace
}  // namespace gauntlet::python

int main(int argc, char** argv) {
  ::testing::InitGoogleTest(&argc, argv);
  const int rc = RUN_ALL_TESTS();
  std::fflush(stdout);
  std::fflush(stderr);
  ::_exit(rc);  // never finalise an interpreter that imported torch (Note [Embedded interpreter])
}
