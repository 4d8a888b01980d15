// The golden store's maintenance (`gauntlet golden build | verify`; Note [Golden store] in
// golden/src/golden_store.cpp): computing the goldens a store lacks, and checking a store's
// objects and a sample of its goldens against this host. Results as values; the command prints.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "gauntlet/base/case_key.h"
#include "gauntlet/golden/golden_store.h"

namespace gauntlet {

// Called as work proceeds: `done` of `total`, and what is being done.
using GoldenProgress = std::function<void(std::size_t done, std::size_t total, const char* what)>;

struct GoldenBuild {
  std::size_t cases = 0, computed = 0, reused = 0;  // reused: already stored, or nothing to store
  std::vector<std::string> failures;                // "KEY: why" of each case whose golden cannot be computed, sorted
  double seconds = 0;
};
// Computes the golden of each op case of `keys` that `store` lacks for this method version and
// reference (incremental), on `workers` threads, each timed in its thread's CPU time; writes are
// serialised. A collective's golden is computed by its ranks (nothing to store). A golden that
// cannot be computed (the CPU op raises even in fp64) is a failure listed, not an error.
GoldenBuild build_goldens(GoldenStore& store, const std::vector<CaseKey>& keys, int workers,
                          const GoldenProgress& progress = {});

struct GoldenVerify {
  std::size_t entries = 0, sampled = 0;
  std::vector<std::string> corrupt;  // "KEY  object OBJ: problem"
  std::vector<std::string> drifted;  // "KEY\n  stored by ..., now ...: difference"
};
// Checks every object of `store`, then recomputes a deterministic sample (`sample` entries drawn
// with `seed`; negative: all) with this host's reference and compares.
GoldenVerify verify_goldens(const GoldenStore& store, long long sample, std::uint64_t seed,
                            const GoldenProgress& progress = {});

// The largest difference between two goldens, or "" when they agree to within 1e-12 relative
// (and in their NaN and Inf patterns).
std::string golden_difference(const std::vector<NamedTensor>& stored, const std::vector<NamedTensor>& now);

}  // namespace gauntlet
