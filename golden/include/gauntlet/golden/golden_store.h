// Note [Golden store]: precomputed goldens, content-addressed, versioned (docs/golden.md).
//
//   STORE/index.sqlite          which object holds the golden of (case id, method version,
//                               reference identity); manifests of frozen releases
//   STORE/objects/ab/<hash>.zst one golden: a small header (key, outputs' names, dtypes, shapes)
//                               and the outputs' raw fp64/int bytes, zstd-compressed; <hash> is
//                               the XXH3-128 of the uncompressed payload, checked on every read
//   STORE/manifests/<R>.json    the immutable list of entries release R was qualified with
//
// An entry is identified by (case key, golden method version, reference identity), where the
// reference identity names what computed it: libtorch version and the BLAS in use. A golden made
// by another method version or reference is never used in its place. One writer at a time;
// readers may share the folder read-only (NFS, or a synced copy on every host).
#pragma once

#include <torch/torch.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <unordered_map>
#include <vector>

#include "gauntlet/base/error.h"
#include "gauntlet/golden/execute.h"

struct sqlite3;

namespace gauntlet::sqlite {
class Stmt;
}

namespace gauntlet {

class GoldenStoreError : public Error {
 public:
  using Error::Error;
};

// Who computed a golden: "torch-1.13.0+openblas-pthread". Two hosts with the same identity and
// method version compute identical goldens.
std::string reference_identity();

struct GoldenEntry {
  std::string key;  // case key
  std::uint64_t case_id = 0;
  int method_version = 0;
  std::string reference;   // reference_identity() of the host that computed it
  std::string object;      // content hash (32 hex digits) = object file name
  std::int64_t bytes = 0;  // compressed size
  std::string created_at;
  double compute_us = 0;       // CPU time computing it took when it was stored (0: not measured)
  std::int64_t raw_bytes = 0;  // uncompressed payload size
};

// Note [Reading or recomputing]: reading a golden costs about a fixed 0.2 ms plus 2.5 ms per MB
// of payload (read, decompress, hash, copy into tensors; measured on the nightly suite), and many
// goldens (elementwise ops in fp64) compute faster than that. A run reads a stored golden only
// when the CPU time its computation took exceeds this estimate, unless asked to always read (a
// frozen release is always read: there correctness, not speed, decides).
inline double estimated_read_us(const std::int64_t raw_bytes) { return 200.0 + static_cast<double>(raw_bytes) / 400.0; }

// The result of reading one entry.
struct GoldenLookup {
  enum class State { Hit, Missing, Corrupt } state = State::Missing;
  std::vector<NamedTensor> outputs;  // on Hit
  GoldenEntry entry;                 // on Hit or Corrupt
  std::string problem;               // on Corrupt: what was wrong (checksum, truncated, ...)
};

class GoldenStore {
 public:
  enum class Mode { ReadOnly, ReadWrite };
  // Opens (ReadWrite: creates) a store folder. Throws GoldenStoreError naming the folder when it
  // is missing (ReadOnly), not a store, or of a newer layout version.
  static std::unique_ptr<GoldenStore> open(const std::string& dir, Mode mode);
  ~GoldenStore();

  const std::string& dir() const { return dir_; }

  // The golden of `key` for this method version and reference; with `release`, the entry that
  // release's manifest froze (whatever its method or reference). Objects are checked against
  // their hash: a corrupt one is reported, never returned.
  GoldenLookup get(const std::string& key, int method_version, const std::string& reference,
                   const std::string& release = "") const;
  // Writes (or replaces) the entry; the object is written to a temporary file and renamed, so a
  // reader never sees half an object. Returns the entry.
  GoldenEntry put(const std::string& key, int method_version, const std::string& reference,
                  const std::vector<NamedTensor>& outputs, double compute_us = 0);
  // The index row of an entry, without reading its object.
  std::optional<GoldenEntry> find(const std::string& key, int method_version, const std::string& reference) const;
  bool contains_valid(const std::string& key, int method_version, const std::string& reference) const;

  std::vector<GoldenEntry> entries() const;  // every entry, sorted by key
  // Reads and checks one entry's object; nullopt when intact, else the problem.
  std::optional<std::string> check(const GoldenEntry& e) const;
  std::vector<NamedTensor> load(const GoldenEntry& e) const;  // throws GoldenStoreError if corrupt

  // Freezes the entries of `keys` (current method version and reference) as release R's
  // manifest. Throws if R is already frozen (manifests are immutable) or a key has no entry.
  std::size_t freeze(const std::string& release, const std::vector<std::string>& keys, int method_version,
                     const std::string& reference);
  std::vector<std::string> releases() const;
  // Drops entries that no manifest references and whose key is not in `live_keys` or whose
  // method version differs from `method_version`; deletes objects nothing references.
  // Returns {entries dropped, objects deleted}.
  std::pair<std::size_t, std::size_t> gc(const std::vector<std::string>& live_keys, int method_version);

 private:
  GoldenStore(std::string dir, sqlite3* db, Mode mode);
  std::string object_path(const std::string& object) const;
  std::string dir_;
  sqlite3* db_;
  Mode mode_;
  // find() runs once per case of a run, where a SQLite read transaction (~30 us) would cost
  // more than the goldens it saves: a read-only store loads the index rows of a (method version,
  // reference) into memory on first use. Entries added by another process meanwhile are missed,
  // which only means computing those goldens. A writable store asks SQLite every time.
  mutable std::mutex find_mutex_;
  mutable std::unique_ptr<sqlite::Stmt> find_stmt_;
  mutable std::map<std::pair<int, std::string>, std::unordered_map<std::string, GoldenEntry>> snapshot_;
};

}  // namespace gauntlet
