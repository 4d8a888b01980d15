// The case key: the canonical, human-readable name of a case, and its stable 64-bit id.
// Grammar in docs/case-keys.md. print(parse(s)) == s for every canonical key.
#pragma once

#include <cstdint>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "gauntlet/base/dtype.h"
#include "gauntlet/base/error.h"

namespace gauntlet {

using Shape = std::vector<std::int64_t>;

// Tensor layouts the catalog can ask for (applied to every tensor input it fits).
enum class Layout : std::uint8_t { Contig, Transposed, Strided, ChannelsLast };
std::string_view layout_name(Layout l);  // contig, t, step2, cl

// Op cases: eager (forward, op by op), eager-bwd (forward and backward), compile (forward, the
// op as a one-op graph through the backend's compile path: docs/compile-path.md).
enum class Mode : std::uint8_t { Eager, EagerBwd, Compile };
std::string_view mode_name(Mode m);  // eager, eager-bwd, compile

// A malformed key: `pos` is the 0-based character offset of the problem.
class KeyError : public Error {
 public:
  KeyError(const std::string& key, std::size_t pos, const std::string& what);
  std::size_t pos() const { return pos_; }

 private:
  std::size_t pos_;
};

struct CaseKey final {
  std::string kind = "op";  // "op", "coll" (a collective over `world` ranks) or "model"
  std::string target;       // op name from the op table, e.g. "add"; a collective's name
  DType dtype = DType::F32;
  std::vector<Shape> shapes;  // one per tensor input; {} is a 0-d tensor
  Layout layout = Layout::Contig;
  Mode mode = Mode::Eager;  // op cases; coll cases are Eager and print their world size instead
  int world = 0;            // coll cases: ranks in the group (its mode field "w4"); 0 otherwise
  // model cases (Note [Model keys]): the size config and how it runs; mode Eager is "infer",
  // EagerBwd "train" (forward and backward).
  std::string config;                       // "tiny", "small", ...
  std::string exec;                         // "eager" (op by op) or "compile" (the backend's compile path)
  std::map<std::string, std::string> args;  // scalar arguments, sorted by name

  // The mode field as printed: "eager", "eager-bwd", "w4" for a collective over 4 ranks, "infer"
  // or "train" for a model.
  std::string mode_text() const;
  std::string str() const;                      // canonical text
  std::uint64_t id() const;                     // XXH64 of str(), seed 0
  static CaseKey parse(std::string_view text);  // throws KeyError

  bool operator==(const CaseKey& o) const { return str() == o.str(); }
};

std::uint64_t key_id(std::string_view canonical_key);
std::string shape_str(const Shape& s);  // "8x8", "_" for 0-d, "0x4" for empty
std::int64_t numel(const Shape& s);

}  // namespace gauntlet
