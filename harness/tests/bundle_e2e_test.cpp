// Repro bundles end to end (Note [Bundles] in harness/core/bundle/bundle.cpp, docs/repro.md "Bundles"):
// the real gauntlet binary writes bundles; /usr/bin/python3 and a C++ build of the bundle's
// program replay them without Gauntlet and must reach Gauntlet's verdict and max abs error.
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>

#include "e2e_support.h"

namespace {

using e2e::fs::path;

// The Python of the torch environment Gauntlet was built against (cmake/torch.cmake).
constexpr const char* kPython = GAUNTLET_PYTHON;

struct Replay {
  int code = -1;
  std::string out, verdict;
  double max_abs = NAN;
};

// Runs a shell command, capturing stdout and stderr together.
std::pair<int, std::string> shell(const std::string& cmd) {
  std::string out;
  FILE* p = popen((cmd + " 2>&1").c_str(), "r");
  if (!p) return {-1, ""};
  char buf[4096];
  while (std::fgets(buf, sizeof buf, p)) out += buf;
  const int status = pclose(p);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), out};
}

// The verdict's status word and the max abs error a replay printed.
Replay parse_replay(int code, const std::string& out) {
  Replay r;
  r.code = code;
  r.out = out;
  std::smatch m;
  if (std::regex_search(out, m, std::regex(R"(\nverdict  (\w+))"))) r.verdict = m[1];
  if (std::regex_search(out, m, std::regex(R"(\nmetrics  max abs err (\S+))"))) r.max_abs = std::stod(m[1]);
  return r;
}

bool python_has_torch() {
  static const bool has = shell(std::string(kPython) + " -c 'import torch'").first == 0;
  return has;
}

nlohmann::json manifest(const path& dir) { return nlohmann::json::parse(e2e::slurp(dir / "manifest.json")); }

// Same to 1e-12 relative (0 and 0 alike).
bool same_error(double a, double b) {
  return a == b || std::fabs(a - b) <= 1e-12 * std::max(std::fabs(a), std::fabs(b));
}

class Bundle : public e2e::E2E {
 protected:
  // Writes KEY's bundle with `gauntlet repro KEY --bundle DIR <extra>` and checks that Gauntlet's
  // printed verdict is the manifest's.
  path make(const std::string& key, const std::string& name, const std::string& extra = "",
            const std::string& env = "") {
    path dir = dir_ / name;
    const e2e::Result r = gauntlet("repro '" + key + "' --bundle " + dir.string() + " " + extra, env);
    last_out_ = r.out;
    EXPECT_TRUE(r.code == 0 || r.code == 1) << key << "\n" << r.out << r.err;
    EXPECT_NE(r.out.find("bundle   " + dir.string()), std::string::npos) << key << "\n" << r.out << r.err;
    for (const char* f : {"manifest.json", "tensors.pt", "repro.py", "repro.cpp", "CMakeLists.txt"}) {
      EXPECT_TRUE(e2e::fs::exists(dir / f)) << key << ": " << f;
    }
    if (!e2e::fs::exists(dir / "manifest.json")) return dir;
    const nlohmann::json man = manifest(dir);
    EXPECT_EQ(man["key"], key);
    std::smatch m;
    EXPECT_TRUE(std::regex_search(r.out, m, std::regex(R"(\nverdict  (\w+))"))) << r.out;
    EXPECT_EQ(m[1], man["gauntlet"]["status"].get<std::string>()) << key;
    return dir;
  }

  // repro.py's verdict and max abs error against the manifest's (Gauntlet's).
  void expect_python_agrees(const path& dir, const std::string& flags = "--device cpu") {
    const nlohmann::json man = manifest(dir);
    const auto [code, out] = shell(std::string(kPython) + " " + (dir / "repro.py").string() + " " + flags);
    const Replay r = parse_replay(code, out);
    const std::string want = man["gauntlet"]["status"];
    EXPECT_EQ(r.verdict, want) << man["key"] << "\n" << out;
    EXPECT_EQ(r.code, want == "PASS" ? 0 : 1) << out;
    EXPECT_TRUE(same_error(r.max_abs, man["gauntlet"]["max_abs_err"].get<double>()))
        << man["key"] << ": repro.py " << r.max_abs << ", gauntlet " << man["gauntlet"]["max_abs_err"] << "\n"
        << out;
  }

  std::string last_out_;  // what the last make() printed
};

// Op cases of the smoke suite: f32, f64, bf16, f16, i32, bool (and an i64 key), the layouts
// t, step2 and cl, forward and backward.
const std::vector<std::string>& op_keys() {
  static const std::vector<std::string> keys = {
      "op/add/f32/17x31,17x31/t/eager",
      "op/log1p/f32/17x31/step2/eager",
      "op/logical_xor/f32/17x31,17x31/step2/eager",
      "op/matmul/f64/17x31,31x8/t/eager-bwd",
      "op/matmul/f64/17x31,31x8/contig/eager",
      "op/chunk/f32/6x5/t/eager-bwd",
      "op/clamp/bf16/17x31/t/eager-bwd",
      "op/atan2/bf16/17x31,17x31/contig/eager",
      "op/erfc/bf16/_/contig/eager",
      "op/abs/f16/17x31/contig/eager",
      "op/argmin/i32/17x31/contig/eager/dim=-1,keepdim=1",
      "op/bitwise_and/i32/17x31,17x31/contig/eager",
      "op/stack/i32/3x5,3x5/contig/eager",
      "op/all/bool/17x31/contig/eager/dim=0",
      "op/softmax/f32/17x31/contig/eager-bwd/dim=-1",
      "op/layer_norm/f32/4x7x16,16,16/contig/eager-bwd",
      "op/conv2d/f32/2x4x9x9,6x4x3x3,6/cl/eager-bwd",
      "op/gather/f32/17x31,5x31/contig/eager-bwd",
      "op/topk/f32/17x31/contig/eager-bwd",
      "op/mse_loss/f32/8x5,8x5/contig/eager-bwd/reduction=mean",
      "op/add/i64/17x31,17x31/contig/eager",  // in no suite (no i64 add there): a valid key all
                                              // the same, run with --any-key
  };
  return keys;
}

TEST_F(Bundle, OpCasesReplayInPythonWithGauntletsVerdictAndError) {
  std::size_t i = 0;
  for (const std::string& key : op_keys()) {
    SCOPED_TRACE(key);
    const path dir = make(key, "op" + std::to_string(i++), key.find("/i64/") != std::string::npos ? "--any-key" : "");
    const nlohmann::json man = manifest(dir);
    EXPECT_EQ(man["gauntlet"]["status"], "PASS");  // the CPU against its own fp64 golden
    if (!python_has_torch()) continue;
    expect_python_agrees(dir);
  }
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
}

TEST_F(Bundle, InputsKeepTheirLayout) {
  const path dir = make("op/log1p/f32/17x31/step2/eager", "step2");
  const nlohmann::json in = manifest(dir)["inputs"].at(0);
  EXPECT_EQ(in["size"], nlohmann::json({17, 31}));
  EXPECT_NE(in["stride"], nlohmann::json({31, 1}));  // step2: every other element of a larger storage
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  const auto [code, out] = shell(std::string(kPython) +
                                 " -c \"import json, torch; from torch.jit._pickle import restore_type_tag; "
                                 "torch.serialization.add_safe_globals([restore_type_tag]); T = torch.load('" +
                                 (dir / "tensors.pt").string() + "', weights_only=True); m = json.load(open('" +
                                 (dir / "manifest.json").string() +
                                 "'))['inputs'][0]; x = T['input.self'].as_strided(m['size'], m['stride'], "
                                 "m['storage_offset']); "
                                 "print(list(x.stride()), x.is_contiguous())\"");
  EXPECT_EQ(code, 0) << out;
  std::string strides;
  for (const auto& v : in["stride"]) strides += (strides.empty() ? "[" : ", ") + std::to_string(v.get<long long>());
  EXPECT_EQ(out, strides + "] False\n");
}

TEST_F(Bundle, ModelCasesReplayTheTorchScriptModule) {
  std::size_t i = 0;
  for (const std::string& key :
       {std::string("model/mlp/f32/tiny/eager/infer"), std::string("model/cnn/f32/tiny/eager/train"),
        std::string("model/cross_attention/bf16/tiny/eager/infer")}) {
    SCOPED_TRACE(key);
    const path dir = make(key, "model" + std::to_string(i++));
    EXPECT_TRUE(e2e::fs::exists(dir / "model.pt"));
    if (python_has_torch()) expect_python_agrees(dir);
  }
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
}

TEST_F(Bundle, CollectiveCaseReplaysEveryRankInOneProcess) {
  const path dir = make("coll/all_reduce/f32/1024/contig/w2/op=sum", "coll");
  const nlohmann::json man = manifest(dir);
  EXPECT_EQ(man["inputs"].size(), 2u);
  EXPECT_FALSE(man["saved_actual"].get<bool>());
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  expect_python_agrees(dir);
}

// A fault in the simulator: Gauntlet's FAIL is in the bundle's saved outputs, and repro.py judging
// them (--from-saved) prints FAIL with Gauntlet's error.
TEST_F(Bundle, SimFaultIsInTheSavedOutputs) {
  const std::string key = "op/add/f32/17x31,17x31/t/eager";
  const path dir =
      make(key, "fault", "--backend sim", "GAUNTLET_SIM_FAULTS='op=aten::add*,dtype=f32,kind=bias,factor=0.5'");
  const nlohmann::json man = manifest(dir);
  EXPECT_EQ(man["gauntlet"]["status"], "FAIL");
  EXPECT_EQ(man["backend"]["name"], "sim");
  EXPECT_EQ(man["environment"]["GAUNTLET_SIM_FAULTS"], "op=aten::add*,dtype=f32,kind=bias,factor=0.5");
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  expect_python_agrees(dir, "--from-saved");
  // Rerun on the CPU, the same case passes: the fault was the backend's.
  const auto [code, out] = shell(std::string(kPython) + " " + (dir / "repro.py").string() + " --device cpu");
  EXPECT_EQ(parse_replay(code, out).verdict, "PASS") << out;
}

// A bundle made on the simulator, replayed on its device (PrivateUse1, loaded with --load): the
// sim's tolerance and outputs, Gauntlet's verdict and max abs error.
TEST_F(Bundle, ReplaysOnAPluginDevice) {
  const path dir = make("model/cnn/f32/tiny/eager/train", "sim", "--backend sim");
  EXPECT_EQ(manifest(dir)["backend"]["name"], "sim");
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  expect_python_agrees(dir, std::string("--load ") + GAUNTLET_SIM_LIB + " --device privateuseone:0");
}

// A compile case's bundle holds the program the case compiled (program.py) and the dynamo backend
// and settings it compiled with; repro.py compiles it again the same way (inductor on the CPU, the
// simulator's gauntlet_sim on its device, the module copied into the bundle) and reaches Gauntlet's
// verdict; --eager runs the same call without the compiler.
TEST_F(Bundle, CompileCasesReplayThroughTorchCompileWithTheCasesBackend) {
  const path op = make("op/add/f32/17x31,17x31/t/compile", "compile_op");
  nlohmann::json man = manifest(op);
  EXPECT_EQ(man["compile"]["backend"], "inductor");
  EXPECT_TRUE(e2e::fs::exists(op / "program.py"));
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  expect_python_agrees(op);
  auto [code, out] = shell(std::string(kPython) + " " + (op / "repro.py").string() + " --device cpu");
  EXPECT_NE(out.find("compile  torch.compile(backend='inductor')"), std::string::npos) << out;
  EXPECT_NE(out.find("compiled 1 graphs, 0 graph breaks"), std::string::npos) << out;

  // On the simulator: a model whose data-dependent branch breaks the graph.
  const path model = make("model/early_exit/f32/tiny/compile/infer", "compile_model", "--backend sim");
  man = manifest(model);
  EXPECT_EQ(man["compile"]["backend"], "gauntlet_sim");
  EXPECT_EQ(man["compile"]["module"], "gauntlet_sim.py");
  EXPECT_TRUE(e2e::fs::exists(model / "gauntlet_sim.py"));
  // the bundle line says how: on the simulator's device, its library loaded
  EXPECT_NE(last_out_.find("/repro.py --load "), std::string::npos) << last_out_;
  EXPECT_NE(last_out_.find(" --device privateuseone:0\n"), std::string::npos) << last_out_;
  const std::string on_sim = std::string(" --load ") + GAUNTLET_SIM_LIB + " --device privateuseone:0";
  expect_python_agrees(model, on_sim);
  std::tie(code, out) = shell(std::string(kPython) + " " + (model / "repro.py").string() + on_sim);
  EXPECT_TRUE(std::regex_search(out, std::regex(R"(compiled \d+ graphs, [1-9]\d* graph breaks: )"))) << out;
  std::tie(code, out) = shell(std::string(kPython) + " " + (model / "repro.py").string() + on_sim + " --eager");
  EXPECT_EQ(parse_replay(code, out).verdict, "PASS") << out;
  EXPECT_EQ(out.find("compile  torch.compile"), std::string::npos) << out;
}

// From the record: a run stored the fault in its environment; `repro --db --bundle` restores it,
// and the bundle says which run it came from.
TEST_F(Bundle, FromTheRecordOfAStoredRun) {
  const std::string key = "op/add/f32/17x31,17x31/t/eager";
  const std::string db = (dir_ / "r.db").string();
  const e2e::Result run = gauntlet("run --suite smoke --filter '" + key + "' --backend sim --db " + db + " --quiet",
                                   "GAUNTLET_SIM_FAULTS='op=aten::add*,dtype=f32,kind=bias,factor=0.5'");
  ASSERT_EQ(run.code, 0) << run.out << run.err;
  const path dir = make(key, "record", "--db " + db);  // no fault in this environment: the run's is restored
  const nlohmann::json man = manifest(dir);
  EXPECT_EQ(man["gauntlet"]["status"], "FAIL");
  EXPECT_EQ(man["restored_from"], "run 1 of " + db);
  EXPECT_EQ(man["environment"]["GAUNTLET_SIM_FAULTS"], "op=aten::add*,dtype=f32,kind=bias,factor=0.5");
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  expect_python_agrees(dir, "--from-saved");
}

// Note [What was judged] in analysis/judged.cpp: a case compare found 20% slower in simulated
// time. `repro --db` prints the baseline's figure, the stored one, its own and the verdict with
// its threshold; the bundle's repro.py times the case on the device and prints the same verdict.
TEST_F(Bundle, ASlowedCaseShowsWhatWasJudgedAndItsBundleReplaysTheTimingToTheSameVerdict) {
  const std::string key = "op/mm/f32/64x64,64x64/contig/eager";
  const std::string db = (dir_ / "slow.db").string();
  const std::string run = "run --suite smoke --filter 'op/mm/f32/*' --backend sim --quiet --db " + db;
  ASSERT_EQ(gauntlet(run + " --release r1").code, 0);
  ASSERT_EQ(gauntlet(run + " --release r2", "GAUNTLET_SIM_FAULTS='op=aten::mm,kind=slow,factor=1.2'").code, 0);
  const path dir = make(key, "slowed", "--db " + db);
  for (const char* line :
       {"judged   run 2 (r2) against baseline run 1 (r1), as compare judges it:\n", "  slower: sim time ",
        "\n    baseline  sim time ", "\n    run 2     sim time ", "\n    now       sim time "}) {
    EXPECT_NE(last_out_.find(line), std::string::npos) << line << "\n" << last_out_;
  }
  const std::string verdict =
      "\n    verdict   slower: +20.0% against the baseline, flagged past +5.0% (--min-effect): the regression "
      "reproduces\n";
  EXPECT_NE(last_out_.find(verdict), std::string::npos) << last_out_;
  // the bundle line replays on the device, in the run's environment
  EXPECT_NE(last_out_.find("GAUNTLET_SIM_FAULTS=op=aten::mm,kind=slow,factor=1.2 python3 "), std::string::npos)
      << last_out_;
  const nlohmann::json man = manifest(dir);
  EXPECT_EQ(man["judged"]["metric"], "sim");
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  const std::string on_sim = std::string(" --load ") + GAUNTLET_SIM_LIB + " --device privateuseone:0";
  auto [code, out] = shell("GAUNTLET_SIM_FAULTS='op=aten::mm,kind=slow,factor=1.2' " + std::string(kPython) + " " +
                           (dir / "repro.py").string() + on_sim);
  EXPECT_EQ(code, 0) << out;
  EXPECT_NE(out.find("\n    verdict   slower: +20.0% against the baseline, flagged past +5.0% (--min-effect): the "
                     "regression reproduces\n"),
            std::string::npos)
      << out;
  // without the fault, the time is the baseline's: not flagged
  std::tie(code, out) = shell(std::string(kPython) + " " + (dir / "repro.py").string() + on_sim);
  EXPECT_NE(out.find("\n    verdict   not flagged: +0.0% against the baseline"), std::string::npos) << out;
}

// An expected failure: Gauntlet's XFAIL is the raw FAIL repro.py prints, with the expectation.
// f16 logit rounds x / (1 - x) to f16 before the log on every CPU (expectations.yaml).
TEST_F(Bundle, AnExpectedFailureReplaysAsItsRawFail) {
  const path dir = make("op/logit/f16/127/contig/eager", "xfail");
  const nlohmann::json man = manifest(dir);
  ASSERT_EQ(man["gauntlet"]["status"], "XFAIL");
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  const auto [code, out] = shell(std::string(kPython) + " " + (dir / "repro.py").string());
  const Replay r = parse_replay(code, out);
  EXPECT_EQ(r.verdict, "FAIL") << out;
  EXPECT_NE(out.find("\nexpected to fail (" + man["gauntlet"]["reason"].get<std::string>() + ")"), std::string::npos)
      << out;
  EXPECT_TRUE(same_error(r.max_abs, man["gauntlet"]["max_abs_err"].get<double>())) << out;
}

// A model file's case (a user's traced module and a manifest giving each output its rule): the
// bundle holds the module as the case ran it and the rules (topk, scaled, cosine); repro.py and
// the C++ program judge by them, with Gauntlet's verdict and max abs error, on the CPU and from a
// faulty simulator's saved outputs.
TEST_F(Bundle, ModelFileCasesReplayTheirModuleJudgedByTheManifestsRules) {
  ASSERT_TRUE(python_has_torch()) << kPython << " cannot import torch: run ci/setup.sh";
  const path pt = dir_ / "tiny.pt";
  const auto [export_code, export_out] =
      shell(std::string(kPython) +
            " -c \"import torch\n"
            "class M(torch.nn.Module):\n"
            "    def __init__(s):\n"
            "        super().__init__(); s.c = torch.nn.Conv2d(3, 4, 3); s.l = torch.nn.Linear(144, 10)\n"
            "    def forward(s, x):\n"
            "        y = torch.relu(s.c(x))\n"
            "        return s.l(y.flatten(1)), y, y.mean((2, 3))\n"
            "torch.manual_seed(0)\n"
            "torch.jit.trace(M().eval(), torch.randn(2, 3, 8, 8)).save('" +
            pt.string() + "')\"");
  ASSERT_EQ(export_code, 0) << export_out;
  std::ofstream(dir_ / "tiny.yaml") << "inputs:\n  - {name: x, shape: [2, 3, 8, 8]}\n"
                                       "outputs:\n  - {name: logits, compare: topk}\n  - {name: features}\n"
                                       "  - {name: pooled, compare: cosine}\n";
  const e2e::Result listed = gauntlet("list --suite " + pt.string());
  ASSERT_EQ(listed.code, 0) << listed.err;
  const std::string key = listed.out.substr(0, listed.out.find('\n'));
  ASSERT_EQ(key.rfind("model/tiny.", 0), 0u) << listed.out;
  const std::string files = "GAUNTLET_MODEL_FILES=" + pt.string() + " ";

  const path cpu = make(key, "mf_cpu", "--backend cpu", files);
  const nlohmann::json man = manifest(cpu);
  EXPECT_EQ(man["gauntlet"]["status"], "PASS");
  EXPECT_EQ(man["model_file"]["name"], "tiny");
  EXPECT_EQ(man["model_file"]["file"], pt.string());
  ASSERT_EQ(man["outputs"].size(), 3u);
  EXPECT_EQ(man["outputs"][0]["compare"], "topk");
  EXPECT_EQ(man["outputs"][1]["compare"], "scaled");
  EXPECT_EQ(man["outputs"][2]["compare"], "cosine");
  EXPECT_TRUE(e2e::fs::exists(cpu / "model.pt"));
  expect_python_agrees(cpu);

  // A fault in the simulator's convolution: Gauntlet's FAIL is in the saved outputs; judged on
  // the CPU the same module passes.
  const path sim = make(key, "mf_sim", "--backend sim",
                        files + "GAUNTLET_SIM_FAULTS='op=aten::convolution_overrideable,kind=bias,factor=0.5' ");
  ASSERT_EQ(manifest(sim)["gauntlet"]["status"], "FAIL");
  expect_python_agrees(sim, "--from-saved");
  const auto [code, out] = shell(std::string(kPython) + " " + (sim / "repro.py").string() + " --device cpu");
  EXPECT_EQ(parse_replay(code, out).verdict, "PASS") << out;

  // The C++ program of the faulty bundle: the saved outputs' FAIL, and the CPU's PASS with the
  // error Python measured.
  const auto [cfg_code, cfg_out] = shell("cmake -S " + sim.string() + " -B " + (sim / "build").string() +
                                         " -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=" + kPython);
  ASSERT_EQ(cfg_code, 0) << cfg_out;
  const auto [build_code, build_out] = shell("cmake --build " + (sim / "build").string());
  ASSERT_EQ(build_code, 0) << build_out;
  const auto [saved_code, saved_out] = shell((sim / "build" / "repro").string() + " --from-saved");
  const Replay saved = parse_replay(saved_code, saved_out);
  EXPECT_EQ(saved.verdict, "FAIL") << saved_out;
  EXPECT_TRUE(same_error(saved.max_abs, manifest(sim)["gauntlet"]["max_abs_err"].get<double>())) << saved_out;
  const auto [cpp_code, cpp_out] = shell((sim / "build" / "repro").string() + " --device cpu");
  const Replay on_cpu = parse_replay(cpp_code, cpp_out);
  EXPECT_EQ(on_cpu.verdict, "PASS") << cpp_out;
  EXPECT_TRUE(same_error(on_cpu.max_abs, parse_replay(code, out).max_abs)) << cpp_out << out;
}

// A model file's training scenario is not bundled: its steps are an optimiser's.
TEST_F(Bundle, AModelFilesTrainingScenarioIsNotBundled) {
  const path pt = dir_ / "t.pt";
  const auto [export_code, export_out] = shell(std::string(kPython) +
                                               " -c \"import torch; torch.manual_seed(0); "
                                               "torch.jit.trace(torch.nn.Linear(4, 3), torch.randn(2, 4)).save('" +
                                               pt.string() + "')\"");
  if (export_code != 0) GTEST_SKIP() << export_out;
  std::ofstream(dir_ / "t.yaml") << "inputs:\n  - {name: x, shape: [2, 4]}\n";
  const e2e::Result listed = gauntlet("list --suite " + pt.string());
  ASSERT_EQ(listed.code, 0) << listed.err;
  std::string train_key = listed.out.substr(0, listed.out.find('\n'));  // .../eager/infer
  ASSERT_GT(train_key.size(), 6u) << listed.out;
  train_key = train_key.substr(0, train_key.size() - 5) + "train";
  const e2e::Result r = gauntlet("repro '" + train_key + "' --bundle " + (dir_ / "train").string(),
                                 "GAUNTLET_MODEL_FILES=" + pt.string() + " ");
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("bundle   NOT written: a model file's training scenario cannot be bundled"), std::string::npos)
      << r.out;
}

// A case that cannot be bundled says why, and repro exits 2.
TEST_F(Bundle, ACaseWithoutOutputsIsNotBundled) {
  const e2e::Result r = gauntlet("repro 'coll/barrier/f32/1/contig/w2' --bundle " + (dir_ / "barrier").string());
  EXPECT_EQ(r.code, 2) << r.out << r.err;
  EXPECT_NE(r.out.find("bundle   NOT written: a barrier moves no data"), std::string::npos) << r.out;
}

// The C++ program: one build (cmake + the compiler, against the torch of the environment's
// Python), for a backward case with a transposed layout.
TEST_F(Bundle, CppProgramBuildsAndAgrees) {
  const std::string key = "op/matmul/f64/17x31,31x8/t/eager-bwd";
  const path dir = make(key, "cpp");
  const nlohmann::json man = manifest(dir);
  const auto [cfg_code, cfg_out] = shell("cmake -S " + dir.string() + " -B " + (dir / "build").string() +
                                         " -DCMAKE_BUILD_TYPE=Release -DPython3_EXECUTABLE=" + kPython);
  ASSERT_EQ(cfg_code, 0) << cfg_out;
  const auto [build_code, build_out] = shell("cmake --build " + (dir / "build").string());
  ASSERT_EQ(build_code, 0) << build_out;
  for (const std::string& flags : {std::string("--device cpu"), std::string("--from-saved")}) {
    const auto [code, out] = shell((dir / "build" / "repro").string() + " " + flags);
    const Replay r = parse_replay(code, out);
    EXPECT_EQ(r.verdict, man["gauntlet"]["status"].get<std::string>()) << flags << "\n" << out;
    EXPECT_TRUE(same_error(r.max_abs, man["gauntlet"]["max_abs_err"].get<double>())) << flags << "\n" << out;
  }
}

}  // namespace
