// Fault injection rules: parsing the spec grammar, matching op calls, and the canonical form.
#include "fault_spec.h"

#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <stdexcept>
#include <system_error>
#include <utility>

#include "gauntlet/base/error.h"  // one_line: a rule's text echoed in an error stays one line

namespace gauntlet::sim {
namespace {

constexpr std::array<std::pair<FaultKind, std::string_view>, 11> kKinds{{
    {FaultKind::Bias, "bias"},
    {FaultKind::Flip, "flip"},
    {FaultKind::Precision, "precision"},
    {FaultKind::NaN, "nan"},
    {FaultKind::Slow, "slow"},
    {FaultKind::Sleep, "sleep"},
    {FaultKind::Fallback, "fallback"},
    {FaultKind::Segv, "segv"},
    {FaultKind::Abort, "abort"},
    {FaultKind::Hang, "hang"},
    {FaultKind::Oom, "oom"},
}};

// Torch spellings map onto the short names so reports and matching see one name per dtype.
constexpr std::array<std::pair<std::string_view, std::string_view>, 25> kDtypes{{
    {"f64", "f64"},       {"float64", "f64"}, {"double", "f64"},  {"f32", "f32"},   {"float32", "f32"},
    {"float", "f32"},     {"f16", "f16"},     {"float16", "f16"}, {"half", "f16"},  {"bf16", "bf16"},
    {"bfloat16", "bf16"}, {"i64", "i64"},     {"int64", "i64"},   {"long", "i64"},  {"i32", "i32"},
    {"int32", "i32"},     {"int", "i32"},     {"i16", "i16"},     {"int16", "i16"}, {"short", "i16"},
    {"i8", "i8"},         {"int8", "i8"},     {"u8", "u8"},       {"uint8", "u8"},  {"bool", "bool"},
}};

constexpr std::string_view kKnownKeys = "op, dtype, min_numel, max_numel, kind, factor, rank";

std::optional<std::string_view> canonical_dtype(std::string_view name) {
  for (const auto& [alias, canon] : kDtypes)
    if (alias == name) return canon;
  return std::nullopt;
}

// The default factor doubles as "this kind takes a factor": kinds without one have 0.
double default_factor(FaultKind k) {
  switch (k) {
    case FaultKind::Bias:
      return 1e-3;
    case FaultKind::Slow:
      return 2.0;
    case FaultKind::Sleep:
      return 10.0;
    default:
      return 0;
  }
}

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n' || c == '\v' || c == '\f'; }

// A piece of the input and where it starts in it, so errors can point at the column.
struct Span {
  std::string_view s;
  std::size_t pos = 0;
};

Span trim(Span in) {
  std::size_t b = 0, e = in.s.size();
  while (b < e && is_space(in.s[b])) ++b;
  while (e > b && is_space(in.s[e - 1])) --e;
  return {in.s.substr(b, e - b), in.pos + b};
}

std::vector<Span> split(Span in, char sep) {
  std::vector<Span> out;
  std::size_t start = 0;
  for (;;) {
    std::size_t at = in.s.find(sep, start);
    if (at == std::string_view::npos) {
      out.push_back({in.s.substr(start), in.pos + start});
      return out;
    }
    out.push_back({in.s.substr(start, at - start), in.pos + start});
    start = at + 1;
  }
}

// Thrown inside the parser and rewritten by the callers into their own location format.
struct RuleError {
  std::size_t piece;   // 0-based index among the ';'-separated pieces
  std::size_t offset;  // 0-based offset in the parsed text
  std::string problem;
};

std::int64_t parse_count(std::string_view key, Span value, std::size_t piece) {
  std::int64_t n = 0;
  const char* end = value.s.data() + value.s.size();
  auto [p, ec] = std::from_chars(value.s.data(), end, n);
  if (ec != std::errc() || p != end || n < 0)
    throw RuleError{piece, value.pos,
                    "'" + std::string(key) + "' must be a non-negative integer, got '" + std::string(value.s) + "'"};
  return n;
}

double parse_factor(Span value, std::size_t piece) {
  double f = 0;
  const char* end = value.s.data() + value.s.size();
  auto [p, ec] = std::from_chars(value.s.data(), end, f);
  if (ec != std::errc() || p != end || !std::isfinite(f) || !(f > 0))
    throw RuleError{piece, value.pos, "'factor' must be a finite number > 0, got '" + std::string(value.s) + "'"};
  return f;
}

FaultRule parse_rule(Span rule, std::size_t piece) {
  FaultRule r;
  r.text = std::string(rule.s);
  enum Key { kOp, kDtype, kMin, kMax, kKind, kFactor, kRank, kNumKeys };
  static constexpr std::array<std::string_view, kNumKeys> names{"op",   "dtype",  "min_numel", "max_numel",
                                                                "kind", "factor", "rank"};
  std::array<std::optional<std::size_t>, kNumKeys> seen{};  // where each key's item starts
  bool factor_given = false;

  for (Span item : split(rule, ',')) {
    item = trim(item);
    std::size_t eq = item.s.find('=');
    Span key = trim({item.s.substr(0, eq == std::string_view::npos ? 0 : eq), item.pos});
    if (eq == std::string_view::npos || key.s.empty())
      throw RuleError{piece, item.pos, "expected key=value, got '" + std::string(item.s) + "'"};
    Span value = trim({item.s.substr(eq + 1), item.pos + eq + 1});

    std::size_t k = 0;
    while (k < kNumKeys && names[k] != key.s) ++k;
    if (k == kNumKeys)
      throw RuleError{piece, key.pos,
                      "unknown key '" + std::string(key.s) + "' (known: " + std::string(kKnownKeys) + ")"};
    if (seen[k]) throw RuleError{piece, key.pos, "duplicate key '" + std::string(key.s) + "'"};
    seen[k] = item.pos;
    if (value.s.empty()) throw RuleError{piece, item.pos, "empty value for '" + std::string(key.s) + "'"};

    switch (k) {
      case kOp: {
        // An op selector is an op name ("aten::add.Tensor", "c10d::allreduce") with '*' and '?':
        // anything else ('[', a space) could never match, so a typo would silently inject nothing.
        const std::size_t bad =
            value.s.find_first_not_of("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_:.*?");
        if (bad != std::string_view::npos) {
          throw RuleError{
              piece, value.pos + bad,
              "op '" + std::string(value.s) + "' has '" + std::string(1, value.s[bad]) +
                  "', which no op name has (op names are letters, digits, '_', ':' and '.'; globs add '*' and '?')"};
        }
        r.op = std::string(value.s);
        break;
      }
      case kDtype: {
        auto d = canonical_dtype(value.s);
        if (!d) throw RuleError{piece, value.pos, "unknown dtype '" + std::string(value.s) + "'"};
        r.dtype = std::string(*d);
        break;
      }
      case kMin:
        r.min_numel = parse_count(key.s, value, piece);
        break;
      case kMax:
        r.max_numel = parse_count(key.s, value, piece);
        break;
      case kKind: {
        std::size_t i = 0;
        while (i < kKinds.size() && kKinds[i].second != value.s) ++i;
        if (i == kKinds.size()) {
          std::string known;
          for (const auto& [kind, name] : kKinds) known += (known.empty() ? "" : ", ") + std::string(name);
          throw RuleError{piece, value.pos, "unknown kind '" + std::string(value.s) + "' (known: " + known + ")"};
        }
        r.kind = kKinds[i].first;
        break;
      }
      case kFactor:
        r.factor = parse_factor(value, piece);
        factor_given = true;
        break;
      case kRank: {
        const std::int64_t rank = parse_count(key.s, value, piece);
        if (rank > 1 << 20) throw RuleError{piece, value.pos, "rank " + std::string(value.s) + " is too large"};
        r.rank = static_cast<int>(rank);
        break;
      }
    }
  }

  if (!seen[kKind]) throw RuleError{piece, rule.pos, "missing kind="};
  double def = default_factor(r.kind);
  if (factor_given && def == 0)
    throw RuleError{piece, *seen[kFactor], "factor is not used by kind=" + std::string(fault_kind_name(r.kind))};
  if (!factor_given) r.factor = def;
  if (r.min_numel > r.max_numel)
    throw RuleError{
        piece, std::max(*seen[kMin], *seen[kMax]),
        "min_numel " + std::to_string(r.min_numel) + " is greater than max_numel " + std::to_string(r.max_numel)};
  return r;
}

void parse_rules(std::string_view text, std::vector<FaultRule>& out) {
  std::vector<Span> pieces = split({text, 0}, ';');
  for (std::size_t i = 0; i < pieces.size(); ++i) {
    Span rule = trim(pieces[i]);
    if (!rule.s.empty()) out.push_back(parse_rule(rule, i));
  }
}

// %g is the readable form; fall back to 17 digits when %g would lose the value, so the canonical form round-trips.
std::string format_factor(double f) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%g", f);
  if (std::strtod(buf, nullptr) != f) std::snprintf(buf, sizeof buf, "%.17g", f);
  return buf;
}

}  // namespace

std::string_view fault_kind_name(FaultKind k) {
  for (const auto& [kind, name] : kKinds)
    if (kind == k) return name;
  return "?";
}

namespace {
std::atomic<int> g_process_rank{-1};
}  // namespace

void set_process_rank(int rank) { g_process_rank = rank; }
int process_rank() { return g_process_rank; }

bool FaultRule::matches(std::string_view op_name, std::string_view dtype_name, std::int64_t numel) const {
  if (rank >= 0 && rank != process_rank()) return false;
  if (numel < min_numel || numel > max_numel) return false;
  if (!dtype.empty()) {
    // Callers may pass either spelling; compare on the canonical one.
    auto d = canonical_dtype(dtype_name);
    if ((d ? *d : dtype_name) != dtype) return false;
  }
  return fnmatch(op.c_str(), std::string(op_name).c_str(), 0) == 0;
}

std::vector<const FaultRule*> FaultSpec::match(std::string_view op_name, std::string_view dtype_name,
                                               std::int64_t numel) const {
  std::vector<const FaultRule*> out;
  for (const FaultRule& r : rules)
    if (r.matches(op_name, dtype_name, numel)) out.push_back(&r);
  return out;
}

std::string FaultSpec::canonical() const {
  std::string out;
  for (const FaultRule& r : rules) {
    if (!out.empty()) out += "; ";
    if (r.op != "*") out += "op=" + r.op + ",";
    if (!r.dtype.empty()) out += "dtype=" + r.dtype + ",";
    if (r.min_numel != 0) out += "min_numel=" + std::to_string(r.min_numel) + ",";
    if (r.max_numel != std::numeric_limits<std::int64_t>::max())
      out += "max_numel=" + std::to_string(r.max_numel) + ",";
    if (r.rank >= 0) out += "rank=" + std::to_string(r.rank) + ",";
    out += "kind=" + std::string(fault_kind_name(r.kind));
    double def = default_factor(r.kind);
    if (def != 0 && r.factor != def) out += ",factor=" + format_factor(r.factor);
  }
  return out;
}

FaultSpec parse_fault_spec(std::string_view text, std::string_view origin) {
  FaultSpec spec;
  try {
    parse_rules(text, spec.rules);
  } catch (const RuleError& e) {
    throw std::invalid_argument(std::string(origin) + ": rule " + std::to_string(e.piece + 1) + " (column " +
                                std::to_string(e.offset + 1) + "): " + gauntlet::one_line(e.problem));
  }
  return spec;
}

FaultSpec parse_fault_file(const std::string& path) {
  // A directory opens fine as a stream but reads as empty; it must not pass for a file with no rules.
  // A FIFO would block the open until someone writes it: checked before opening. (An empty file,
  // or one of comments only, is a spec with no rules: rules commented out.)
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || S_ISDIR(st.st_mode))
    throw std::invalid_argument(path + ": cannot read fault file");
  if (!S_ISREG(st.st_mode))
    throw std::invalid_argument(path + ": not a regular file (a fault file is one rule a line)");
  std::ifstream in(path);
  if (!in) throw std::invalid_argument(path + ": cannot read fault file");
  FaultSpec spec;
  std::string line;
  for (std::size_t lineno = 1; std::getline(in, line); ++lineno) {
    std::string_view body(line);
    body = body.substr(0, body.find('#'));
    try {
      parse_rules(body, spec.rules);
    } catch (const RuleError& e) {
      throw std::invalid_argument(path + ":" + std::to_string(lineno) + ":" + std::to_string(e.offset + 1) + ": " +
                                  gauntlet::one_line(e.problem));
    }
  }
  if (in.bad()) throw std::invalid_argument(path + ": cannot read fault file");
  return spec;
}

FaultSpec fault_spec_from_env() {
  FaultSpec spec;
  const char* file = std::getenv("GAUNTLET_SIM_FAULTS_FILE");
  if (file && *file) spec = parse_fault_file(file);
  if (const char* text = std::getenv("GAUNTLET_SIM_FAULTS")) {
    FaultSpec more = parse_fault_spec(text, "GAUNTLET_SIM_FAULTS");
    for (FaultRule& r : more.rules) spec.rules.push_back(std::move(r));
  }
  return spec;
}

}  // namespace gauntlet::sim
