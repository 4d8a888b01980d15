// `gauntlet rank` (defined in harness/core/collective/collective.cpp beside run_rank). No torch here: the
// command line's options include it.
#pragma once

#include <string>

#include "gauntlet/base/command_line.h"

namespace gauntlet {

// `gauntlet rank`: one rank of a collective case's group (Note [Collective groups]), started by
// the group. Its options (Note [Options beside their fields]).
struct RankOptions {
  std::string key, backend = "cpu", suites_dir;
  int rank = 0, port = 0;
  double store_timeout = 20;
  double startup_timeout = 60;
};
void describe_options(OptionSink& s, RankOptions& o);
// Dies with its parent (a group never outlives whoever started it), loads the tolerances and the
// backend, runs the rank; its outcome as the JSON line the group reads.
std::string rank_process(const RankOptions& o);

}  // namespace gauntlet
