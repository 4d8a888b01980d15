// Note [Worker protocol]: the orchestrator writes case keys to the worker's stdin, one a line;
// the worker answers on stdout with JSON lines, each flushed before the worker waits or runs a
// case (a result may share a write with the next `start`, Note [One write per case] in
// core/session/worker_loop.cpp):
//   {"type":"hello","protocol":1,"pid":...,"backend":...,"backend_version":...}   once, ready
//   {"type":"start","key":K}                                                      before a case
//   {"type":"result","key":K,"outcome":{...}}                                     after it
//   {"type":"fatal","error":"..."}                                                cannot go on
// `start` is what lets the orchestrator name the case a worker died or hung in. Everything else a
// worker prints (libtorch warnings, a backend's logs) goes to stderr, whose last lines the
// orchestrator keeps with a crash. EOF on stdin ends the worker (exit 0). A worker's settings
// travel as its command line, written by worker_args() alone (`run`, `reduce` and `compare
// --confirm` each used to write their own).
#include "gauntlet/run/worker_protocol.h"

#include <fmt/format.h>
#include <simdjson.h>

#include <nlohmann/json.hpp>
#include <stdexcept>

#include "gauntlet/run/outcome_json.h"
#include "outcome_dom.h"

namespace gauntlet {

std::vector<std::string> worker_args(const WorkerSettings& s) {
  std::vector<std::string> args = {"--backend", s.backend};
  if (!s.suites_dir.empty()) args.insert(args.end(), {"--suites-dir", s.suites_dir});
  args.insert(args.end(),
              {"--collective-timeout", fmt::format("{:g}", s.collective_timeout), "--reps",
               std::to_string(s.timing.reps), "--min-time", fmt::format("{}", s.timing.min_time_ms), "--max-time",
               fmt::format("{}", s.timing.max_time_ms), "--warmup", std::to_string(s.timing.warmup)});
  if (!s.golden_store.empty()) args.insert(args.end(), {"--golden-store", s.golden_store});
  if (!s.golden_release.empty()) args.insert(args.end(), {"--golden-release", s.golden_release});
  if (s.golden_always) args.emplace_back("--golden-always");
  return args;
}

namespace {

WorkerMessageKind kind_of(std::string_view type) {
  if (type == "hello") return WorkerMessageKind::Hello;
  if (type == "start") return WorkerMessageKind::Start;
  if (type == "result") return WorkerMessageKind::Result;
  if (type == "fatal") return WorkerMessageKind::Fatal;
  return WorkerMessageKind::Other;
}

}  // namespace

WorkerMessage parse_worker_message(std::string_view line) {
  thread_local simdjson::dom::parser parser;
  WorkerMessage m;
  simdjson::dom::object obj;
  if (parser.parse(line.data(), line.size()).get(obj) != simdjson::SUCCESS) return m;
  std::string_view type;
  if (obj["type"].get_string().get(type) != simdjson::SUCCESS) return m;
  m.type = std::string(type);
  m.kind = kind_of(type);
  std::string_view text;
  if (obj["key"].get_string().get(text) == simdjson::SUCCESS) m.key = std::string(text);
  if (obj["error"].get_string().get(text) == simdjson::SUCCESS) m.error = std::string(text);
  if (m.kind == WorkerMessageKind::Result) {
    simdjson::dom::object outcome;
    if (obj["outcome"].get_object().get(outcome) != simdjson::SUCCESS) {
      throw std::runtime_error("result without an outcome object");
    }
    m.outcome = outcome_from_dom(outcome);
  }
  return m;
}

std::string hello_message(const WorkerHello& h) {
  const nlohmann::json j = {{"type", "hello"},
                            {"protocol", kWorkerProtocol},
                            {"pid", h.pid},
                            {"backend", h.backend},
                            {"backend_version", h.backend_version},
                            {"backend_profile", h.backend_profile},
                            {"backend_config", nlohmann::json::parse(h.backend_config_json, nullptr, false)}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string start_message(std::string_view key) {
  std::string m = "{\"type\":\"start\",\"key\":";
  append_json_string(m, key);
  m += '}';
  return m;
}

std::string result_message(std::string_view key, const Outcome& o) {
  std::string m = "{\"type\":\"result\",\"key\":";
  append_json_string(m, key);
  m += ",\"outcome\":";
  m += to_json_text(o);
  m += '}';
  return m;
}

std::string fatal_message(std::string_view error) {
  const nlohmann::json j = {{"type", "fatal"}, {"error", error}};
  return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

void describe_options(OptionSink& s, TimingOptions& t) {
  s.option("--reps", t.reps, "timed repetitions per case at least, after the first call (0: time the first call only)")
      .show_default();
  s.option("--min-time", t.min_time_ms, "repeat until the repetitions took this many ms").show_default();
  s.option("--max-time", t.max_time_ms, "stop repeating once the case took this many ms (wins over the others)")
      .show_default();
  s.option("--warmup", t.warmup, "untimed calls between the first call and the repetitions").show_default();
}

}  // namespace gauntlet
