// `gauntlet reduce` end to end: the real binary, real worker processes, the simulator with an
// injected fault (docs/simulator.md), and what a user reads (docs/repro.md, Reduction).
#include <gtest/gtest.h>

#include <cstdint>
#include <iostream>
#include <nlohmann/json.hpp>
#include <string>

#include "e2e_support.h"

namespace {

using e2e::Result;
namespace fs = std::filesystem;

// Exact numerics: only the injected fault makes a case fail.
constexpr const char* kExact = "GAUNTLET_SIM_NUMERICS=none ";
constexpr const char* kBias64 = "GAUNTLET_SIM_FAULTS='op=aten::add*,kind=bias,min_numel=64' ";

std::string line_starting(const std::string& text, const std::string& prefix) {
  std::size_t pos = 0;
  while (pos < text.size()) {
    const std::size_t end = text.find('\n', pos);
    std::string line = text.substr(pos, end == std::string::npos ? std::string::npos : end - pos);
    if (line.rfind(prefix, 0) == 0) return line;
    if (end == std::string::npos) break;
    pos = end + 1;
  }
  return "";
}

class ReduceE2E : public e2e::E2E {
 protected:
  // The printed repro command, run with this build's binary.
  Result run_printed_repro(const std::string& repro) {
    const std::string word = "gauntlet repro ";
    const std::size_t at = repro.find(word);
    EXPECT_NE(at, std::string::npos) << repro;
    if (at == std::string::npos) return {};
    return gauntlet(repro.substr(at + std::string("gauntlet ").size()), repro.substr(0, at));
  }
};

// The done-when case: a bias that needs 64 elements reduces to exactly 64 (4x16 or 8x8, from
// 16x16), and fails there the same way; the printed repro reproduces it.
TEST_F(ReduceE2E, BiasFaultFromSixtyFourElementsReducesToExactlySixtyFour) {
  const Result r =
      gauntlet("reduce 'op/add/f32/16x16,16x16/contig/eager' --backend sim --json", std::string(kExact) + kBias64);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["original"]["status"], "FAIL");
  EXPECT_EQ(j["original"]["largest_input_elements"], 256);
  EXPECT_EQ(j["smallest"]["largest_input_elements"], 64) << j.dump(1);
  EXPECT_EQ(j["smallest"]["status"], "FAIL");
  EXPECT_EQ(j["smallest"]["signature"], j["original"]["signature"]);
  EXPECT_EQ(j["smallest"]["signature"], "FAIL (out0 out of tolerance)");
  EXPECT_TRUE(j["reduced"].get<bool>());
  EXPECT_FALSE(j["budget_spent"].get<bool>());
  EXPECT_FALSE(j["strategy"].get<std::string>().empty());
  const auto& cost = j["cost"];
  EXPECT_GT(cost["candidates"].get<int>(), 0);
  EXPECT_EQ(cost["candidates"].get<int>(),
            cost["failed_same_way"].get<int>() + cost["passed"].get<int>() + cost["other"].get<int>());
  EXPECT_GE(cost["failed_same_way"].get<int>(), 2);  // 16x16 -> 8x16 -> 64 elements
  EXPECT_GT(cost["passed"].get<int>(), 0);           // below 64 the fault is off
  std::cout << "[ measured ] bias: " << j["original"]["shapes"].get<std::string>() << " -> "
            << j["smallest"]["shapes"].get<std::string>() << ", " << cost.dump() << "\n";

  const std::string repro = j["repro"].get<std::string>();
  EXPECT_NE(repro.find("GAUNTLET_SIM_FAULTS="), std::string::npos) << repro;
  EXPECT_NE(repro.find(j["smallest"]["key"].get<std::string>()), std::string::npos) << repro;
  const Result again = run_printed_repro(repro);
  EXPECT_EQ(again.code, 1) << again.out << again.err;
  EXPECT_NE(again.out.find("verdict  FAIL"), std::string::npos) << again.out;
}

// A crash anywhere in mm: the case reduces in worker processes (each candidate's crash costs its
// worker) to the smallest mm there is, K shared by both inputs all the way; the text output
// names the strategy and its cost.
TEST_F(ReduceE2E, CrashInjectedOpReducesToASmallerCrashingCase) {
  const Result r = gauntlet("reduce 'op/mm/f32/8x16,16x4/contig/eager' --backend sim",
                            std::string(kExact) + "GAUNTLET_SIM_FAULTS='op=aten::mm,kind=segv' ");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  EXPECT_NE(r.out.find("fails    CRASH (SIGSEGV)"), std::string::npos) << r.out;
  EXPECT_NE(line_starting(r.out, "strategy ").find("greedy"), std::string::npos) << r.out;
  EXPECT_NE(line_starting(r.out, "smallest op/mm/f32/1x1,1x1/contig/eager").size(), 0u) << r.out;
  EXPECT_NE(line_starting(r.out, "verdict  CRASH").size(), 0u) << r.out;
  const std::string cost = line_starting(r.out, "cost     ");
  EXPECT_NE(cost.find("candidates tried"), std::string::npos) << r.out;
  std::cout << "[ measured ] crash: " << cost << "\n";
  EXPECT_NE(line_starting(r.out, "repro    GAUNTLET_SIM_FAULTS=").find("op/mm/f32/1x1,1x1/contig/eager"),
            std::string::npos)
      << r.out;
}

// From the record: a stored run with the fault in its environment reduces without it in ours
// (repro --db's restore), to a case still at least 64 elements (1-minimal: 5x13 from 17x31).
TEST_F(ReduceE2E, FromAStoredRunRestoresItsFaults) {
  const fs::path db = dir_ / "r.db";
  const Result run = gauntlet(
      "run --suite smoke --backend sim --quiet --db " + db.string() + " --filter 'op/add/f32/17x31,17x31/contig/eager'",
      std::string(kExact) + kBias64);
  ASSERT_EQ(run.code, 0) << run.err;
  const Result r = gauntlet("reduce 'op/add/f32/17x31,17x31/contig/eager' --db " + db.string() + " --run 1 --json");
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["backend"], "sim");
  EXPECT_EQ(j["restored_from"]["run"], 1);
  EXPECT_EQ(j["smallest"]["status"], "FAIL");
  const std::int64_t n = j["smallest"]["largest_input_elements"].get<std::int64_t>();
  EXPECT_GE(n, 64);
  EXPECT_LT(n, 527);
  std::cout << "[ measured ] from the record: 17x31,17x31 -> " << j["smallest"]["shapes"].get<std::string>() << ", "
            << j["cost"].dump() << "\n";
}

// Note [Model reduction]: a model case that fails in its convolutions is taken to its first
// divergent node, the node's recorded call becomes an op case (every argument kept: padding and
// stride), that op case fails on its own and is reduced; the printed repro reproduces the smallest.
TEST_F(ReduceE2E, AModelCaseIsTakenToItsFirstDivergentNodesOpCaseAndThatIsReduced) {
  const std::string env = std::string(kExact) + "GAUNTLET_SIM_FAULTS='op=aten::*conv*,kind=bias,factor=0.5' ";
  const Result r = gauntlet("reduce 'model/resnet_block/f32/tiny/eager/infer' --backend sim --json", env);
  ASSERT_EQ(r.code, 0) << r.out << r.err;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const auto& m = j["model"];
  EXPECT_EQ(m["key"], "model/resnet_block/f32/tiny/eager/infer");
  EXPECT_EQ(m["status"], "FAIL");
  EXPECT_EQ(m["divergent_node"].get<std::string>().rfind(
                "aten::conv2d (resnet_block.py:51) inputs [2, 4, 8, 8], [8, 4, 3, 3]: ", 0),
            0u)
      << m.dump(1);
  ASSERT_EQ(m["op_cases"].size(), 1u) << m.dump(1);
  EXPECT_EQ(m["op_cases"][0]["key"], "op/conv2d/f32/2x4x8x8,8x4x3x3/contig/eager/padding=1:1,stride=2:2");
  EXPECT_EQ(m["op_cases"][0]["status"], "FAIL");
  EXPECT_EQ(j["original"]["key"], m["op_cases"][0]["key"]);
  EXPECT_EQ(j["smallest"]["status"], "FAIL");
  EXPECT_EQ(j["smallest"]["signature"], j["original"]["signature"]);
  EXPECT_TRUE(j["reduced"].get<bool>());
  EXPECT_LT(j["smallest"]["elements"].get<std::int64_t>(), j["original"]["elements"].get<std::int64_t>());
  const std::string smallest = j["smallest"]["key"].get<std::string>();
  EXPECT_NE(smallest.find("/padding=1:1,stride=2:2"), std::string::npos) << smallest;
  std::cout << "[ measured ] model: " << m["op_cases"][0]["key"].get<std::string>() << " -> " << smallest << ", "
            << j["cost"].dump() << "\n";
  const Result again = run_printed_repro(j["repro"].get<std::string>());
  EXPECT_EQ(again.code, 1) << again.out << again.err;
  EXPECT_NE(again.out.find("verdict  FAIL"), std::string::npos) << again.out;

  // The text form says where it started.
  const Result t = gauntlet("reduce 'model/transformer_encoder/f32/tiny/eager/infer' --backend sim --max-candidates 3",
                            std::string(kExact) + "GAUNTLET_SIM_FAULTS='op=aten::gelu*,kind=bias,factor=0.5' ");
  ASSERT_EQ(t.code, 0) << t.out << t.err;
  EXPECT_NE(line_starting(t.out, "node     aten::gelu (transformer_encoder.py:52) inputs [2, 4, 16]: ").size(), 0u)
      << t.out;
  EXPECT_NE(line_starting(t.out, "op case  op/gelu/f32/2x4x16/contig/eager: FAIL on its own").size(), 0u) << t.out;
  EXPECT_NE(line_starting(t.out, "reduce   op/gelu/f32/2x4x16/contig/eager on sim").size(), 0u) << t.out;
}

TEST_F(ReduceE2E, BadInputIsAOneLineErrorAndExitTwo) {
  expect_one_line_error(gauntlet("reduce 'op/nosuchop/f32/8/contig/eager' --backend sim"), "unknown op 'nosuchop'");
  expect_one_line_error(gauntlet("reduce 'op/add/f32/8x'"), "gauntlet: error:");
  // No fault: the case passes.
  expect_one_line_error(gauntlet("reduce 'op/add/f32/16x16,16x16/contig/eager' --backend sim", kExact),
                        "case passes; nothing to reduce");
  // Below the fault's 64 elements: passes too.
  expect_one_line_error(
      gauntlet("reduce 'op/add/f32/4x4,4x4/contig/eager' --backend sim", std::string(kExact) + kBias64),
      "case passes; nothing to reduce");
  expect_one_line_error(gauntlet("reduce 'model/resnet_block/f32/tiny/eager/infer' --backend sim", kExact),
                        "case passes; nothing to reduce");
  // A model that crashes names no divergent node to start from.
  expect_one_line_error(gauntlet("reduce 'model/transformer_encoder/f32/tiny/eager/infer' --backend sim",
                                 std::string(kExact) + "GAUNTLET_SIM_FAULTS='op=aten::gelu*,kind=segv' "),
                        "only a model case that FAILs names the first divergent node");
  expect_one_line_error(gauntlet("reduce 'coll/all_reduce/f32/64/contig/w2/op=sum' --backend sim"),
                        "collective cases are not reduced");
  expect_one_line_error(gauntlet("reduce 'op/add/f32/8,8/contig/eager' --workers 0"), "--workers");
}

}  // namespace
