#include "gauntlet/glob.h"

#include <stdexcept>

namespace gauntlet {

bool glob_match(std::string_view p, std::string_view t) {
  // Iterative matcher with one backtrack point for the last '*': linear in practice.
  std::size_t pi = 0, ti = 0, star = std::string_view::npos, mark = 0;
  while (ti < t.size()) {
    if (pi < p.size() && (p[pi] == '?' || p[pi] == t[ti])) {
      ++pi;
      ++ti;
    } else if (pi < p.size() && p[pi] == '*') {
      star = pi++;
      mark = ti;
    } else if (star != std::string_view::npos) {
      pi = star + 1;
      ti = ++mark;
    } else {
      return false;
    }
  }
  while (pi < p.size() && p[pi] == '*') ++pi;
  return pi == p.size();
}

namespace {
std::vector<std::string> split_patterns(std::string_view s, std::string_view whole) {
  std::vector<std::string> out;
  if (s.empty()) return out;
  std::size_t i = 0;
  while (true) {
    std::size_t j = s.find(':', i);
    std::string_view part = s.substr(i, j == std::string_view::npos ? std::string_view::npos : j - i);
    if (part.empty()) {
      throw std::invalid_argument("bad filter '" + std::string(whole) + "': empty pattern");
    }
    out.emplace_back(part);
    if (j == std::string_view::npos) break;
    i = j + 1;
  }
  return out;
}
}  // namespace

Filter::Filter(std::string_view spec) {
  std::size_t dash = spec.find('-');
  // A '-' starts the negative part only at the start or after ':' (keys contain "eager-bwd").
  while (dash != std::string_view::npos && dash != 0 && spec[dash - 1] != ':') {
    dash = spec.find('-', dash + 1);
  }
  std::string_view pos = spec.substr(0, dash == std::string_view::npos ? spec.size() : dash);
  if (!pos.empty() && pos.back() == ':') pos.remove_suffix(1);
  positive_ = split_patterns(pos, spec);
  if (dash != std::string_view::npos) {
    negative_ = split_patterns(spec.substr(dash + 1), spec);
    if (negative_.empty()) throw std::invalid_argument("bad filter '" + std::string(spec) + "': nothing after '-'");
  }
  if (spec.empty()) throw std::invalid_argument("bad filter '': empty pattern");
}

bool Filter::matches(std::string_view key) const {
  bool in = positive_.empty();
  for (const auto& p : positive_) {
    if (glob_match(p, key)) {
      in = true;
      break;
    }
  }
  if (!in) return false;
  for (const auto& n : negative_) {
    if (glob_match(n, key)) return false;
  }
  return true;
}

}  // namespace gauntlet
