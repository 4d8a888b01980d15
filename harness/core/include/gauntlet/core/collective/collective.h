// Collective cases (kind "coll", Note [Collective table] in coll_spec.h): a group of `world` rank
// processes meets on a loopback TCPStore, each rank runs the collective on its backend's device
// and judges its own output against an fp64 golden it computes from every rank's inputs (which it
// regenerates locally); the group's outcome aggregates the ranks and names the failing ones.
// Note [Collective groups] in harness/core/collective/coll_group.cpp, Note [Collective ranks] in
// harness/core/collective/collective.cpp, docs/collectives.md.
#pragma once

#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/outcome.h"
#include "gauntlet/core/backend/backend.h"
#include "gauntlet/core/cases/compare.h"
#include "gauntlet/core/catalog/catalog.h"

namespace gauntlet {

// ---- One rank (the `gauntlet rank` process)

struct RankConfig {
  const ToleranceTable* tolerances = nullptr;
  int warmup = 2;      // untimed iterations after the checked first call
  int min_reps = 5;    // timed iterations: at least, and until min_time_ms (rank 0 decides
  int max_reps = 200;  // for the group, so that every rank runs the same number)
  double min_time_ms = 20;
  double store_timeout_s = 30;    // Gloo's rendezvous and collective timeout
  double startup_timeout_s = 60;  // for every rank of the group to have started (Note [Group start-up])
};

// Runs rank `rank` of the case's group against the TCPStore at 127.0.0.1:`port`. The outcome's
// error starts with "rank <r>: " when it has one. Exceptions are classified here (Note
// [Collective outcomes]); a crash or hang of the process is the group's to see.
Outcome run_rank(const CaseKey& key, int rank, int port, Backend& backend, const RankConfig& cfg);

// Rank `rank`'s input buffer on the CPU in the case dtype, contiguous: deterministic from the key
// and the rank (Note [Collective inputs]).
at::Tensor coll_input(const CaseKey& key, int rank);
// The fp64 golden of rank `rank`'s output, from every rank's inputs (regenerated).
at::Tensor coll_golden(const CaseKey& key, int rank);
// Note [Collective tolerance]: the dtype's tolerance (tolerances.yaml may override it per
// collective, as per op), scaled for reductions by the rounding steps a ring reduction takes.
Tolerance coll_tolerance(const CaseKey& key, const Tolerance& base);

// ---- The group (run by `run` / `worker` / `repro` for a coll case)

struct GroupConfig {
  std::string exe;                     // the gauntlet binary
  std::vector<std::string> rank_args;  // after "rank": --backend B, --suites-dir D, timing
  double timeout_s = 30;               // the group once assembled: rendezvous, check and timing
  double startup_timeout_s = 60;       // for its processes to start and meet (Note [Group start-up])
  std::string log_dir;                 // ranks' stderr (empty: a temporary file per rank)
};

// Starts the group, waits for it within the timeout, tears it down (every rank process reaped,
// the store's port closed) and aggregates the ranks' outcomes: the worst status, every failing
// rank named, the worst metrics, the slowest rank's timing. A rank that dies is CRASH ("rank 2:
// SIGSEGV"), a group past its timeout TIMEOUT (the ranks that had not answered named; a group
// never assembled within startup_timeout_s names the ranks that never joined).
Outcome run_collective_group(const CaseKey& key, const GroupConfig& cfg);

}  // namespace gauntlet
