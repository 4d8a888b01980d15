// A run's configuration as its record keeps it (runs.config_json; Note [Run record] in
// harness/run/run_config.cpp): written once when a run begins, read back by `run --resume`,
// `repro --db`, `reduce`, `merge`, the gate and the run reporters. One type, one reader, one writer.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gauntlet/run/worker_protocol.h"

namespace gauntlet {

struct RunConfig {
  // What decides the run's cases.
  std::string suites_dir;                        // the folder the suite was read from
  std::optional<std::string> suite_file;         // the --suite given (absent: the run's suite name)
  std::optional<std::int64_t> cases;             // how many were selected (Note [Hollow runs])
  std::string plan, shard_spec;                  // --plan and --shard as given ("" for none)
  std::string keys_file;                         // --keys-file
  std::optional<std::vector<std::string>> keys;  // its keys, as the run was given them
  // How they are judged.
  std::optional<int> reps, warmup;  // the timing options (absent from a bench's record)
  std::optional<double> min_time_ms, max_time_ms;
  std::string golden_store, golden_release;
  std::string backend_profile;                     // what expectations and tolerances matched (--profile)
  nlohmann::json backend_config;                   // the backend's own object (null: not recorded)
  std::map<std::string, std::string> environment;  // Note [Recorded environment]
  std::vector<std::string> environment_patterns;   // empty: not recorded (a run stored before it)
  // A merged run's (`gauntlet merge`): the i/N of each shard merged, and those unfinished.
  std::optional<std::vector<std::string>> merged_shards, unfinished_shards;
  // Fields this type does not name (a bench's "bench" object), written back as they were read.
  nlohmann::json other = nlohmann::json::object();

  // Backend::config_json()'s text; text that is not JSON is not recorded.
  void set_backend_config(const std::string& config_json);
  void set_timing(const TimingOptions& t);
  // The recorded timing options over `t` (a field not recorded leaves t's).
  void apply_timing(TimingOptions& t) const;
  // The suites dir the run used, or "" when it was the default one.
  std::string custom_suites_dir() const;

  // Lenient: text that is not a JSON object, or a field of another type, reads as not recorded.
  static RunConfig parse(const std::string& config_json);
  std::string dump() const;
};

}  // namespace gauntlet
