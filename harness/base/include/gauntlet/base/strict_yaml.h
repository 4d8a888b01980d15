// Note [Strict YAML]: yaml-cpp keeps both of two equal keys in a map and answers node["key"] with
// the first, so a suite with `dtypes:` twice in a group silently loses one; it reads only the first
// document of a file (a stray `---` hides the rest); and it takes bytes that are not UTF-8. Every
// YAML file Gauntlet reads (suites, expectations, tolerances, waivers, the model zoo) goes through
// strict_yaml::parse, which makes each of those an error at its line and column.
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <string>

namespace gauntlet::strict_yaml {

// A problem with the text, at a 1-based line and column (0: no position known).
struct Problem {
  std::size_t line = 0, column = 0;
  std::string what;
};

// The one document of `text` (a Null node for an empty file or one of comments only). Throws
// Problem for invalid UTF-8, malformed YAML, a second document, or a key that a map has twice.
YAML::Node parse(const std::string& text);

// "file:line:col: what" (or "file:line: what" without `with_column`, "file: what" without a line).
std::string describe(const std::string& file, const Problem& p, bool with_column = true);

}  // namespace gauntlet::strict_yaml
