#include <fmt/format.h>

#include <algorithm>
#include <numeric>

#include "gauntlet/suites/coll_spec.h"

namespace gauntlet {

namespace {

constexpr DTypeSet kCollDTypes = dtype_bit(DType::F64) | dtype_bit(DType::F32) | dtype_bit(DType::BF16) |
                                 dtype_bit(DType::F16) | dtype_bit(DType::I64) | dtype_bit(DType::I32);

const std::vector<CollSpec>& table() {
  static const std::vector<CollSpec> t = [] {
    std::vector<CollSpec> v;
    v.push_back({"all_gather", "allgather", {}, true, false, false, kCollDTypes, "every rank's chunk to every rank"});
    v.push_back({"all_reduce",
                 "allreduce",
                 {"avg", "max", "min", "product", "sum"},
                 false,
                 false,
                 false,
                 kCollDTypes,
                 "avg: where the backend has it"});
    v.push_back({"all_to_all",
                 "alltoall_base",
                 {},
                 true,
                 false,
                 true,
                 kCollDTypes,
                 "chunk j of rank i to rank j; split=uneven: per-pair sizes differ"});
    v.push_back({"barrier", "barrier", {}, false, false, false, dtype_bit(DType::F32), "no data: size 1, dtype f32"});
    v.push_back({"broadcast", "broadcast", {}, false, true, false, kCollDTypes, "root's buffer to every rank"});
    v.push_back({"reduce_scatter",
                 "reduce_scatter",
                 {"avg", "max", "min", "product", "sum"},
                 true,
                 false,
                 false,
                 kCollDTypes,
                 "chunk r of the reduction to rank r"});
    v.push_back({"send_recv",
                 "send/recv",
                 {},
                 false,
                 false,
                 false,
                 kCollDTypes,
                 "a ring: rank r sends its buffer to r+1 and receives r-1's"});
    return v;
  }();
  return t;
}

bool is_float(DType d) { return contains(kFloatDTypes, d); }

}  // namespace

double CollSpec::bus_factor(int world) const {
  const double n = world;
  if (name == "all_reduce") return 2 * (n - 1) / n;
  if (name == "all_gather" || name == "reduce_scatter" || name == "all_to_all") return (n - 1) / n;
  return 1;  // broadcast, send_recv; barrier moves no data
}

const CollSpec* find_coll(const std::string& name) {
  for (const CollSpec& c : table()) {
    if (c.name == name) return &c;
  }
  return nullptr;
}

std::vector<const CollSpec*> all_colls() {
  std::vector<const CollSpec*> out;
  for (const CollSpec& c : table()) out.push_back(&c);
  return out;
}

std::optional<std::string> validate_coll_key(const CaseKey& key) {
  const CollSpec* c = find_coll(key.target);
  if (!c) return fmt::format("unknown collective '{}' (see gauntlet list --colls)", key.target);
  if (!contains(c->dtypes, key.dtype))
    return fmt::format("collective {} does not support dtype {} (supports {})", c->name, dtype_name(key.dtype),
                       dtype_set_str(c->dtypes));
  const std::int64_t n = key.shapes.at(0).at(0);
  if (n < 1) return fmt::format("collective {} needs at least 1 element", c->name);
  if (c->name == "barrier" && n != 1) return "barrier takes the size 1 (it moves no data)";
  if (c->chunked && n % key.world != 0)
    return fmt::format("collective {} splits its buffer into {} chunks: {} elements is not a multiple", c->name,
                       key.world, n);
  for (const auto& [name, value] : key.args) {
    if (name == "op" && !c->reduce_ops.empty()) {
      if (std::find(c->reduce_ops.begin(), c->reduce_ops.end(), value) == c->reduce_ops.end())
        return fmt::format("argument op of {}: '{}' is not one of {}", c->name, value, fmt::join(c->reduce_ops, ", "));
      if ((value == "avg") && !is_float(key.dtype)) return "argument op=avg needs a floating dtype";
    } else if (name == "root" && c->has_root) {
      if (value.empty() || !std::all_of(value.begin(), value.end(), ::isdigit) || std::stoi(value) >= key.world)
        return fmt::format("argument root of {}: '{}' is not a rank below {}", c->name, value, key.world);
    } else if (name == "split" && c->has_split) {
      if (value != "even" && value != "uneven")
        return fmt::format("argument split of {}: '{}' is not even or uneven", c->name, value);
    } else {
      return fmt::format("collective {} has no argument '{}'", c->name, name);
    }
  }
  if (!c->reduce_ops.empty() && !key.args.count("op"))
    return fmt::format("collective {} needs the argument op", c->name);
  return std::nullopt;
}

// Note [Uneven all_to_all]: rank r sends chunk j (to rank j) of size base + d(r, j) where the
// deltas cycle through -k..k over j so that they sum to zero: every rank's sends still add up to
// `elements`, but the sizes differ per pair (and some can be 0). Even: elements / world each.
std::vector<std::int64_t> all_to_all_splits(std::int64_t elements, int world, int rank, bool uneven) {
  const std::int64_t base = elements / world;
  std::vector<std::int64_t> s(static_cast<std::size_t>(world), base);
  if (!uneven || base == 0) return s;
  // Pairs (j, world-1-j) move base/2 * ((r + j) % 2 ? 1 : -1) between them.
  for (int j = 0; j < world / 2; ++j) {
    const std::int64_t d = (base / 2) * (((rank + j) % 2) ? 1 : -1);
    s[static_cast<std::size_t>(j)] += d;
    s[static_cast<std::size_t>(world - 1 - j)] -= d;
  }
  return s;
}

}  // namespace gauntlet
