// `gauntlet merge` (Note [Merging shards] in harness/run/merge.cpp): the shard databases of
// one run into one database. No torch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gauntlet/base/command_line.h"
#include "gauntlet/store/store.h"

namespace gauntlet {

struct MergedShards {
  std::size_t results = 0, databases = 0;
  std::int64_t run = 0;  // the merged run's id in the target
  std::string identity;  // what every shard shares ("suite smoke, release 'r1', ...")
  std::string shard;     // "merged K of N"
};
// Merges the one run of each database of `paths` into `into` (created when missing; opened with
// `mode`), into the run of the same identity there or a new one. Throws gauntlet::Error for a
// database that is missing, is `into`, holds other than one run, or holds another run's shards.
MergedShards merge_shards(const std::vector<std::string>& paths, const std::string& into, Store::OpenMode mode);

// `gauntlet merge`'s options (Note [Options beside their fields]).
struct MergeOptions {
  std::vector<std::string> inputs;
  std::string into;
  bool skip_db_check = false;
};
void describe_options(OptionSink& s, MergeOptions& o);
// Merges as `gauntlet merge` does; what it prints.
std::string merge_text(const MergeOptions& o);

}  // namespace gauntlet
