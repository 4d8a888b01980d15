// Note [Run record]: what a run stores beside its counts and identity (runs.config_json, a JSON
// object: docs/database.md lists its fields): what decided its cases (the suite file and folder,
// the plan and shard, the keys file's keys, how many), and how they are judged (the timing
// options, the goldens, the backend's profile and configuration, the recorded environment: Note
// [Recorded environment]). `run --resume` takes back the first half (a resumed run runs the same
// cases), `repro --db` and `reduce --db` the second (Note [Repro from the record]); `merge` adds
// the shards it merged; the gate and the reporters read `cases`. RunConfig is the one reader and
// writer: a field is named here once. Reading is lenient (a run stored by an older Gauntlet lacks
// fields; a damaged record reads as empty) and keeps the fields it does not know.
#include "gauntlet/run/run_config.h"

#include "gauntlet/run/suite.h"

namespace gauntlet {

namespace {

using Json = nlohmann::json;

// The field `name` of `j` when it has type T, removing it from `j` either way.
template <typename T>
std::optional<T> take(Json& j, const char* name) {
  const auto it = j.find(name);
  if (it == j.end()) return std::nullopt;
  std::optional<T> v;
  if constexpr (std::is_same_v<T, std::string>) {
    if (it->is_string()) v = it->template get<std::string>();
  } else if constexpr (std::is_same_v<T, std::int64_t> || std::is_same_v<T, int>) {
    if (it->is_number_integer()) v = it->template get<T>();
  } else if constexpr (std::is_same_v<T, double>) {
    if (it->is_number()) v = it->template get<double>();
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (it->is_array()) {
      v.emplace();
      for (const Json& e : *it) {
        if (e.is_string()) v->push_back(e.get<std::string>());
      }
    }
  } else if constexpr (std::is_same_v<T, std::map<std::string, std::string>>) {
    if (it->is_object()) {
      v.emplace();
      for (const auto& [k, e] : it->items()) {
        if (e.is_string()) (*v)[k] = e.template get<std::string>();
      }
    }
  } else {
    v = *it;
  }
  j.erase(it);
  return v;
}

template <typename T>
void put(Json& j, const char* name, const std::optional<T>& v) {
  if (v) j[name] = *v;
}

}  // namespace

void RunConfig::set_backend_config(const std::string& config_json) {
  backend_config = Json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (backend_config.is_discarded()) backend_config = Json();
}

void RunConfig::set_timing(const TimingOptions& t) {
  reps = t.reps;
  min_time_ms = t.min_time_ms;
  max_time_ms = t.max_time_ms;
  warmup = t.warmup;
}

void RunConfig::apply_timing(TimingOptions& t) const {
  t.reps = reps.value_or(t.reps);
  t.min_time_ms = min_time_ms.value_or(t.min_time_ms);
  t.max_time_ms = max_time_ms.value_or(t.max_time_ms);
  t.warmup = warmup.value_or(t.warmup);
}

std::string RunConfig::custom_suites_dir() const { return suites_dir == default_suites_dir() ? "" : suites_dir; }

RunConfig RunConfig::parse(const std::string& config_json) {
  RunConfig c;
  Json j = Json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  if (!j.is_object()) return c;
  c.suites_dir = take<std::string>(j, "suites_dir").value_or("");
  c.suite_file = take<std::string>(j, "suite_file");
  c.cases = take<std::int64_t>(j, "cases");
  c.plan = take<std::string>(j, "plan").value_or("");
  c.shard_spec = take<std::string>(j, "shard_spec").value_or("");
  c.keys_file = take<std::string>(j, "keys_file").value_or("");
  c.keys = take<std::vector<std::string>>(j, "keys");
  c.reps = take<int>(j, "reps");
  c.warmup = take<int>(j, "warmup");
  c.min_time_ms = take<double>(j, "min_time_ms");
  c.max_time_ms = take<double>(j, "max_time_ms");
  c.golden_store = take<std::string>(j, "golden_store").value_or("");
  c.golden_release = take<std::string>(j, "golden_release").value_or("");
  c.backend_profile = take<std::string>(j, "backend_profile").value_or("");
  c.backend_config = take<Json>(j, "backend_config").value_or(Json());
  c.environment = take<std::map<std::string, std::string>>(j, "environment").value_or(c.environment);
  c.environment_patterns = take<std::vector<std::string>>(j, "environment_patterns").value_or(c.environment_patterns);
  c.merged_shards = take<std::vector<std::string>>(j, "merged_shards");
  c.unfinished_shards = take<std::vector<std::string>>(j, "unfinished_shards");
  c.other = std::move(j);
  return c;
}

std::string RunConfig::dump() const {
  Json j = other.is_object() ? other : Json::object();
  j["suites_dir"] = suites_dir;
  put(j, "suite_file", suite_file);
  put(j, "cases", cases);
  j["plan"] = plan;
  j["shard_spec"] = shard_spec;
  if (keys) {
    j["keys_file"] = keys_file;
    j["keys"] = *keys;
  }
  put(j, "reps", reps);
  put(j, "warmup", warmup);
  put(j, "min_time_ms", min_time_ms);
  put(j, "max_time_ms", max_time_ms);
  j["golden_store"] = golden_store;
  j["golden_release"] = golden_release;
  j["backend_profile"] = backend_profile;
  if (!backend_config.is_null()) j["backend_config"] = backend_config;
  j["environment"] = environment;
  j["environment_patterns"] = environment_patterns;
  put(j, "merged_shards", merged_shards);
  put(j, "unfinished_shards", unfinished_shards);
  return j.dump();
}

}  // namespace gauntlet
