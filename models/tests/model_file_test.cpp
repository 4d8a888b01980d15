// Model files (Note [Model files]): manifests and their errors, the weightless refill, moving a
// module slot by slot, flattening results and flagging fixed devices and dtypes. The modules are
// built here with TorchScript's C++ API and saved as a user's torch.jit.save would.
#include "gauntlet/models/model_file.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace gauntlet {
namespace {

namespace fs = std::filesystem;

class ModelFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gauntlet_model_file_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string write(const std::string& name, const std::string& text) {
    std::ofstream(dir_ / name) << text;
    return (dir_ / name).string();
  }

  // A small network as a user's TorchScript file: a traced-style convolution (aten::_convolution,
  // what torch.jit.trace records), a linear head, an integer buffer, and a result that is a dict
  // and a tuple.
  std::string save_module(const std::string& stem, const std::string& weightless_json = "") {
    torch::jit::Module m("__torch__.Net");
    m.register_parameter("conv_w", torch::randn({4, 3, 3, 3}), false);
    m.register_parameter("conv_b", torch::zeros({4}), false);
    m.register_parameter("head_w", torch::zeros({5, 4}), false);
    m.register_buffer("index", torch::arange(5, torch::kLong));
    m.define(R"(
def forward(self, x):
    y = torch._convolution(x, self.conv_w, self.conv_b, [1, 1], [1, 1], [1, 1], False, [0, 0], 1, False, False, True, True)
    p = torch.mean(y, [2, 3])
    logits = torch.matmul(p, self.head_w.t())
    return {"logits": logits}, (torch.index_select(logits, 1, self.index), p)
)");
    const std::string path = (dir_ / (stem + ".pt")).string();
    torch::jit::ExtraFilesMap extra;
    if (!weightless_json.empty()) extra["gauntlet/weightless.json"] = weightless_json;
    m.save(path, extra);
    return path;
  }

  fs::path dir_;
};

TEST_F(ModelFileTest, ATwoLineManifestBesideTheFileIsEnough) {
  const std::string pt = save_module("My Net-2");
  write("My Net-2.yaml", "inputs:\n  - {name: x, shape: [1, 3, 8, 8]}\n");
  const ModelFileSpec s = load_model_file_spec(pt);
  EXPECT_EQ(s.name, "my_net_2");
  EXPECT_EQ(s.hash.size(), 8u);
  EXPECT_EQ(s.key_name(), "my_net_2." + s.hash);
  EXPECT_EQ(s.config_names(), std::vector<std::string>{"default"});
  EXPECT_EQ(s.dtypes, std::vector<std::string>{"f32"});
  EXPECT_EQ(s.golden, "f64");
  EXPECT_EQ(s.batch("default"), 1);
  EXPECT_EQ(s.output(2).name, "out2");
  EXPECT_EQ(s.output(2).compare, OutputCompare::Scaled);
  // The manifest is a way in too, and gives the same model.
  EXPECT_EQ(load_model_file_spec((dir_ / "My Net-2.yaml").string()).key_name(), s.key_name());
}

TEST_F(ModelFileTest, AChangedFileIsANewCaseHistory) {
  const std::string pt = save_module("net");
  write("net.yaml", "inputs:\n  - {name: x, shape: [1, 3, 8, 8]}\n");
  const std::string before = load_model_file_spec(pt).hash;
  save_module("net", R"({"format": 1, "tensors": []})");
  EXPECT_NE(load_model_file_spec(pt).hash, before);
}

TEST_F(ModelFileTest, EveryManifestProblemNamesItsLine) {
  save_module("net");
  const std::vector<std::pair<std::string, std::string>> bad = {
      {"inputs:\n  - {name: x, shape: [1]}\ncolour: red\n", "net.yaml:3: unknown field 'colour'"},
      {"inputs: []\n", "at least one input"},
      {"inputs:\n  - {name: ids, shape: [2, 3], dtype: int64}\n", "needs 'bound'"},
      {"inputs:\n  - {name: x, shape: [b]}\n", "no size named 'b'"},
      {"inputs:\n  - {name: x, shape: [batch]}\nconfigs:\n  b1: {batch: 0}\n", "not a whole number from 1"},
      {"inputs:\n  - {name: x, shape: [1]}\n  - {name: x, shape: [1]}\n", "input 'x' is listed twice"},
      {"inputs:\n  - {name: x, shape: [1]}\noutputs:\n  - {name: y, compare: roughly}\n", "'roughly' is not one of"},
      {"inputs:\n  - {name: x, shape: [1]}\noutputs:\n  - {name: y, tolerance: 2}\n", "between 0 and 1"},
      {"inputs:\n  - {name: x, shape: [1]}\ngolden: f16\n", "'golden' is f64 or f32"},
      {"inputs:\n  - {name: x, shape: [1]}\ndtypes: [int8]\n", "'int8' is not one of"},
      {"inputs:\n  - {name: x, shape: [1]}\nfile: other.pt\n", "no model file"},
      {"inputs:\n  - {name: x, shape: [1]}\ninputs:\n  - {name: y, shape: [1]}\n", "given twice"},
      {"inputs:\n  - {name: x, shape: [1]}\nname: Net\n", "not lowercase letters"},
  };
  for (const auto& [text, expected] : bad) {
    SCOPED_TRACE(text);
    write("net.yaml", text);
    try {
      load_model_file_spec((dir_ / "net.pt").string());
      ADD_FAILURE() << "accepted";
    } catch (const ModelError& e) {
      EXPECT_NE(std::string(e.what()).find(expected), std::string::npos) << e.what();
      EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << e.what();
    }
  }
  fs::remove(dir_ / "net.yaml");
  try {
    load_model_file_spec((dir_ / "net.pt").string());
    ADD_FAILURE() << "a .pt without a manifest was accepted";
  } catch (const ModelError& e) {
    EXPECT_NE(std::string(e.what()).find("no manifest net.yaml beside it"), std::string::npos) << e.what();
  }
}

TEST_F(ModelFileTest, InputsDependOnTheSeedAloneAndRespectTheirDomains) {
  save_module("net");
  write("net.yaml",
        "inputs:\n"
        "  - {name: x, shape: [batch, 3, 8, 8], range: [0, 2]}\n"
        "  - {name: ids, shape: [batch, seq], dtype: int64, bound: 7}\n"
        "  - {name: lengths, shape: [batch], dtype: int64, fill: seq}\n"
        "configs:\n  b2: {batch: 2, seq: 5}\n  b4: {batch: 4, seq: 3}\n");
  const ModelFileSpec s = load_model_file_spec((dir_ / "net.pt").string());
  EXPECT_EQ(s.batch("b4"), 4);
  const auto a = make_model_file_inputs(s, "b2", at::kBFloat16, 42);
  const auto b = make_model_file_inputs(s, "b2", at::kBFloat16, 42);
  const auto c = make_model_file_inputs(s, "b2", at::kBFloat16, 43);
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0].scalar_type(), at::kBFloat16);
  EXPECT_EQ(a[0].sizes(), (std::vector<std::int64_t>{2, 3, 8, 8}));
  EXPECT_TRUE(a[0].equal(b[0]));
  EXPECT_FALSE(a[0].equal(c[0]));
  EXPECT_GE(a[0].min().item<double>(), 0.0);
  EXPECT_LE(a[0].max().item<double>(), 2.0);
  EXPECT_EQ(a[1].scalar_type(), at::kLong);
  EXPECT_LT(a[1].max().item<std::int64_t>(), 7);
  EXPECT_TRUE(a[2].eq(5).all().item<bool>());
  EXPECT_THROW(make_model_file_inputs(s, "b8", at::kFloat, 1), ModelError);
}

TEST_F(ModelFileTest, WeightlessTensorsAreRefilledFromTheSeedAndNoneIsLeftDegenerate) {
  // conv_w: a recorded distribution; head_w: zero-initialised (as ViT's head): refilled in
  // +-1/sqrt(fan_in); conv_b: constant 0 and 1-D: +-0.1.
  const std::string pt = save_module("net", R"({"format": 1, "tensors": [
      {"path": "conv_w", "shape": [4, 3, 3, 3], "dtype": "float32", "mean": 0.5, "std": 0.1, "fan_in": 27, "kind": "parameter"},
      {"path": "conv_b", "shape": [4], "dtype": "float32", "mean": 0, "std": 0, "fan_in": 0, "kind": "parameter"},
      {"path": "head_w", "shape": [5, 4], "dtype": "float32", "mean": 0, "std": 0, "fan_in": 4, "kind": "parameter"}]})");
  write("net.yaml", "inputs:\n  - {name: x, shape: [2, 3, 8, 8]}\n");
  const ModelFileSpec s = load_model_file_spec(pt);
  std::size_t refilled = 0;
  torch::jit::Module a = load_model_module(s, at::kFloat, at::kFloat, c10::Device(c10::kCPU), 7, &refilled);
  torch::jit::Module b = load_model_module(s, at::kFloat, at::kDouble, c10::Device(c10::kCPU), 7);
  torch::jit::Module c = load_model_module(s, at::kFloat, at::kFloat, c10::Device(c10::kCPU), 8);
  EXPECT_EQ(refilled, 3u);
  const at::Tensor w = a.attr("conv_w").toTensor();
  EXPECT_NEAR(w.mean().item<double>(), 0.5, 0.05);
  EXPECT_NEAR(w.std().item<double>(), 0.1, 0.03);
  const at::Tensor head = a.attr("head_w").toTensor();
  EXPECT_GT(head.abs().max().item<double>(), 0.05);
  EXPECT_LE(head.abs().max().item<double>(), 0.5);
  EXPECT_LE(a.attr("conv_b").toTensor().abs().max().item<double>(), 0.1);
  EXPECT_GT(a.attr("conv_b").toTensor().abs().max().item<double>(), 0.0);
  // The golden's copy holds the same (rounded) values in f64; another seed, other values.
  EXPECT_EQ(b.attr("conv_w").toTensor().scalar_type(), at::kDouble);
  EXPECT_TRUE(b.attr("conv_w").toTensor().to(at::kFloat).equal(w));
  EXPECT_FALSE(c.attr("conv_w").toTensor().equal(w));
  // Integer buffers keep their dtype and values.
  EXPECT_EQ(b.attr("index").toTensor().scalar_type(), at::kLong);
  EXPECT_TRUE(b.attr("index").toTensor().equal(torch::arange(5, torch::kLong)));
  // And the refilled model's output is not degenerate.
  c10::InferenceMode guard;
  const auto out = flatten_model_outputs(a.forward({torch::rand({2, 3, 8, 8})}));
  ASSERT_EQ(out.size(), 3u);
  EXPECT_GT(out[0].abs().max().item<double>(), 1e-3);
}

TEST_F(ModelFileTest, AUsersWeightsAreKept) {
  const std::string pt = save_module("net");
  write("net.yaml", "inputs:\n  - {name: x, shape: [2, 3, 8, 8]}\n");
  const ModelFileSpec s = load_model_file_spec(pt);
  std::size_t refilled = 99;
  torch::jit::Module a = load_model_module(s, at::kFloat, at::kFloat, c10::Device(c10::kCPU), 7, &refilled);
  torch::jit::Module b = load_model_module(s, at::kFloat, at::kFloat, c10::Device(c10::kCPU), 8, nullptr);
  EXPECT_EQ(refilled, 0u);
  EXPECT_TRUE(a.attr("conv_w").toTensor().equal(b.attr("conv_w").toTensor()));
  EXPECT_TRUE(a.attr("head_w").toTensor().eq(0).all().item<bool>());
}

TEST_F(ModelFileTest, MovingAModuleKeepsSharedTensorsSharedAndIntegersIntegers) {
  torch::jit::Module m("__torch__.Shared");
  const at::Tensor w = torch::rand({3, 3});
  m.register_parameter("a", w, false);
  m.register_parameter("b", w, false);
  m.register_buffer("steps", torch::tensor({3}, torch::kLong));
  c10::List<at::Tensor> flat({w});
  m.register_attribute("_flat_weights", c10::ListType::ofTensors(), flat);
  int calls = 0;
  convert_module_tensors(m, [&](const at::Tensor& t) {
    ++calls;
    return at::isFloatingType(t.scalar_type()) ? t.to(at::kDouble) : t;
  });
  EXPECT_EQ(calls, 2);  // w once, steps once
  EXPECT_TRUE(m.attr("a").toTensor().is_same(m.attr("b").toTensor()));
  EXPECT_TRUE(m.attr("_flat_weights").toTensorList().get(0).is_same(m.attr("a").toTensor()));
  EXPECT_EQ(m.attr("a").toTensor().scalar_type(), at::kDouble);
  EXPECT_EQ(m.attr("steps").toTensor().scalar_type(), at::kLong);
}

TEST_F(ModelFileTest, FixedDevicesAndDtypesInForwardAreFound) {
  torch::jit::Module m("__torch__.Baked");
  m.define(R"(
def forward(self, x):
    h = torch.zeros([2, 3], dtype=6, layout=None, device=torch.device("cpu"), pin_memory=False)
    return x + h
)");
  const auto found = fixed_devices_and_dtypes(m);
  ASSERT_EQ(found.size(), 2u);
  EXPECT_EQ(found[0], "aten::zeros: device cpu");
  EXPECT_EQ(found[1], "aten::zeros: dtype Float");
  torch::jit::Module clean("__torch__.Clean");
  clean.define("def forward(self, x):\n    return torch.zeros_like(x) + x\n");
  EXPECT_TRUE(fixed_devices_and_dtypes(clean).empty());
}

TEST_F(ModelFileTest, AFolderIsEveryManifestInIt) {
  save_module("one");
  save_module("two");
  write("one.yaml", "inputs:\n  - {name: x, shape: [1, 3, 8, 8]}\n");
  write("two.yaml", "name: second\ninputs:\n  - {name: x, shape: [1, 3, 8, 8]}\n");
  const auto all = load_model_files(dir_.string());
  ASSERT_EQ(all.size(), 2u);
  EXPECT_EQ(all[0].name, "one");
  EXPECT_EQ(all[1].name, "second");
  fs::create_directories(dir_ / "empty");
  EXPECT_THROW(load_model_files((dir_ / "empty").string()), ModelError);
}

}  // namespace
}  // namespace gauntlet
