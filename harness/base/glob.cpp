#include "gauntlet/base/glob.h"

#include <algorithm>
#include <stdexcept>

#include "gauntlet/base/strings.h"

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
  if (s.empty()) return {};
  std::vector<std::string> out = split(s, ":");
  for (const std::string& part : out) {
    if (part.empty()) throw std::invalid_argument("bad filter '" + std::string(whole) + "': empty pattern");
    // Shell-style classes and alternatives match nothing here (no key has these characters):
    // refused rather than silently selecting nothing.
    if (const std::size_t at = part.find_first_of("[]{}\\"); at != std::string::npos) {
      throw std::invalid_argument("bad filter '" + std::string(whole) + "': '" + part[at] +
                                  "' is not filter syntax (patterns have '*' and '?' only; give alternatives as "
                                  "patterns separated by ':')");
    }
  }
  return out;
}
}  // namespace

void PatternSet::add(std::string pattern) {
  const std::size_t wild = pattern.find_first_of("*?");
  ++size_;
  if (wild == std::string::npos) {
    literals_.insert(std::move(pattern));
    return;
  }
  if (trie_.empty()) trie_.emplace_back();
  std::uint32_t node = 0;
  for (std::size_t i = 0; i < wild; ++i) {
    const char c = pattern[i];
    auto& next = trie_[node].next;
    auto it = std::find_if(next.begin(), next.end(), [c](const auto& e) { return e.first == c; });
    if (it != next.end()) {
      node = it->second;
      continue;
    }
    const auto child = static_cast<std::uint32_t>(trie_.size());
    next.emplace_back(c, child);
    trie_.emplace_back();  // invalidates `next`: not used after this
    node = child;
  }
  trie_[node].globs.push_back(static_cast<std::uint32_t>(globs_.size()));
  globs_.push_back(std::move(pattern));
}

bool PatternSet::matches(std::string_view key) const {
  if (!literals_.empty() && literals_.count(std::string(key))) return true;
  if (trie_.empty()) return false;
  std::uint32_t node = 0;
  for (std::size_t i = 0;; ++i) {
    for (const std::uint32_t g : trie_[node].globs) {
      if (glob_match(globs_[g], key)) return true;
    }
    if (i == key.size()) return false;
    const auto& next = trie_[node].next;
    const char c = key[i];
    auto it = std::find_if(next.begin(), next.end(), [c](const auto& e) { return e.first == c; });
    if (it == next.end()) return false;
    node = it->second;
  }
}

Filter::Filter(std::string_view spec) {
  std::size_t dash = spec.find('-');
  // A '-' starts the negative part only at the start or after ':' (keys contain "eager-bwd").
  while (dash != std::string_view::npos && dash != 0 && spec[dash - 1] != ':') {
    dash = spec.find('-', dash + 1);
  }
  std::string_view pos = spec.substr(0, dash == std::string_view::npos ? spec.size() : dash);
  if (!pos.empty() && pos.back() == ':') pos.remove_suffix(1);
  for (std::string& p : split_patterns(pos, spec)) positive_.add(std::move(p));
  if (dash != std::string_view::npos) {
    std::vector<std::string> negative = split_patterns(spec.substr(dash + 1), spec);
    if (negative.empty()) throw std::invalid_argument("bad filter '" + std::string(spec) + "': nothing after '-'");
    for (std::string& n : negative) negative_.add(std::move(n));
  }
  if (spec.empty()) throw std::invalid_argument("bad filter '': empty pattern");
}

void Filter::add_keys(const std::vector<std::string>& keys) {
  for (const std::string& k : keys) positive_.add(k);
}

bool Filter::matches(std::string_view key) const {
  if (!positive_.empty() && !positive_.matches(key)) return false;
  return negative_.empty() || !negative_.matches(key);
}

}  // namespace gauntlet
