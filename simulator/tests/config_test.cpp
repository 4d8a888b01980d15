#include "config.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "cost_model.h"
#include "trn2_constants.h"

namespace gauntlet::sim {
namespace {

void clear_sim_env() {
  for (const char* n : {"GAUNTLET_SIM_VERSION", "GAUNTLET_SIM_NUMERICS", "GAUNTLET_SIM_MEMORY", "GAUNTLET_SIM_FAULTS",
                        "GAUNTLET_SIM_FAULTS_FILE"}) {
    unsetenv(n);
  }
}

// Sets exactly these simulator variables for a scope.
struct EnvGuard {
  explicit EnvGuard(std::initializer_list<std::pair<const char*, const char*>> vars) {
    clear_sim_env();
    for (const auto& [n, v] : vars) setenv(n, v, 1);
  }
  ~EnvGuard() { clear_sim_env(); }
  EnvGuard(const EnvGuard&) = delete;
  EnvGuard& operator=(const EnvGuard&) = delete;
};

TEST(SimNumerics, DefaultsNoneAndItems) {
  EXPECT_EQ(parse_numerics("default"), Numerics{});
  Numerics none = parse_numerics("none");
  EXPECT_FALSE(none.bf16_matmul || none.approx_transcendental || none.tree_reduction);
  Numerics n = parse_numerics("bf16_matmul=off, approx_bits=8");
  EXPECT_FALSE(n.bf16_matmul);
  EXPECT_TRUE(n.approx_transcendental);
  EXPECT_EQ(n.approx_bits, 8);
}

TEST(SimNumerics, ErrorsNameTheItemAndColumn) {
  try {
    parse_numerics("bf16_matmul=on,fast_math=on");
    FAIL();
  } catch (const std::invalid_argument& e) {
    EXPECT_EQ(std::string(e.what()),
              "GAUNTLET_SIM_NUMERICS (column 16): unknown numerics 'fast_math' (known: bf16_matmul, "
              "approx_transcendental, tree_reduction, approx_bits)");
  }
  EXPECT_THROW(parse_numerics("tree_reduction=maybe"), std::invalid_argument);
  EXPECT_THROW(parse_numerics("approx_bits=40"), std::invalid_argument);
}

TEST(SimConfig, BytesWithUnits) {
  EXPECT_EQ(parse_bytes("1024", "M"), 1024);
  EXPECT_EQ(parse_bytes("2MiB", "M"), 2 * 1024 * 1024);
  EXPECT_EQ(parse_bytes("1.5 GB", "M"), 1500000000);
  EXPECT_THROW(parse_bytes("12 parsecs", "M"), std::invalid_argument);
  EXPECT_THROW(parse_bytes("-1", "M"), std::invalid_argument);
}

TEST(SimConfig, VersionNamesTheConfiguration) {
  {
    EnvGuard env({});
    Config c = config_from_env("sim-0.3.1", Numerics{}, "");
    EXPECT_EQ(c.version, "sim-0.3.1");
    EXPECT_EQ(c.capacity_bytes, static_cast<std::int64_t>(trn2::kHbmCapacityBytes));
  }
  std::string faulty, exact;
  {
    EnvGuard env({{"GAUNTLET_SIM_FAULTS", "op=aten::exp,kind=bias"}});
    faulty = config_from_env("sim-0.3.1", Numerics{}, "").version;
  }
  {
    EnvGuard env({{"GAUNTLET_SIM_NUMERICS", "none"}});
    exact = config_from_env("sim-0.3.1", Numerics{}, "").version;
  }
  EXPECT_EQ(faulty.rfind("sim-0.3.1+", 0), 0u) << faulty;
  EXPECT_EQ(exact.rfind("sim-0.3.1+", 0), 0u) << exact;
  EXPECT_NE(faulty, exact);
  {
    EnvGuard env({{"GAUNTLET_SIM_FAULTS", "op=aten::exp,kind=bias"}});
    EXPECT_EQ(config_from_env("sim-0.3.1", Numerics{}, "").version, faulty);  // stable
  }
  {
    EnvGuard env({{"GAUNTLET_SIM_FAULTS", "op=aten::exp,kind=bias"}, {"GAUNTLET_SIM_VERSION", "sim-0.4.0"}});
    Config c = config_from_env("sim-0.3.1", Numerics{}, "");
    EXPECT_EQ(c.version, "sim-0.4.0");
    EXPECT_NE(c.json().find("\"faults\":\"op=aten::exp,kind=bias\""), std::string::npos) << c.json();
  }
  {
    // A release with faults built in reports its own version unchanged.
    EnvGuard env({});
    Config c = config_from_env("sim-0.4.0", Numerics{}, "op=aten::mm,kind=slow,factor=1.5");
    EXPECT_EQ(c.version, "sim-0.4.0");
    EXPECT_EQ(c.faults.rules.size(), 1u);
  }
}

TEST(SimCostModel, LargerOfComputeAndMemoryPlusLaunch) {
  Work mm{Engine::Tensor, Precision::Low, 2.0 * 4096 * 4096 * 4096, 3.0 * 4096 * 4096 * 2};
  EXPECT_DOUBLE_EQ(seconds(mm), mm.flops / trn2::kTensorBf16Flops + trn2::kLaunchSeconds);
  Work add{Engine::Vector, Precision::Fp32, 1e6, 12e6};
  EXPECT_DOUBLE_EQ(seconds(add), 12e6 / trn2::kHbmBytesPerSec + trn2::kLaunchSeconds);
  Work up{Engine::HostToDevice, Precision::Fp32, 0, 32e9};
  EXPECT_DOUBLE_EQ(seconds(up), 1.0 + trn2::kHostLinkLatencySeconds);
  Work fp32 = mm;
  fp32.precision = Precision::Fp32;
  EXPECT_GT(seconds(fp32), 3 * seconds(mm));  // fp32 runs at a quarter-ish of the bf16 rate
}

}  // namespace
}  // namespace gauntlet::sim
