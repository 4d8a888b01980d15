#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <unordered_set>

#include "cli.h"
#include "gauntlet/backend.h"
#include "gauntlet/catalog.h"
#include "gauntlet/collective.h"
#include "gauntlet/environment.h"
#include "gauntlet/glob.h"
#include "gauntlet/runner.h"

extern char** environ;

namespace gauntlet::cli {

RunInfo new_run_info(const Backend& backend, const Suite& suite, const std::string& release,
                     const std::string& build_id, const std::string& filter) {
  RunInfo info;
  describe_environment(info);
  info.release = release;
  info.build_id = build_id;
  info.backend = backend.name();
  info.backend_version = backend.version();
  info.suite = suite.name;
  info.filter = filter;
  info.started_at = utc_now();
  return info;
}

std::optional<double> price_per_device_hour(const std::string& flag) {
  std::string text = flag, where = "--price-per-device-hour";
  if (text.empty()) {
    const char* env = std::getenv("GAUNTLET_PRICE_PER_DEVICE_HOUR");
    if (!env || !*env) return std::nullopt;
    text = env;
    where = "GAUNTLET_PRICE_PER_DEVICE_HOUR";
  }
  std::size_t used = 0;
  double v = 0;
  try {
    v = std::stod(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || !std::isfinite(v) || v <= 0) {
    throw UsageError(
        fmt::format("{} '{}': not a positive number (the price of one device-hour, e.g. 1.25)", where, text));
  }
  return v;
}

std::string suites_dir_or_default(const std::string& dir) { return dir.empty() ? default_suites_dir() : dir; }

// $GAUNTLET_FALLBACKS: where fallback_ops come from (Note [Dispatcher-derived fallbacks]):
// auto (default), backend or dispatcher. Read in every process, so workers follow their run.
FallbackSource fallback_source_from_env() {
  const char* env = std::getenv("GAUNTLET_FALLBACKS");
  const std::string v = env ? env : "";
  if (v.empty() || v == "auto") return FallbackSource::Auto;
  if (v == "backend") return FallbackSource::Backend;
  if (v == "dispatcher") return FallbackSource::Dispatcher;
  throw UsageError("$GAUNTLET_FALLBACKS='" + v + "': use auto, backend or dispatcher");
}

RunnerConfig runner_config(const ToleranceTable& tolerances, const Expectations& expectations,
                           const TimingOptions& timing, GoldenStore* golden_store, bool golden_add, bool golden_always,
                           const std::string& golden_release) {
  RunnerConfig cfg;
  cfg.tolerances = &tolerances;
  cfg.expectations = &expectations;
  cfg.fallback_source = fallback_source_from_env();
  cfg.min_reps = timing.reps;
  cfg.max_reps = timing.reps > 0 ? 1000 : 0;
  cfg.min_time_ms = timing.min_time_ms;
  cfg.max_time_ms = timing.max_time_ms;
  cfg.warmup = timing.warmup;
  cfg.golden_store = golden_store;
  cfg.golden_add = golden_add;
  cfg.golden_always = golden_always;
  cfg.golden_release = golden_release;
  if (golden_store) cfg.golden_reference = reference_identity();
  return cfg;
}

// Writes a report to `path` ("-": stdout); one that cannot be written is a UsageError
// (raised after the reports before it were written).
void enable_collectives(RunnerConfig& cfg, const std::string& backend, const std::string& suites_dir,
                        double timeout_s) {
  GroupConfig group;
  group.exe = self_exe();
  group.rank_args = {"--backend", backend};
  if (!suites_dir.empty()) group.rank_args.insert(group.rank_args.end(), {"--suites-dir", suites_dir});
  group.timeout_s = timeout_s;
  cfg.collective = [group](const CaseKey& key) { return run_collective_group(key, group); };
}

// Note [Recorded environment]: a backend's configuration often lives in environment variables
// (the simulator's GAUNTLET_SIM_FAULTS and GAUNTLET_SIM_NUMERICS, a vendor's compiler flags), and
// a case's verdict depends on them. A run records, in its config_json, the variables matching
// GAUNTLET_* (less the harness's own that judge nothing: kNotRecorded) and the globs of
// --record-env / $GAUNTLET_RECORD_ENV, with the patterns themselves, so that `repro --db` can set
// them again and unset those of the same patterns the run did not have.
namespace {
constexpr const char* kNotRecorded[] = {"GAUNTLET_PROFILE", "GAUNTLET_RECORD_ENV", "GAUNTLET_PRICE_PER_DEVICE_HOUR",
                                        "GAUNTLET_TODAY"};
}  // namespace

std::vector<std::string> record_env_patterns(const std::vector<std::string>& extra) {
  std::vector<std::string> patterns = {"GAUNTLET_*"};
  std::vector<std::string> more = extra;
  if (const char* env = std::getenv("GAUNTLET_RECORD_ENV"); env && *env) more.emplace_back(env);
  for (const std::string& list : more) {
    std::size_t pos = 0;
    while (pos <= list.size()) {
      std::size_t end = list.find_first_of(",:", pos);
      if (end == std::string::npos) end = list.size();
      const std::string p = list.substr(pos, end - pos);
      pos = end + 1;
      if (p.empty()) continue;
      if (p.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_*?") !=
          std::string::npos) {
        throw UsageError(
            fmt::format("--record-env '{}': a pattern is a variable name with '*' and '?' ('NEURON_*')", p));
      }
      if (std::find(patterns.begin(), patterns.end(), p) == patterns.end()) patterns.push_back(p);
    }
  }
  return patterns;
}

bool env_recorded(const std::string& name, const std::vector<std::string>& patterns) {
  for (const char* skip : kNotRecorded) {
    if (name == skip) return false;
  }
  return std::any_of(patterns.begin(), patterns.end(), [&](const std::string& p) { return glob_match(p, name); });
}

std::map<std::string, std::string> recorded_environment(const std::vector<std::string>& patterns) {
  std::map<std::string, std::string> out;
  for (char** e = environ; e && *e; ++e) {
    const std::string entry = *e;
    const std::size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    const std::string name = entry.substr(0, eq);
    if (env_recorded(name, patterns)) out[name] = entry.substr(eq + 1);
  }
  return out;
}

std::pair<int, int> parse_shard(const std::string& spec) {
  std::string s = spec;
  if (s.empty()) {
    const char* i = std::getenv("GTEST_SHARD_INDEX");
    const char* n = std::getenv("GTEST_TOTAL_SHARDS");
    if (!i || !n) return {0, 1};
    s = std::string(i) + "/" + n;
  }
  int index = -1, total = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%d/%d%c", &index, &total, &extra) != 2 || total < 1 || index < 0 || index >= total) {
    throw UsageError("bad shard '" + s + "': expected i/N with 0 <= i < N");
  }
  return {index, total};
}

KeyList read_keys_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(fmt::format("--keys-file {}: cannot read it", path));
  KeyList list;
  list.file = path;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::size_t from = line.find_first_not_of(" \t\r");
    if (from == std::string::npos || line[from] == '#') continue;
    const std::size_t to = line.find_last_not_of(" \t\r");
    std::string key = line.substr(from, to - from + 1);
    if (key.find_first_of(" \t") != std::string::npos) {
      throw UsageError(
          fmt::format("{}:{}: '{}' is not one case key (one key a line; '#' starts a comment line)", path, n, key));
    }
    list.keys.push_back(std::move(key));
    list.lines.push_back(n);
  }
  if (list.keys.empty()) throw UsageError(fmt::format("--keys-file {}: no key in it (one case key a line)", path));
  return list;
}

namespace {
// Every key of `keys` must be a case of the suite: a key file written for another suite, or an
// older one, is refused rather than run in part.
void check_keys(const Suite& suite, const KeyList& keys) {
  std::unordered_set<std::string_view> known;
  known.reserve(suite.cases.size());
  for (const Case& c : suite.cases) known.insert(c.text);
  std::size_t unknown = 0, first = 0;
  for (std::size_t i = 0; i < keys.keys.size(); ++i) {
    if (known.count(keys.keys[i])) continue;
    if (unknown++ == 0) first = i;
  }
  if (unknown == 0) return;
  const std::string where = keys.lines.empty() ? keys.file : fmt::format("{}:{}", keys.file, keys.lines[first]);
  throw UsageError(fmt::format("{}: {} is not a case of suite {}{}", where, keys.keys[first], suite.name,
                               unknown > 1 ? fmt::format(" (nor are {} more of its keys)", unknown - 1) : ""));
}
}  // namespace

std::vector<const Case*> keep_keys(const Suite& suite, const std::vector<const Case*>& cases, const KeyList& keys) {
  check_keys(suite, keys);
  PatternSet wanted;
  for (const std::string& k : keys.keys) wanted.add(k);
  std::vector<const Case*> kept;
  for (const Case* c : cases) {
    if (wanted.matches(c->text)) kept.push_back(c);
  }
  return kept;
}

std::vector<const Case*> select_cases(const Suite& suite, const std::string& filter_spec, const std::string& shard_spec,
                                      const KeyList* keys) {
  Filter filter = filter_spec.empty() ? Filter() : Filter(filter_spec);
  auto [shard, shards] = parse_shard(shard_spec);
  std::unordered_set<std::string_view> wanted;
  if (keys) {
    check_keys(suite, *keys);
    wanted.insert(keys->keys.begin(), keys->keys.end());
  }
  const auto selects = [&](const std::string& text) { return (!keys || wanted.count(text)) && filter.matches(text); };
  std::vector<const Case*> cases;
  for (std::size_t i = 0; i < suite.cases.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(shards)) != shard) continue;
    if (selects(suite.cases[i].text)) cases.push_back(&suite.cases[i]);
  }
  if (cases.empty()) {
    // Note [Empty shards]: a filter that selects nothing is a mistake; a shard that holds none of
    // what it selects is not (a 4-way CI split of a 1-case filter): as gtest does, it runs nothing
    // and exits 0, saying so in one line.
    std::size_t selected = 0;
    for (const Case& c : suite.cases) selected += selects(c.text);
    if (selected == 0) {
      throw UsageError(keys ? fmt::format("filter '{}' matches none of the keys of {}", filter_spec, keys->file)
                            : fmt::format("filter '{}' matches no case of suite {}", filter_spec, suite.name));
    }
    fmt::print(stderr,
               "gauntlet: note: shard {}/{} holds none of the {} case{} that {} selects from suite {}: nothing to do\n",
               shard, shards, selected, selected == 1 ? "" : "s",
               filter_spec.empty() ? std::string("the suite") : "filter '" + filter_spec + "'", suite.name);
  }
  return cases;
}

}  // namespace gauntlet::cli
