// The models library's YAML reader (models.yaml, model manifests): every problem is a ModelError
// "file:line: message"; files are parsed strictly (Note [Strict YAML]).
#pragma once

#include <fmt/format.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>
#include <string>
#include <vector>

#include "gauntlet/models.h"
#include "gauntlet/strict_yaml.h"

namespace gauntlet::model_yaml {

namespace fs = std::filesystem;

class Reader {
 public:
  explicit Reader(std::string file) : file_(std::move(file)) {}

  // Note [Strict YAML] (gauntlet/strict_yaml.h).
  YAML::Node load() const {
    std::ifstream in(file_, std::ios::binary);
    std::stringstream text;
    if (!in || !(text << in.rdbuf()) || std::filesystem::is_directory(file_))
      throw ModelError(file_ + ": cannot read file");
    try {
      return strict_yaml::parse(text.str());
    } catch (const strict_yaml::Problem& p) {
      throw ModelError(strict_yaml::describe(file_, p, /*with_column=*/false));
    }
  }

  [[noreturn]] void fail(const YAML::Node& at, const std::string& what) const {
    const YAML::Mark m = at.Mark();
    if (m.is_null()) throw ModelError(file_ + ": " + what);
    throw ModelError(fmt::format("{}:{}: {}", file_, m.line + 1, what));
  }

  std::string where(const YAML::Node& at) const {
    return fmt::format("{}:{}", fs::path(file_).filename().string(), at.Mark().line + 1);
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

  std::string scalar(const YAML::Node& n, const std::string& what) const {
    if (!n.IsScalar()) fail(n, fmt::format("field '{}' must be a single value", what));
    return n.Scalar();
  }

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

  std::vector<YAML::Node> seq(const YAML::Node& n, const std::string& what) const {
    if (!n.IsSequence()) fail(n, fmt::format("field '{}' must be a list", what));
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
};

}  // namespace gauntlet::model_yaml
