// Which of a suite's cases one invocation runs: --filter, --shard i/N and --keys-file (Note [Filters
// at scale] in gauntlet/base/glob.h, Note [Empty shards] in harness/run/selection.cpp). Shared by
// run, list, golden, bench and reduce. Every bad input is a gauntlet::Error naming it (exit 2).
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gauntlet/run/suite.h"

namespace gauntlet {

// "i/N" (or GTEST_SHARD_INDEX / GTEST_TOTAL_SHARDS when `spec` is empty) -> {i, N}; {0, 1} for none.
std::pair<int, int> parse_shard(const std::string& spec);

// run --keys-file: exact case keys, one a line; blank lines and lines starting with '#' are
// skipped, spaces around a key trimmed. `lines`: the line of each key (empty for keys restored
// from a stored run).
struct KeyList {
  std::string file;
  std::vector<std::string> keys;
  std::vector<int> lines;
};
// Throws naming the file (and line) when it cannot be read, holds no key, or a line holds more
// than one word.
KeyList read_keys_file(const std::string& path);

// The suite's cases in `shard` that match `filter` and, when `keys` is given, are among them
// (every key must be a case of the suite: else an error naming the first that is not). A filter
// that matches nothing is an error; a shard that holds none of what it matches is empty, with a
// note on stderr (Note [Empty shards]).
std::vector<const Case*> select_cases(const Suite& suite, const std::string& filter, const std::string& shard,
                                      const KeyList* keys = nullptr);
// The cases of `cases` among `keys` (the keys checked against the suite as select_cases does).
std::vector<const Case*> keep_keys(const Suite& suite, const std::vector<const Case*>& cases, const KeyList& keys);

}  // namespace gauntlet
