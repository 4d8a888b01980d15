#include "gauntlet/analysis/waivers.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <iterator>
#include <map>
#include <set>
#include <stdexcept>
#include <utility>

#include "gauntlet/base/glob.h"
#include "gauntlet/base/host.h"
#include "gauntlet/base/output_dir.h"
#include "gauntlet/base/yaml_reader.h"

namespace gauntlet {
namespace {

// The spellings `change:` accepts. They must agree with gate_name and change_name (regress.cpp),
// which this module does not link against; the tables follow the enums' order, and the
// static_asserts below keep them in step.
struct GateSpelling {
  Gate gate;
  const char* name;
};
constexpr GateSpelling kGateNames[] = {
    {Gate::Accuracy, "accuracy"},
    {Gate::Speed, "speed"},
    {Gate::Coverage, "coverage"},
};

struct ChangeSpelling {
  Change change;
  const char* name;
  bool regression;  // only regressions can be waived
};
constexpr ChangeSpelling kChangeNames[] = {
    {Change::StatusChange, "status-change", true},
    {Change::ErrorGrowth, "error-growth", true},
    {Change::XPass, "xpass", true},
    {Change::NewFallback, "new-fallback", true},
    {Change::GraphBreaks, "graph-breaks", true},
    {Change::Recompiles, "recompiles", true},
    {Change::CompileTime, "compile-time", true},
    {Change::FirstRun, "first-run", true},
    {Change::PeakMemory, "peak-memory", true},
    {Change::Missing, "missing", true},
    {Change::Slower, "slower", true},
    {Change::Faster, "faster", false},
    {Change::Fixed, "fixed", false},
    {Change::New, "new", false},
    {Change::ErrorShift, "error-shift", false},
    {Change::SpeedShift, "speed-shift", false},
};

constexpr bool gates_in_order() {
  for (std::size_t i = 0; i < std::size(kGateNames); ++i) {
    if (static_cast<std::size_t>(kGateNames[i].gate) != i) return false;
  }
  return std::size(kGateNames) == std::size(kAllGates);
}
constexpr bool changes_in_order() {
  for (std::size_t i = 0; i < std::size(kChangeNames); ++i) {
    if (static_cast<std::size_t>(kChangeNames[i].change) != i) return false;
  }
  return static_cast<std::size_t>(kLastChange) + 1 == std::size(kChangeNames);
}
static_assert(gates_in_order(), "kGateNames must list every Gate in enum order");
static_assert(changes_in_order(), "kChangeNames must list every Change in enum order");

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_regression_change(Change c) { return kChangeNames[static_cast<std::size_t>(c)].regression; }

std::string accepted_changes() {
  std::string out;
  for (const auto& g : kGateNames) out += fmt::format("{}{}", out.empty() ? "" : ", ", g.name);
  for (const auto& c : kChangeNames) {
    if (c.regression) out += fmt::format(", {}", c.name);
  }
  return out;
}

constexpr const char* kFields[] = {"case", "change", "reason", "owner", "expires"};
constexpr const char* kRequired[] = {"case", "reason", "owner", "expires"};

// Turns YAML nodes into waivers (gauntlet/base/yaml_reader.h), reporting every problem as
// "<name>:<line>: <field>: <problem>".
class Reader : public YamlReader<WaiverError> {
 public:
  explicit Reader(const std::string& name) : YamlReader(name, /*with_column=*/false) {}

  std::string where(const YAML::Mark& at) const { return fmt::format("{}:{}", file(), at.line + 1); }

  // A field's value: one non-empty scalar. Errors point at the key, because a missing value's
  // node is marked on the line after it.
  std::string value(const YAML::Node& key, const YAML::Node& v) const {
    const std::string& field = key.Scalar();
    if (v.IsMap() || v.IsSequence()) fail(key.Mark(), fmt::format("{}: must be a single value", field));
    std::string s = v.IsScalar() ? v.Scalar() : std::string();
    if (std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isspace(c); })) {
      fail(key.Mark(), fmt::format("{}: must not be empty", field));
    }
    return s;
  }

  Waiver entry(const YAML::Node& e) const {
    if (!e.IsMap()) {
      fail(e.Mark(), fmt::format("each waiver must be a map with the keys {}", fmt::join(kFields, ", ")));
    }
    Waiver w;
    std::set<std::string> seen;
    for (const auto& kv : e) {
      const YAML::Node& key = kv.first;
      const std::string k = key.IsScalar() ? key.Scalar() : std::string("?");
      if (std::find_if(std::begin(kFields), std::end(kFields), [&](const char* f) { return k == f; }) ==
          std::end(kFields)) {
        fail(key.Mark(), fmt::format("{}: unknown key (allowed: {})", k, fmt::join(kFields, ", ")));
      }
      if (!seen.insert(k).second) fail(key.Mark(), fmt::format("{}: given twice", k));
      std::string v = value(key, kv.second);
      if (k == "case") {
        w.pattern = std::move(v);
      } else if (k == "change") {
        change(key, v, w);
      } else if (k == "reason") {
        w.reason = std::move(v);
      } else if (k == "owner") {
        w.owner = std::move(v);
      } else if (k == "expires") {
        if (!is_iso_date(v)) fail(key.Mark(), fmt::format("expires: '{}' is not a date (YYYY-MM-DD)", v));
        w.expires = std::move(v);
      }
    }
    for (const char* f : kRequired) {
      if (seen.count(f) == 0)
        fail(e.Mark(), fmt::format("{}: missing (every waiver needs {})", f, fmt::join(kRequired, ", ")));
    }
    return w;
  }

 private:
  void change(const YAML::Node& key, const std::string& v, Waiver& w) const {
    const std::string name = lower(v);
    for (const auto& g : kGateNames) {
      if (name == g.name) {
        w.gate = g.gate;
        return;
      }
    }
    for (const auto& c : kChangeNames) {
      if (name != c.name) continue;
      if (!c.regression) fail(key.Mark(), fmt::format("change: '{}' is not a regression, so it cannot be waived", v));
      w.change = c.change;
      return;
    }
    fail(key.Mark(), fmt::format("change: '{}' is not a gate or a change (one of: {})", v, accepted_changes()));
  }
};

bool all_digits(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c) != 0; });
}

}  // namespace

bool is_iso_date(std::string_view s) {
  if (s.size() != 10 || s[4] != '-' || s[7] != '-') return false;
  if (!all_digits(s.substr(0, 4)) || !all_digits(s.substr(5, 2)) || !all_digits(s.substr(8, 2))) return false;
  const int year = std::atoi(std::string(s.substr(0, 4)).c_str());
  const int month = (s[5] - '0') * 10 + (s[6] - '0');
  const int day = (s[8] - '0') * 10 + (s[9] - '0');
  if (year < 1 || month < 1 || month > 12 || day < 1) return false;
  const bool leap = (year % 4 == 0 && year % 100 != 0) || year % 400 == 0;
  constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return day <= kDays[month - 1] + (month == 2 && leap ? 1 : 0);
}

std::string Waiver::change_str() const {
  if (change) return kChangeNames[static_cast<std::size_t>(*change)].name;
  if (gate) return kGateNames[static_cast<std::size_t>(*gate)].name;
  return "any";
}

Waivers Waivers::load(const std::string& path) {
  try {
    check_input_file("", path);  // Note [Input files]
  } catch (const Error& e) {
    throw WaiverError(e.what());
  }
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) throw WaiverError(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
  std::string text;
  char buf[1 << 14];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, f)) > 0) text.append(buf, n);
  const int err = std::ferror(f) ? errno : 0;  // a directory opens, then fails to read (EISDIR)
  std::fclose(f);
  if (err != 0) throw WaiverError(fmt::format("{}: cannot read: {}", path, std::strerror(err)));
  return parse(text, path);
}

Waivers Waivers::parse(const std::string& text, const std::string& name) {
  const Reader r(name);
  const YAML::Node root = r.parse(text);  // Note [Strict YAML]
  Waivers out;
  if (root.IsNull()) return out;  // an empty file, or only comments

  const std::string top = "the top level must be a map with the single key 'waivers'";
  if (!root.IsMap()) r.fail(root.Mark(), top);
  YAML::Node list;
  bool found = false;
  for (const auto& kv : root) {
    const std::string k = kv.first.IsScalar() ? kv.first.Scalar() : std::string("?");
    if (k != "waivers") r.fail(kv.first.Mark(), fmt::format("{}: unknown key ({})", k, top));
    if (found) r.fail(kv.first.Mark(), "waivers: given twice");
    found = true;
    list = kv.second;
    if (!list.IsNull() && !list.IsSequence()) {
      r.fail(kv.first.Mark(), "waivers: must be a list (write 'waivers: []' for none)");
    }
  }
  if (!found) r.fail(root.Mark(), top);
  if (list.IsNull()) return out;  // `waivers:` with nothing after it

  // (case, change) -> where, to name both lines of a duplicate.
  std::map<std::pair<std::string, std::string>, std::string> first_at;
  std::set<int> lines;
  for (const auto& e : list) {
    Waiver w = r.entry(e);
    const YAML::Mark m = e.Mark();
    w.where = r.where(m);
    // Flow style can put two waivers on one line; `where` identifies a waiver, so add the column.
    if (!lines.insert(m.line).second) w.where += fmt::format(":{}", m.column + 1);
    auto [it, fresh] = first_at.emplace(std::make_pair(w.pattern, w.change_str()), w.where);
    if (!fresh) {
      r.fail(m, fmt::format("duplicate waiver for case '{}' and change '{}' (first at {})", w.pattern, w.change_str(),
                            it->second));
    }
    out.waivers_.push_back(std::move(w));
  }
  return out;
}

std::optional<WaiverRef> Waivers::match(std::string_view key, Change change, Gate gate_of_change,
                                        const std::string& today) const {
  if (!is_iso_date(today))
    throw std::invalid_argument(fmt::format("Waivers::match: today '{}' is not YYYY-MM-DD", today));
  if (!is_regression_change(change)) return std::nullopt;
  for (const Waiver& w : waivers_) {
    if (w.change && *w.change != change) continue;
    if (w.gate && *w.gate != gate_of_change) continue;
    if (!glob_match(w.pattern, key)) continue;
    WaiverRef ref;
    ref.where = w.where;
    ref.reason = w.reason;
    ref.owner = w.owner;
    ref.expires = w.expires;
    ref.expired = today > w.expires;  // both YYYY-MM-DD: text order is date order
    return ref;
  }
  return std::nullopt;
}

std::vector<const Waiver*> Waivers::unused(const std::vector<Finding>& findings) const {
  std::set<std::string_view> cited;
  for (const Finding& f : findings) {
    if (f.waiver) cited.insert(f.waiver->where);
  }
  std::vector<const Waiver*> out;
  for (const Waiver& w : waivers_) {
    if (cited.count(w.where) == 0) out.push_back(&w);
  }
  return out;
}

std::string today_utc() {
  const char* env = std::getenv("GAUNTLET_TODAY");
  if (env != nullptr && *env != '\0') {
    if (!is_iso_date(env)) throw WaiverError(fmt::format("GAUNTLET_TODAY: '{}' is not a date (YYYY-MM-DD)", env));
    return env;
  }
  return utc_now("%Y-%m-%d");
}

}  // namespace gauntlet
