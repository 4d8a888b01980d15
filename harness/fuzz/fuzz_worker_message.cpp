// A line of the worker protocol (gauntlet/run/outcome_json.h), as the orchestrator reads what a worker
// (perhaps a dying one) wrote: parses, or throws std::runtime_error for a malformed result. A
// result's outcome written again (to_json_text) reads back to the same text.
#include <stdexcept>

#include "fuzz_target.h"
#include "gauntlet/run/outcome_json.h"
#include "gauntlet/run/worker_protocol.h"

GAUNTLET_FUZZ_TARGET(worker_message) {
  gauntlet::WorkerMessage m;
  try {
    m = gauntlet::parse_worker_message(data);
  } catch (const std::runtime_error& e) {
    gauntlet::fuzz::require_one_line(e.what());
    return;
  }
  if (m.type != "result") return;
  const std::string text = gauntlet::to_json_text(m.outcome);
  gauntlet::WorkerMessage again;
  try {
    again = gauntlet::parse_worker_message(R"({"type":"result","outcome":)" + text + "}");
  } catch (const std::runtime_error& e) {
    gauntlet::fuzz::require(false, "an outcome written does not read back: " + text + ": " + e.what());
  }
  gauntlet::fuzz::require(again.type == "result", "an outcome written reads back as '" + again.type + "': " + text);
  gauntlet::fuzz::require(gauntlet::to_json_text(again.outcome) == text,
                          "an outcome changed through write and read: " + text);
}
