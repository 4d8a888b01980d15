// The one reader of Gauntlet's YAML files (suites, expectations, tolerances, waivers, the model
// zoo, model manifests): it parses a file strictly (Note [Strict YAML] in strict_yaml.h) and reports
// every problem as one line, "file:line:col: message" (or "file:line: message" without columns),
// thrown as the caller's error type, so that each library keeps its own error class and every file
// reads the same way.
#pragma once

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <exception>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "gauntlet/base/strict_yaml.h"

namespace gauntlet {

// Error: an exception type constructible from the message (CatalogError, ModelError, WaiverError).
template <typename Error>
class YamlReader {
 public:
  // `file` is the name errors start with: a path, or a name such as "waivers.yaml".
  explicit YamlReader(std::string file, bool with_column = true) : file_(std::move(file)), with_column_(with_column) {}

  // The file's one document (Null for an empty file).
  YAML::Node load() const {
    std::ifstream in(file_, std::ios::binary);
    std::stringstream text;
    if (!in || !(text << in.rdbuf()) || std::filesystem::is_directory(file_)) throw Error(file_ + ": cannot read file");
    return parse(text.str());
  }

  // `text` as the one document of this file.
  YAML::Node parse(const std::string& text) const {
    try {
      return strict_yaml::parse(text);
    } catch (const strict_yaml::Problem& p) {
      throw Error(strict_yaml::describe(file_, p, with_column_));
    }
  }

  [[noreturn]] void fail(const YAML::Mark& m, const std::string& what) const {
    if (m.is_null()) throw Error(file_ + ": " + what);
    if (with_column_) throw Error(fmt::format("{}:{}:{}: {}", file_, m.line + 1, m.column + 1, what));
    throw Error(fmt::format("{}:{}: {}", file_, m.line + 1, what));
  }
  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const { fail(at.Mark(), what); }

  // "name.yaml:12": where an entry was written, for messages about it later.
  std::string where(const YAML::Node& at) const {
    return fmt::format("{}:{}", std::filesystem::path(file_).filename().string(), at.Mark().line + 1);
  }

  // The key node of `field` in `map` (for errors about the whole field), else `map`.
  YAML::Node key(const YAML::Node& map, const char* field) const {
    for (const auto& kv : map) {
      if (kv.first.Scalar() == field) return kv.first;
    }
    return map;
  }

  // The node of a required field; fails at `map` when it is missing.
  YAML::Node need(const YAML::Node& map, const char* field, const std::string& in) const {
    YAML::Node n = map[field];
    if (!n) fail(map, fmt::format("{}: missing field '{}'", in, field));
    return n;
  }

  // One value, as written.
  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, fmt::format("field '{}' must be a single value", what));
    return n.Scalar();
  }

  // A name: letters, digits and '_', not starting with a digit.
  std::string name(const YAML::Node& n, const std::string& what) const {
    std::string s = scalar(n, what);
    bool ok = !s.empty() && (std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_');
    for (char c : s) ok = ok && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ok) fail(n, fmt::format("field '{}': '{}' is not a name (letters, digits, _)", what, s));
    return s;
  }

  double number(const YAML::Node& n, const std::string& what) const {
    std::string s = scalar(n, what);
    try {
      std::size_t used = 0;
      double v = std::stod(s, &used);
      if (used == s.size()) return v;
    } catch (const std::exception&) {
    }
    fail(n, fmt::format("field '{}': '{}' is not a number", what, s));
  }

  bool boolean(const YAML::Node& n, const std::string& what) const {
    std::string s = scalar(n, what);
    if (s == "true") return true;
    if (s == "false") return false;
    fail(n, fmt::format("field '{}' must be true or false, not '{}'", what, s));
  }

  // A field that holds a list.
  std::vector<YAML::Node> seq(const YAML::Node& n, const std::string& what) const {
    if (!n.IsSequence()) fail(n, fmt::format("field '{}' must be a list", what));
    return std::vector<YAML::Node>(n.begin(), n.end());
  }

  // The entries of a field that holds a list, none when the field is absent or empty. Iterating a
  // mapping as a list yields invalid nodes that throw on first use (fuzzing found it: `xfail:`
  // followed by an indented mapping), so anything else is refused here.
  std::vector<YAML::Node> entries(const YAML::Node& n, const std::string& what) const {
    if (!n || n.IsNull()) return {};
    return seq(n, what);
  }

  // A field that takes one value or a list of values, as nodes (for error positions).
  std::vector<YAML::Node> items(const YAML::Node& n, const std::string& what) const {
    if (n.IsScalar()) return {n};
    if (!n.IsSequence()) fail(n, fmt::format("field '{}' must be a value or a list of values", what));
    return std::vector<YAML::Node>(n.begin(), n.end());
  }

  void only_fields(const YAML::Node& map, std::initializer_list<const char*> allowed, const std::string& what) const {
    if (!map.IsMap()) fail(map, fmt::format("{} must be a mapping", what));
    for (const auto& kv : map) {
      const std::string k = kv.first.Scalar();
      if (std::none_of(allowed.begin(), allowed.end(), [&](const char* a) { return k == a; })) {
        fail(kv.first, fmt::format("unknown field '{}' in {} (allowed: {})", k, what, fmt::join(allowed, ", ")));
      }
    }
  }

  const std::string& file() const { return file_; }

 private:
  std::string file_;
  bool with_column_;
};

}  // namespace gauntlet
