// gtest-style filters on case keys: "POS1:POS2:-NEG1:NEG2" (or "-NEG1:NEG2"), where each
// pattern is a glob with '*' (any run of characters, '/' included) and '?' (one character).
// Unlike gtest, a '-' starts the negative part only at the start or right after ':', because
// keys themselves contain '-' (eager-bwd, dim=-1).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

bool glob_match(std::string_view pattern, std::string_view text);

class Filter {
 public:
  Filter() = default;
  // Throws std::invalid_argument naming the problem for an empty pattern ("a::b", "-").
  explicit Filter(std::string_view spec);
  bool matches(std::string_view key) const;
  bool empty() const { return positive_.empty() && negative_.empty(); }

 private:
  std::vector<std::string> positive_, negative_;
};

}  // namespace gauntlet
