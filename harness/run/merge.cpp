// Note [Merging shards]: `gauntlet merge` puts the shard databases of one run into one database,
// idempotently. Shards of one run share suite, release, build, backend and its version, filter and
// shard count; anything else is refused, since a merged table of different runs would compare
// nothing with anything. The merged run's record (Note [Run record]) lists the shards merged and
// those that had not finished; it is finished when every shard merged so far is.
#include "gauntlet/run/merge.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "gauntlet/base/error.h"
#include "gauntlet/run/run_config.h"

namespace gauntlet {

namespace {

// "i/N" of a shard, "merged k of N" of a merged run -> "N".
std::string total_of(const std::string& shard) {
  if (shard.rfind("merged ", 0) == 0) return shard.substr(shard.rfind(' ') + 1);
  const std::size_t slash = shard.find('/');
  return slash == std::string::npos ? "1" : shard.substr(slash + 1);
}

// What every shard of one run shares.
std::string identity(const RunInfo& r) {
  return fmt::format("suite {}, release '{}', build '{}', backend {} {}, filter '{}', {} shards", r.suite, r.release,
                     r.build_id, r.backend, r.backend_version, r.filter, total_of(r.shard));
}

}  // namespace

MergedShards merge_shards(const std::vector<std::string>& paths, const std::string& into_path, Store::OpenMode mode) {
  struct Input {
    std::string path;
    RunInfo run;
  };
  std::vector<Input> inputs;
  for (const std::string& path : paths) {
    if (!std::filesystem::exists(path)) throw Error(path + ": no such database");
    if (std::filesystem::exists(into_path) && std::filesystem::equivalent(path, into_path)) {
      throw Error(path + " is the --into database");
    }
    auto store = Store::open(path, Store::OpenMode::ReadOnly);
    const auto runs = store->runs();
    if (runs.size() != 1) {
      throw Error(fmt::format("{}: holds {} runs; a shard database holds one", path, runs.size()));
    }
    inputs.push_back({path, runs.front()});
  }
  const std::string want = identity(inputs.front().run);
  for (const Input& in : inputs) {
    if (identity(in.run) != want) {
      throw Error(fmt::format("{} is another run ({}) than {} ({}): refusing to merge", in.path, identity(in.run),
                              inputs.front().path, want));
    }
  }
  auto into = Store::open(into_path, mode);
  std::optional<RunInfo> merged;
  for (const RunInfo& r : into->runs()) {
    if (identity(r) == want) merged = r;
  }
  if (!merged && !into->runs().empty()) {
    throw Error(fmt::format("{} holds another run ({}) than {} ({}): refusing to merge", into_path,
                            identity(into->runs().front()), inputs.front().path, want));
  }
  RunConfig config;  // Note [Run record]
  std::set<std::string> shards, unfinished;
  std::string last_finish;
  if (merged) {
    config = RunConfig::parse(merged->config_json);
    for (const auto& s : config.merged_shards.value_or(std::vector<std::string>{})) shards.insert(s);
    for (const auto& s : config.unfinished_shards.value_or(std::vector<std::string>{})) unfinished.insert(s);
    last_finish = merged->finished_at;
  } else {
    RunInfo info = inputs.front().run;
    info.id = 0;
    config = RunConfig::parse(info.config_json);
    info.id = into->begin_run(info);
    merged = info;
  }
  std::size_t rows = 0;
  for (const Input& in : inputs) {
    auto store = Store::open(in.path, Store::OpenMode::ReadOnly);
    for (const StoredResult& r : store->results(in.run.id)) {
      into->add_result(merged->id, CaseKey::parse(r.outcome.key), r.outcome);
      ++rows;
    }
    const std::string shard = in.run.shard.empty() ? "0/1" : in.run.shard;
    shards.insert(shard);
    if (in.run.started_at < merged->started_at || merged->started_at.empty()) merged->started_at = in.run.started_at;
    if (in.run.finished_at.empty()) {
      unfinished.insert(shard);
    } else {
      unfinished.erase(shard);
      last_finish = std::max(last_finish, in.run.finished_at);
    }
  }
  // The merged run is finished when every shard merged so far is (shards merged later may add
  // to it; a shard that did not finish leaves it unfinished until it is merged again, finished).
  merged->finished_at = unfinished.empty() ? last_finish : "";
  config.unfinished_shards = std::vector<std::string>(unfinished.begin(), unfinished.end());
  into->flush();
  config.merged_shards = std::vector<std::string>(shards.begin(), shards.end());
  merged->config_json = config.dump();
  merged->shard = fmt::format("merged {} of {}", shards.size(), total_of(inputs.front().run.shard));
  into->update_run(*merged);
  return {rows, inputs.size(), merged->id, want, merged->shard};
}

void describe_options(OptionSink& s, MergeOptions& o) {
  s.option("inputs", o.inputs, "shard databases").required();
  s.option("--into", o.into, "the database to merge into (created if missing)").required();
  describe_skip_db_check(s, o.skip_db_check);
}

std::string merge_text(const MergeOptions& o) {
  const MergedShards m = merge_shards(o.inputs, o.into, Store::write_mode(o.skip_db_check));
  return fmt::format("merged {} results from {} databases into {} (run {}: {}, {})\n", m.results, m.databases, o.into,
                     m.run, m.identity, m.shard);
}

}  // namespace gauntlet
