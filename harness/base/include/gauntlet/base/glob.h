// gtest-style filters on case keys: "POS1:POS2:-NEG1:NEG2" (or "-NEG1:NEG2"), where each
// pattern is a glob with '*' (any run of characters, '/' included) and '?' (one character).
// Unlike gtest, a '-' starts the negative part only at the start or right after ':', because
// keys themselves contain '-' (eager-bwd, dim=-1).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_set>
#include <utility>
#include <vector>

namespace gauntlet {

bool glob_match(std::string_view pattern, std::string_view text);

// Note [Filters at scale]: a filter may hold thousands of patterns (a list of failing keys pasted
// from a report, `run --keys-file`). Matching a key costs about the same whatever their number:
// literal patterns (no '*' or '?') are one hash lookup; globs hang in a trie of their literal
// prefixes (the text before the first wildcard), so a key walks the trie once, character by
// character, and only the globs whose prefix it starts with are ever run.
class PatternSet {
 public:
  void add(std::string pattern);
  bool matches(std::string_view key) const;
  bool empty() const { return size_ == 0; }
  std::size_t size() const { return size_; }

 private:
  struct Node {
    std::vector<std::pair<char, std::uint32_t>> next;  // children by character
    std::vector<std::uint32_t> globs;                  // indices into globs_ whose prefix ends here
  };
  std::unordered_set<std::string> literals_;
  std::vector<std::string> globs_;
  std::vector<Node> trie_;  // trie_[0]: the empty prefix, once a glob is added
  std::size_t size_ = 0;
};

class Filter {
 public:
  Filter() = default;
  // Throws std::invalid_argument naming the problem for an empty pattern ("a::b", "-").
  explicit Filter(std::string_view spec);
  // Adds exact keys to the positive part (run --keys-file).
  void add_keys(const std::vector<std::string>& keys);
  bool matches(std::string_view key) const;
  bool empty() const { return positive_.empty() && negative_.empty(); }

 private:
  PatternSet positive_, negative_;
};

}  // namespace gauntlet
