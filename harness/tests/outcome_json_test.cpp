// The worker's fast JSON writer (to_json_text) against the JSON library's (to_json).
#include "gauntlet/run/outcome_json.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "gauntlet/run/worker_protocol.h"

namespace gauntlet {
namespace {

Outcome varied() {
  Outcome o;
  o.key = "op/add/f32/8x8,8x8/contig/eager/alpha=2.5";
  o.status = Status::Fail;
  o.attempt = 2;
  o.rtol = 1.3e-6;
  o.atol = 1e-5;
  o.tolerance_profile = "sim:tolerances.yaml:94";
  o.metrics.max_abs_err = 0.1 + 0.2;  // shortest round-trip form needed
  o.metrics.max_rel_err = std::numeric_limits<double>::infinity();
  o.metrics.mismatches = 3;
  o.metrics.numel = std::int64_t{1} << 40;
  o.metrics.max_ulp = std::numeric_limits<double>::quiet_NaN();
  o.metrics.nan_inf_ok = false;
  o.metrics.worst = "grad.self[3]";
  o.error = "RuntimeError: \"quoted\" \\ back\nline two\r\n\t\x01\x1f <script>x</script> \xc3\xbc bad \xff utf8";
  o.reason = "xfail: known";
  o.timing = {123.5, 45.25, 40.0, -std::numeric_limits<double>::infinity(),
              0.125, 17,    3.0,  {45.25, 1e-300, 5e-324, 1.7976931348623157e308}};
  o.peak_mem_bytes = 12345678901;
  o.fallback_ops = {"aten::cumsum.out", "weird \"op\"\n"};
  o.executed_ops = {
      executed_op_text({"aten::_convolution", "input=f32[1,3,8,8]@[192,1,24,3], stride=[2,2], mode='reflect'", 3}),
      executed_op_text({"aten::relu_", "self=f32[4]+2", 1})};
  o.golden_source = "store";
  o.golden_entry = "abc";
  o.sim_time_us = 0.5;
  o.device_slot = "3";
  o.flaky = true;
  o.work_items = std::int64_t{1} << 41;
  return o;
}

TEST(OutcomeJson, TheFastWriterWritesWhatTheJsonLibraryWrites) {
  for (Outcome o : {varied(), Outcome{}}) {
    // What the worker used to send: the library's text, invalid UTF-8 replaced.
    const std::string library = to_json(o).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    EXPECT_EQ(nlohmann::json::parse(to_json_text(o)), nlohmann::json::parse(library)) << to_json_text(o) << "\n"
                                                                                      << library;
  }
}

TEST(OutcomeJson, TheFastWriterRoundTrips) {
  const Outcome want = varied();
  const Outcome got = outcome_from_json(nlohmann::json::parse(to_json_text(want)));
  EXPECT_EQ(got.metrics.max_abs_err, want.metrics.max_abs_err);
  EXPECT_EQ(got.timing.samples_us, want.timing.samples_us);
  EXPECT_EQ(got.metrics.numel, want.metrics.numel);
  EXPECT_TRUE(std::isnan(got.metrics.max_ulp));
  EXPECT_EQ(got.fallback_ops, want.fallback_ops);
  EXPECT_EQ(got.executed_ops, want.executed_ops);
  EXPECT_EQ(got.sim_time_us, want.sim_time_us);
  EXPECT_EQ(got.work_items, want.work_items);
}

TEST(OutcomeJson, TheOrchestratorReadsWhatTheWorkerWrites) {
  for (const Outcome& want : {varied(), Outcome{}}) {
    const std::string line = "{\"type\":\"result\",\"key\":\"k\",\"outcome\":" + to_json_text(want) + "}";
    const WorkerMessage m = parse_worker_message(line);
    EXPECT_EQ(m.type, "result");
    EXPECT_EQ(m.key, "k");
    // The same as the JSON library reads from the same text.
    const Outcome lib = outcome_from_json(nlohmann::json::parse(to_json_text(want)));
    EXPECT_EQ(to_json_text(m.outcome), to_json_text(lib));
  }
  EXPECT_EQ(parse_worker_message("not json").type, "");
  EXPECT_EQ(parse_worker_message("{\"type\":\"fatal\",\"error\":\"no backend\"}").error, "no backend");
  EXPECT_THROW(parse_worker_message(R"({"type":"result","key":"k","outcome":{"status":"PASS","rtol":[]}})"),
               std::runtime_error);
  EXPECT_THROW(parse_worker_message(R"({"type":"result","key":"k"})"), std::runtime_error);
}

TEST(ExecutedOps, RecordsRoundTripAndBadOnesAreRefused) {
  const ExecutedOp e{"aten::conv2d", "input=f32[1,3,224,224], weight=f32[64,3,7,7], bias=None, stride=[2,2]", 12};
  const auto back = parse_executed_op(executed_op_text(e));
  ASSERT_TRUE(back);
  EXPECT_EQ(back->op, e.op);
  EXPECT_EQ(back->inputs, e.inputs);
  EXPECT_EQ(back->calls, 12);
  EXPECT_TRUE(parse_executed_op("aten::ones\t\t1"));  // no inputs
  EXPECT_FALSE(parse_executed_op("aten::add"));
  EXPECT_FALSE(parse_executed_op("aten::add\tx"));
  EXPECT_FALSE(parse_executed_op("aten::add\tx\t0"));
  EXPECT_FALSE(parse_executed_op("aten::add\tx\t3z"));
  EXPECT_FALSE(parse_executed_op("\tx\t3"));
}

TEST(OutcomeJson, StringsAreEscaped) {
  std::string out;
  append_json_string(out, "a\"b\\c\n\x02");
  EXPECT_EQ(out, R"("a\"b\\c\n\u0002")");
}

}  // namespace
}  // namespace gauntlet
