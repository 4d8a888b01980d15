// run_case on the built-in cpu backend: classification, expectations, tolerances, determinism.
#include "gauntlet/core/cases/runner.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <thread>

#include "gauntlet/core/cases/compile_path.h"
#include "gauntlet/core/cases/timing.h"
#include "gauntlet/plugin/torch_compat.h"

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

class RunnerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = make_backend("cpu");
    dir_ = fs::temp_directory_path() / ("gauntlet_runner_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_);
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::string write(const std::string& name, const std::string& text) {
    std::string p = (dir_ / name).string();
    std::ofstream(p) << text;
    return p;
  }
  Outcome run(const std::string& key, const RunnerConfig& cfg = {}, CaseDetail* detail = nullptr) {
    return run_case(CaseKey::parse(key), *backend_, cfg, detail);
  }
  std::unique_ptr<Backend> backend_;
  fs::path dir_;
};

TEST_F(RunnerTest, CpuBackend) {
  EXPECT_EQ(backend_->name(), "cpu");
  EXPECT_TRUE(backend_->device().is_cpu());
  EXPECT_THROW(make_backend("tpu"), std::invalid_argument);
  EXPECT_THROW(make_backend("plugin:/no/such/lib.so"), std::invalid_argument);
}

// Note [Backend registry]: a backend registered by name is made by that name, runs cases, and is
// listed (with its description) wherever the names are: help texts, the unknown-name error.
TEST_F(RunnerTest, ABackendRegisteredByNameIsMadeRunAndListed) {
  struct Reference final : Backend {
    std::string name() const override { return "reference-test"; }
    std::string version() const override { return "1.0"; }
    c10::Device device() const override { return c10::Device(c10::kCPU); }
  };
  if (std::none_of(registered_backends().begin(), registered_backends().end(),
                   [](const BackendEntry& e) { return e.name == "reference-test"; })) {
    register_backend({"reference-test", "", "the CPU under another name, for this test",
                      [](const std::string&, const std::string&) { return std::make_unique<Reference>(); }});
  }
  EXPECT_THROW(register_backend({"reference-test", "", "again",
                                 [](const std::string&, const std::string&) { return std::make_unique<Reference>(); }}),
               std::invalid_argument);
  EXPECT_THROW(register_backend({"nameless", "", "no factory", nullptr}), std::invalid_argument);
  const auto& entries = registered_backends();
  ASSERT_GE(entries.size(), 4u);
  EXPECT_EQ(entries[0].name, "cpu");  // the built-in ones first
  EXPECT_EQ(entries.back().usage, "reference-test");
  EXPECT_EQ(backend_usages(), "cpu | sim | plugin:<path.so> | reference-test");

  std::unique_ptr<Backend> b = make_backend("reference-test");
  EXPECT_EQ(b->name(), "reference-test");
  EXPECT_EQ(b->profile(), "reference-test");
  const Outcome o = run_case(CaseKey::parse("op/exp/f32/4x4/contig/eager"), *b, RunnerConfig{});
  EXPECT_EQ(o.status, Status::Pass) << o.error;

  try {
    make_backend("tpu");
    FAIL() << "no error for an unknown backend";
  } catch (const std::invalid_argument& e) {
    EXPECT_STREQ(e.what(),
                 "unknown backend 'tpu' (did you mean cpu?) (known: cpu, sim, plugin:<path.so>, reference-test)");
  }
  EXPECT_THROW(make_backend("plugin:"), std::invalid_argument);
}

TEST_F(RunnerTest, Pass) {
  CaseDetail detail;
  Outcome o = run("op/add/f32/8x8,8x8/contig/eager", {}, &detail);
  EXPECT_EQ(o.status, Status::Pass) << o.error;
  EXPECT_EQ(o.key, "op/add/f32/8x8,8x8/contig/eager");
  EXPECT_EQ(o.metrics.numel, 64);
  EXPECT_EQ(o.metrics.mismatches, 0);
  EXPECT_TRUE(o.metrics.nan_inf_ok);
  EXPECT_EQ(o.rtol, 1.3e-6);
  EXPECT_EQ(o.atol, 1e-5);
  EXPECT_EQ(o.tolerance_profile, "cpu:default");
  EXPECT_TRUE(o.error.empty());
  EXPECT_GT(o.timing.first_us, 0);
  EXPECT_GE(o.timing.reps, 1);
  ASSERT_EQ(detail.inputs.size(), 2u);
  EXPECT_EQ(detail.inputs[0].name, "self");
  EXPECT_EQ(detail.inputs[1].name, "other");
  ASSERT_EQ(detail.actual.size(), 1u);
  EXPECT_EQ(detail.actual[0].name, "out0");
  EXPECT_EQ(detail.actual[0].shape, "[8, 8]");
  ASSERT_EQ(detail.golden.size(), 1u);
  EXPECT_EQ(detail.golden[0].dtype, "Double");
  EXPECT_FALSE(detail.worst.empty());
  EXPECT_LE(detail.worst.size(), 5u);
}

TEST_F(RunnerTest, NonContiguousLayoutsPass) {
  for (const char* key : {"op/exp/f32/17x31/t/eager", "op/exp/f32/17x31/step2/eager", "op/relu/f32/2x3x4x5/cl/eager"}) {
    Outcome o = run(key);
    EXPECT_EQ(o.status, Status::Pass) << key << ": " << o.error;
  }
}

TEST_F(RunnerTest, BackwardComparesGrads) {
  CaseDetail detail;
  Outcome o = run("op/mul/f32/4x5,4x5/contig/eager-bwd", {}, &detail);
  EXPECT_EQ(o.status, Status::Pass) << o.error;
  // out0 plus grad.self and grad.other.
  EXPECT_EQ(o.metrics.numel, 3 * 20);
  ASSERT_EQ(detail.actual.size(), 3u);
  EXPECT_EQ(detail.actual[0].name, "out0");
  EXPECT_EQ(detail.actual[1].name, "grad.self");
  EXPECT_EQ(detail.actual[2].name, "grad.other");

  Outcome e = run("op/exp/f32/8x8/contig/eager-bwd");
  EXPECT_EQ(e.status, Status::Pass) << e.error;
  EXPECT_EQ(e.metrics.numel, 2 * 64);
}

// What a backend does not implement is UNSUPPORTED, not ERROR, with the dispatcher's message and no
// backtrace: an op without a kernel (tb_sparse, a PrivateUse1 library with four ops, has no exp),
// and a kernel without the dtype (how AT_DISPATCH reports it; torch 2.14's CPU implements every
// dtype of the op table, so that message is checked as the classifier reads it).
TEST_F(RunnerTest, Unsupported) {
  auto sparse = make_backend(std::string("plugin:") + GAUNTLET_TEST_BACKENDS + "/libtb_sparse.so");
  Outcome o = run_case(CaseKey::parse("op/exp/f32/8x8/contig/eager"), *sparse, {}, nullptr);
  EXPECT_EQ(o.status, Status::Unsupported) << o.error;
  EXPECT_NE(o.error.find("Could not run 'aten::exp"), std::string::npos) << o.error;
  EXPECT_EQ(o.error.find("Exception raised from"), std::string::npos) << "backtrace kept: " << o.error;
  EXPECT_FALSE(is_failure(o.status));
  EXPECT_TRUE(compat::says_dtype_not_implemented("\"exp_vml_cpu\" not implemented for 'Half'"));
  EXPECT_TRUE(compat::says_dtype_not_implemented(
      "Expected tensor for argument #1 'weight' to have one of the following scalar types: Half, Float"));
  EXPECT_FALSE(compat::says_dtype_not_implemented("shape '[2, 3]' is invalid for input of size 5"));
}

TEST_F(RunnerTest, InvalidKeyIsError) {
  Outcome o = run("op/mm/f16/4x4,4x4/contig/eager");
  EXPECT_EQ(o.status, Status::Error);
  EXPECT_EQ(o.error.rfind("invalid case", 0), 0u) << o.error;
  Outcome u = run("op/no_such_op/f32/4/contig/eager");
  EXPECT_EQ(u.status, Status::Error);
  EXPECT_NE(u.error.find("invalid case"), std::string::npos) << u.error;
  EXPECT_TRUE(is_failure(u.status));
}

TEST_F(RunnerTest, SkipDoesNotRun) {
  Expectations ex =
      Expectations::load(write("expectations.yaml", "skip:\n  - match: \"op/add/*\"\n    reason: too slow here\n"));
  RunnerConfig cfg;
  cfg.expectations = &ex;
  CaseDetail detail;
  Outcome o = run("op/add/f32/8x8,8x8/contig/eager", cfg, &detail);
  EXPECT_EQ(o.status, Status::Skip);
  EXPECT_NE(o.reason.find("too slow here"), std::string::npos) << o.reason;
  EXPECT_NE(o.reason.find("expectations.yaml:2"), std::string::npos) << o.reason;
  EXPECT_EQ(o.metrics.numel, 0);
  EXPECT_EQ(o.timing.first_us, 0);
  EXPECT_TRUE(detail.inputs.empty());
  // Even an invalid key is skipped without running.
  EXPECT_EQ(run("op/add/f32/8/contig/eager", cfg).status, Status::Skip);
  // Other cases run.
  EXPECT_EQ(run("op/exp/f32/8/contig/eager", cfg).status, Status::Pass);
}

// A case that fails whatever the CPU's kernels: f32 matrix products of 64 terms checked with a
// tolerance of 1e-12 (each output rounds to f32 on its own way; some differ from the golden).
constexpr const char* kFailingKey = "op/mm/f32/64x64,64x64/contig/eager";
constexpr const char* kTightMm = "rules:\n  - ops: [mm]\n    dtypes: [f32]\n    rtol: 1e-12\n    atol: 1e-12\n";

TEST_F(RunnerTest, XFailAndXPass) {
  Expectations ex = Expectations::load(write("expectations.yaml",
                                             "xfail:\n  - match: \"op/add/*\"\n    reason: believed broken\n"
                                             "  - match: \"op/mm/*\"\n    reason: products off\n"));
  ToleranceTable tight = ToleranceTable::load(write("tolerances.yaml", kTightMm));
  RunnerConfig cfg;
  cfg.expectations = &ex;
  cfg.tolerances = &tight;
  Outcome pass = run("op/add/f32/8x8,8x8/contig/eager", cfg);
  EXPECT_EQ(pass.status, Status::XPass);
  EXPECT_TRUE(is_failure(pass.status));
  EXPECT_NE(pass.reason.find("believed broken"), std::string::npos);
  Outcome fail = run(kFailingKey, cfg);
  EXPECT_EQ(fail.status, Status::XFail) << fail.error;
  EXPECT_FALSE(is_failure(fail.status));
}

TEST_F(RunnerTest, NonStrictXFailKeepsPassAndFailIsXFail) {
  Expectations ex =
      Expectations::load(write("expectations.yaml",
                               "xfail:\n  - match: \"op/add/*\"\n    strict: false\n    reason: data-dependent\n"
                               "  - match: \"op/mm/*\"\n    strict: false\n    reason: products off\n"));
  ToleranceTable tight = ToleranceTable::load(write("tolerances.yaml", kTightMm));
  RunnerConfig cfg;
  cfg.expectations = &ex;
  cfg.tolerances = &tight;
  Outcome pass = run("op/add/f32/8x8,8x8/contig/eager", cfg);
  EXPECT_EQ(pass.status, Status::Pass);
  EXPECT_NE(pass.reason.find("data-dependent"), std::string::npos);
  EXPECT_EQ(run(kFailingKey, cfg).status, Status::XFail);
}

TEST_F(RunnerTest, StrictOnSkipIsRejected) {
  EXPECT_THROW(Expectations::load(write("bad.yaml", "skip:\n  - match: \"op/*\"\n    strict: false\n    reason: x\n")),
               CatalogError);
}

TEST_F(RunnerTest, TightToleranceRuleFails) {
  // f32 matrix products differ from the fp64 golden rounded to f32 in some elements.
  const std::string key = kFailingKey;
  ToleranceTable t = ToleranceTable::load(
      write("tolerances.yaml", "rules:\n  - ops: [mm]\n    dtypes: [f32]\n    rtol: 1e-9\n    atol: 1e-9\n"));
  RunnerConfig cfg;
  cfg.tolerances = &t;
  Outcome o = run(key, cfg);
  EXPECT_EQ(o.status, Status::Fail);
  EXPECT_GT(o.metrics.mismatches, 0);
  EXPECT_EQ(o.rtol, 1e-9);
  EXPECT_EQ(o.tolerance_profile, "cpu:tolerances.yaml:2");
  EXPECT_EQ(o.error.rfind("out0:", 0), 0u) << o.error;
  EXPECT_NE(o.error.find("outside tolerance"), std::string::npos) << o.error;
  EXPECT_EQ(o.metrics.worst.rfind("out0[", 0), 0u) << o.metrics.worst;
  // A loose rule makes it pass.
  ToleranceTable loose =
      ToleranceTable::load(write("tolerances.yaml", "rules:\n  - ops: [mm]\n    rtol: 0.5\n    atol: 0.5\n"));
  cfg.tolerances = &loose;
  EXPECT_EQ(run(key, cfg).status, Status::Pass);
}

TEST_F(RunnerTest, Deterministic) {
  for (const char* key : {"op/mm/bf16/17x31,31x8/contig/eager-bwd", "op/layer_norm/bf16/4x7x16,16,16/contig/eager",
                          "op/softmax/f32/17x31/t/eager-bwd/dim=0"}) {
    SCOPED_TRACE(key);
    Outcome a = run(key), b = run(key);
    EXPECT_EQ(a.status, b.status);
    EXPECT_EQ(a.metrics.max_abs_err, b.metrics.max_abs_err);
    EXPECT_EQ(a.metrics.max_rel_err, b.metrics.max_rel_err);
    EXPECT_EQ(a.metrics.mismatches, b.metrics.mismatches);
    EXPECT_EQ(a.metrics.numel, b.metrics.numel);
    EXPECT_EQ(a.metrics.max_ulp, b.metrics.max_ulp);
    EXPECT_EQ(a.metrics.worst, b.metrics.worst);
    EXPECT_EQ(a.error, b.error);
  }
}

TEST_F(RunnerTest, MaxRepsZeroTimesFirstCallOnly) {
  RunnerConfig cfg;
  cfg.max_reps = 0;
  Outcome o = run("op/add/f32/8x8,8x8/contig/eager", cfg);
  EXPECT_EQ(o.status, Status::Pass);
  EXPECT_EQ(o.timing.reps, 0);
  EXPECT_EQ(o.timing.median_us, o.timing.first_us);
}

// Note [Timing methodology]: one timer for every case kind (op, model, model file, compile).
TEST(TimeRepetitions, WarmUpCallsRunUntimedThenTheRepetitions) {
  RunnerConfig cfg;
  cfg.warmup = 3;
  cfg.min_reps = 4;
  cfg.max_time_ms = 1e9;
  int calls = 0;
  const std::vector<double> reps = time_repetitions(cfg, 0, [&] { ++calls; });
  EXPECT_EQ(calls, 7);
  EXPECT_EQ(reps.size(), 4u);
}

TEST(TimeRepetitions, TheFirstCallDoesNotCountTowardsMinTime) {
  // A first call of 100 ms (a model's, or a compilation) already past --min-time 0.001: the
  // repetitions still run until they themselves took that long.
  RunnerConfig cfg;
  cfg.min_reps = 0;
  cfg.min_time_ms = 0.001;
  cfg.max_time_ms = 1e9;
  const std::vector<double> reps =
      time_repetitions(cfg, 100, [] { std::this_thread::sleep_for(std::chrono::microseconds(10)); });
  ASSERT_EQ(reps.size(), 1u);
  EXPECT_GE(reps[0], 10);
}

TEST(TimeRepetitions, ACaseThatUsedItsTimeGetsNoWarmUpNorRepetition) {
  RunnerConfig cfg;
  cfg.warmup = 2;
  cfg.min_reps = 5;
  cfg.max_time_ms = 20;
  int calls = 0;
  EXPECT_TRUE(time_repetitions(cfg, 25, [&] { ++calls; }).empty());
  EXPECT_EQ(calls, 0);
  cfg.max_reps = 0;  // --reps 0: the first call only, no warm-up either
  EXPECT_TRUE(time_repetitions(cfg, 0, [&] { ++calls; }).empty());
  EXPECT_EQ(calls, 0);
}

// Note [Interpreter errors]: a kernel's error raised inside a traced model (as stored before the
// fix: the traceback first, the cause 30 lines down, past what a report shows).
TEST(LeadWithCause, TheKernelsMessageComesFirstAndTheTracebackAfter) {
  const std::string text =
      "The following operation failed in the TorchScript interpreter.\n"
      "Traceback of TorchScript, serialized code (most recent call last):\n"
      "  File \"code/__torch__/torch/nn/modules/conv.py\", line 10, in forward\n"
      "    input = torch._convolution(x, weight, None, [2, 2], [3, 3], [1, 1], False, [0, 0], 1, False, False, True, "
      "True)\n"
      "            ~~~~~~~~~~~~~~~~~~ <--- HERE\n"
      "\n"
      "Traceback of TorchScript, original code (most recent call last):\n"
      "/usr/lib/python3/dist-packages/torch/nn/modules/conv.py(459): _conv_forward\n"
      "/usr/lib/python3/dist-packages/torch/jit/_trace.py(759): trace\n"
      "RuntimeError: convolution_overrideable not implemented. You are likely triggering this with tensor backend "
      "other than CPU/CUDA/MKLDNN\n"
      "second line of the cause\n";
  const std::string led = lead_with_cause(text);
  EXPECT_EQ(led.substr(0, led.find('\n')),
            "convolution_overrideable not implemented. You are likely triggering this with tensor backend other than "
            "CPU/CUDA/MKLDNN");
  EXPECT_NE(led.find("\nsecond line of the cause\nThe following operation failed"), std::string::npos) << led;
  EXPECT_NE(led.find("<--- HERE"), std::string::npos);
  EXPECT_EQ(lead_with_cause("Could not run 'aten::sin.out' ..."), "Could not run 'aten::sin.out' ...");
  // No cause line: unchanged.
  const std::string bare = "The following operation failed in the TorchScript interpreter.\n  File x\n";
  EXPECT_EQ(lead_with_cause(bare), bare);
}

// Note [Compile path]: what torch.compile recorded lands in the outcome; past the recompile
// limit the frame ran eagerly, which is a finding (FAIL), not a pass, whatever the outputs.
TEST(CompileStatsRecord, RecompilesNameTheirGuardAndTheLimitIsAFinding) {
  CompileStats st;
  st.regions = 2;
  st.recompiles = 1;
  st.compile_ms = 12;
  st.dynamo_ms = 3;
  st.aot_ms = 1;
  st.backend_ms = 8;
  st.recompile_reasons = {"0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4"};
  Outcome ok;
  record_compile_stats(st, ok);
  EXPECT_EQ(ok.status, Status::Pass);
  EXPECT_EQ(ok.dynamo_ms, 3.0);
  EXPECT_EQ(ok.aot_ms, 1.0);
  EXPECT_EQ(ok.backend_ms, 8.0);
  EXPECT_EQ(ok.reason, "recompiles: 0/0: tensor 'x' size mismatch at index 0. expected 2, actual 4");

  st.recompile_limit = "Dynamo recompile limit exceeded";
  Outcome limited;
  record_compile_stats(st, limited);
  EXPECT_EQ(limited.status, Status::Fail);
  EXPECT_EQ(limited.stage, "compiled");
  EXPECT_NE(limited.error.find("reached its recompile limit"), std::string::npos) << limited.error;

  st.breaks = {"aten::native_layer_norm (mlp.py:12): no kernel on the device"};
  st.recompile_limit.clear();
  Outcome broken;
  record_compile_stats(st, broken);
  EXPECT_EQ(broken.reason.rfind(
                "graph breaks: aten::native_layer_norm (mlp.py:12): no kernel on the device; recompiles: ", 0),
            0u)
      << broken.reason;
}

}  // namespace
}  // namespace gauntlet
