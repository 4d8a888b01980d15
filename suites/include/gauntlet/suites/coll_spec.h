// Note [Collective table]: the collectives the harness runs as cases (kind "coll", Note
// [Collective keys] in case_key.cpp), what each takes and promises, without torch. How a rank
// runs one lives in harness/core/collective/collective.cpp.
//
// Sizes follow nccl-tests: the key's one shape is the element count of the largest buffer a rank
// holds: the buffer of all_reduce and broadcast, the gathered output of all_gather, the input of
// reduce_scatter and all_to_all (world chunks), the message of each send/recv hop. Collectives that
// split it into world chunks need it divisible by the world size.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/base/dtype.h"

namespace gauntlet {

struct CollSpec {
  std::string name;                     // the key's target: all_reduce, all_gather, ...
  std::string c10d;                     // the ProcessGroup call it exercises: allreduce, ...
  std::vector<std::string> reduce_ops;  // sum, max, ...: the `op` argument (empty: none)
  bool chunked = false;                 // the buffer is world chunks: size % world == 0
  bool has_root = false;                // broadcast: the `root` argument (default 0)
  bool has_split = false;               // all_to_all: the `split` argument, even | uneven
  DTypeSet dtypes;
  // nccl-tests' bus bandwidth factor: busbw = algbw * factor(world), so that busbw compares
  // with the link bandwidth whatever the collective and the world size.
  double bus_factor(int world) const;
  std::string note;
};

const CollSpec* find_coll(const std::string& name);
std::vector<const CollSpec*> all_colls();  // sorted by name

// Checks a coll key against its collective (dtype, size divisible by the world, arguments).
std::optional<std::string> validate_coll_key(const CaseKey& key);

// The element counts a rank sends to each rank in all_to_all with split=uneven: rank r sends
// chunk sizes that differ per destination and sum to `elements` (Note [Uneven all_to_all]).
std::vector<std::int64_t> all_to_all_splits(std::int64_t elements, int world, int rank, bool uneven);

}  // namespace gauntlet
