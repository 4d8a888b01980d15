#include "gauntlet/run/selection.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <set>
#include <string_view>
#include <unordered_set>

#include "gauntlet/base/error.h"
#include "gauntlet/base/glob.h"
#include "gauntlet/base/output_dir.h"
#include "gauntlet/base/strings.h"

namespace gauntlet {

std::pair<int, int> parse_shard(const std::string& spec) {
  std::string s = spec;
  if (s.empty()) {
    const char* i = std::getenv("GTEST_SHARD_INDEX");
    const char* n = std::getenv("GTEST_TOTAL_SHARDS");
    if (!i || !n) return {0, 1};
    s = std::string(i) + "/" + n;
  }
  int index = -1, total = 0;
  char extra = 0;
  if (std::sscanf(s.c_str(), "%d/%d%c", &index, &total, &extra) != 2 || total < 1 || index < 0 || index >= total) {
    throw Error("bad shard '" + s + "': expected i/N with 0 <= i < N");
  }
  return {index, total};
}

KeyList read_keys_file(const std::string& path) {
  check_input_file("--keys-file", path);  // Note [Input files]
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(fmt::format("--keys-file {}: cannot read it", path));
  KeyList list;
  list.file = path;
  std::string line;
  for (int n = 1; std::getline(in, line); ++n) {
    const std::size_t from = line.find_first_not_of(" \t\r");
    if (from == std::string::npos || line[from] == '#') continue;
    const std::size_t to = line.find_last_not_of(" \t\r");
    std::string key = line.substr(from, to - from + 1);
    if (key.find_first_of(" \t") != std::string::npos) {
      throw Error(
          fmt::format("{}:{}: '{}' is not one case key (one key a line; '#' starts a comment line)", path, n, key));
    }
    list.keys.push_back(std::move(key));
    list.lines.push_back(n);
  }
  if (list.keys.empty()) throw Error(fmt::format("--keys-file {}: no key in it (one case key a line)", path));
  return list;
}

namespace {
// Every key of `keys` must be a case of the suite: a key file written for another suite, or an
// older one, is refused rather than run in part.
void check_keys(const Suite& suite, const KeyList& keys) {
  std::unordered_set<std::string_view> known;
  known.reserve(suite.cases.size());
  for (const Case& c : suite.cases) known.insert(c.text);
  std::size_t unknown = 0, first = 0;
  for (std::size_t i = 0; i < keys.keys.size(); ++i) {
    if (known.count(keys.keys[i])) continue;
    if (unknown++ == 0) first = i;
  }
  if (unknown == 0) return;
  const std::string where = keys.lines.empty() ? keys.file : fmt::format("{}:{}", keys.file, keys.lines[first]);
  throw Error(fmt::format("{}: {} is not a case of suite {}{}", where, keys.keys[first], suite.name,
                          unknown > 1 ? fmt::format(" (nor are {} more of its keys)", unknown - 1) : ""));
}
}  // namespace

std::vector<const Case*> keep_keys(const Suite& suite, const std::vector<const Case*>& cases, const KeyList& keys) {
  check_keys(suite, keys);
  PatternSet wanted;
  for (const std::string& k : keys.keys) wanted.add(k);
  std::vector<const Case*> kept;
  for (const Case* c : cases) {
    if (wanted.matches(c->text)) kept.push_back(c);
  }
  return kept;
}

namespace {

// Why a filter selects nothing, where one of its words names nothing: ": it has no dtype 'f31'
// (did you mean f32?)". Looks at the first three parts of each positive
// pattern (kind, op/model/collective, dtype) that have no wildcard; "" when each names something.
std::string why_nothing(const Suite& suite, const std::string& filter_spec) {
  static constexpr std::size_t kParts = 3;
  for (const std::string& pattern : split(filter_spec, ":")) {
    if (pattern.empty() || pattern.front() == '-') break;  // the negative part
    const std::vector<std::string> parts = split(pattern, "/");
    for (std::size_t i = 0; i < parts.size() && i < kParts; ++i) {
      if (parts[i].find_first_of("*?") != std::string::npos) break;
      std::set<std::string> seen;
      for (const Case& c : suite.cases) {
        const std::vector<std::string> have = split(c.text, "/");
        if (have.size() <= i ||
            !std::equal(parts.begin(), parts.begin() + static_cast<std::ptrdiff_t>(i), have.begin()))
          continue;
        seen.insert(have[i]);
      }
      if (seen.count(parts[i]) || seen.empty()) continue;
      const std::string field = i == 0                ? "kind"
                                : i == 2              ? "dtype"
                                : parts[0] == "op"    ? "op"
                                : parts[0] == "model" ? "model"
                                : parts[0] == "coll"  ? "collective"
                                                      : "target";
      return fmt::format(": it has no {} '{}'{}", field, parts[i],
                         nearest_hint(parts[i], std::vector<std::string>(seen.begin(), seen.end())));
    }
  }
  return "";
}

}  // namespace

std::vector<const Case*> select_cases(const Suite& suite, const std::string& filter_spec, const std::string& shard_spec,
                                      const KeyList* keys) {
  Filter filter = filter_spec.empty() ? Filter() : Filter(filter_spec);
  auto [shard, shards] = parse_shard(shard_spec);
  std::unordered_set<std::string_view> wanted;
  if (keys) {
    check_keys(suite, *keys);
    wanted.insert(keys->keys.begin(), keys->keys.end());
  }
  const auto selects = [&](const std::string& text) { return (!keys || wanted.count(text)) && filter.matches(text); };
  std::vector<const Case*> cases;
  for (std::size_t i = 0; i < suite.cases.size(); ++i) {
    if (static_cast<int>(i % static_cast<std::size_t>(shards)) != shard) continue;
    if (selects(suite.cases[i].text)) cases.push_back(&suite.cases[i]);
  }
  if (cases.empty()) {
    // Note [Empty shards]: a filter that selects nothing is a mistake; a shard that holds none of
    // what it selects is not (a 4-way CI split of a 1-case filter): as gtest does, it runs nothing
    // and exits 0, saying so in one line.
    std::size_t selected = 0;
    for (const Case& c : suite.cases) selected += selects(c.text);
    if (selected == 0) {
      throw Error(keys ? fmt::format("filter '{}' matches none of the keys of {}", filter_spec, keys->file)
                       : fmt::format("filter '{}' matches no case of suite {}{}", filter_spec, suite.name,
                                     why_nothing(suite, filter_spec)));
    }
    fmt::print(stderr,
               "gauntlet: note: shard {}/{} holds none of the {} case{} that {} selects from suite {}: nothing to do\n",
               shard, shards, selected, selected == 1 ? "" : "s",
               filter_spec.empty() ? std::string("the suite") : "filter '" + filter_spec + "'", suite.name);
  }
  return cases;
}

}  // namespace gauntlet
