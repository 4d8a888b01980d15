// gauntlet merge: the shard databases of one run into one database (Note [Merging shards] in
// harness/src/run/merge.cpp).
#include "gauntlet/run/merge.h"

#include <fmt/format.h>

#include "cli.h"

namespace gauntlet::cli {

int merge(const MergeOptions& o) {
  const MergedShards m = merge_shards(o.inputs, o.into, write_mode(o.skip_db_check));
  fmt::print("merged {} results from {} databases into {} (run {}: {}, {})\n", m.results, m.databases, o.into, m.run,
             m.identity, m.shard);
  return 0;
}

}  // namespace gauntlet::cli
