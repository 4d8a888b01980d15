// `gauntlet merge` (Note [Merging shards] in harness/src/run/merge.cpp): the shard databases of
// one run into one database. No torch here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "gauntlet/store.h"

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

}  // namespace gauntlet
