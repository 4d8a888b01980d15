#include "gauntlet/base/case_key.h"

#include <xxhash.h>

#include <cctype>
#include <charconv>

#include "gauntlet/base/strings.h"

namespace gauntlet {

namespace {

constexpr std::string_view kLayouts[] = {"contig", "t", "step2", "cl"};
constexpr std::string_view kModes[] = {"eager", "eager-bwd", "compile"};

bool is_name_char(char c) {
  return std::islower(static_cast<unsigned char>(c)) || std::isdigit(static_cast<unsigned char>(c)) || c == '_' ||
         c == '.';
}
bool is_value_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.' || c == '+' || c == '-' || c == ':';
}

// A cursor over the key text that reports errors at absolute offsets.
class Parser {
 public:
  explicit Parser(std::string_view s) : s_(s) {}

  [[noreturn]] void fail(std::size_t pos, const std::string& what) const { throw KeyError(std::string(s_), pos, what); }
  // The next '/'-separated segment; `what` names it in errors.
  std::string_view segment(const char* what) {
    if (pos_ > s_.size()) fail(s_.size(), std::string("missing ") + what);
    std::size_t end = s_.find('/', pos_);
    if (end == std::string_view::npos) end = s_.size();
    start_ = pos_;
    std::string_view seg = s_.substr(pos_, end - pos_);
    if (seg.empty()) fail(pos_, std::string("empty ") + what);
    pos_ = end + 1;
    return seg;
  }
  std::size_t start() const { return start_; }
  bool done() const { return pos_ > s_.size(); }

 private:
  std::string_view s_;
  std::size_t pos_ = 0;
  std::size_t start_ = 0;
};

Shape parse_shape(const Parser& p, std::string_view text, std::size_t at) {
  Shape shape;
  if (text == "_") return shape;
  std::size_t i = 0;
  while (true) {
    std::size_t j = i;
    while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) ++j;
    if (j == i) p.fail(at + i, "expected a dimension size (digits), '_' for 0-d");
    if (text[i] == '0' && j - i > 1) p.fail(at + i, "dimension size with a leading zero");
    if (j - i > 12) p.fail(at + i, "dimension size too large");
    shape.push_back(std::stoll(std::string(text.substr(i, j - i))));
    if (j == text.size()) break;
    if (text[j] != 'x') p.fail(at + j, "expected 'x' between dimension sizes");
    i = j + 1;
  }
  return shape;
}

// The optional last field, name=value pairs sorted by name.
void parse_args(Parser& p, CaseKey& k) {
  std::string_view args = p.segment("arguments");
  const std::size_t base = p.start();
  std::size_t i = 0;
  std::string prev;
  while (i <= args.size()) {
    std::size_t j = args.find(',', i);
    if (j == std::string_view::npos) j = args.size();
    std::string_view arg = args.substr(i, j - i);
    std::size_t eq = arg.find('=');
    if (eq == std::string_view::npos || eq == 0) p.fail(base + i, "expected name=value");
    std::string name(arg.substr(0, eq));
    std::string value(arg.substr(eq + 1));
    for (std::size_t c = 0; c < name.size(); ++c) {
      if (!is_name_char(name[c]) || name[c] == '.') p.fail(base + i + c, "bad character in argument name");
    }
    if (value.empty()) p.fail(base + i + eq + 1, "empty argument value");
    for (std::size_t c = 0; c < value.size(); ++c) {
      if (!is_value_char(value[c])) p.fail(base + i + eq + 1 + c, "bad character in argument value");
    }
    if (!prev.empty() && name <= prev) {
      p.fail(base + i, name == prev ? "duplicate argument '" + name + "'" : "arguments must be sorted by name");
    }
    prev = name;
    k.args.emplace(std::move(name), std::move(value));
    i = j + 1;
  }
  if (!p.done()) p.fail(p.start() + args.size(), "unexpected '/' after arguments");
}

}  // namespace

KeyError::KeyError(const std::string& key, std::size_t pos, const std::string& what)
    : Error("bad case key '" + key + "' at column " + std::to_string(pos + 1) + ": " + what), pos_(pos) {}

std::string_view layout_name(Layout l) { return kLayouts[static_cast<unsigned>(l)]; }
std::string_view mode_name(Mode m) { return kModes[static_cast<unsigned>(m)]; }

namespace {
void append_shape(std::string& out, const Shape& s) {
  if (s.empty()) {
    out += '_';
    return;
  }
  char buf[24];
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (i) out += 'x';
    out.append(buf, std::to_chars(buf, buf + sizeof buf, s[i]).ptr);
  }
}
}  // namespace

std::string shape_str(const Shape& s) {
  std::string out;
  append_shape(out, s);
  return out;
}

std::int64_t numel(const Shape& s) {
  std::int64_t n = 1;
  for (auto d : s) n *= d;
  return n;
}

std::string CaseKey::str() const {
  // Built in place: keys are made for every result stored and every case listed.
  std::string out;
  out.reserve(64 + target.size());
  out += kind;
  out += '/';
  out += target;
  out += '/';
  out += dtype_name(dtype);
  out += '/';
  if (kind == "model") {
    out += config + '/' + exec + '/' + mode_text();
    char sep = '/';
    for (const auto& [k, v] : args) {
      out += sep;
      out += k + "=" + v;
      sep = ',';
    }
    return out;
  }
  for (std::size_t i = 0; i < shapes.size(); ++i) {
    if (i) out += ',';
    append_shape(out, shapes[i]);
  }
  out += '/';
  out += layout_name(layout);
  out += '/';
  if (kind == "coll") {
    out += 'w';
    out += std::to_string(world);
  } else {
    out += mode_name(mode);
  }
  if (!args.empty()) {
    out += '/';
    bool first = true;
    for (const auto& [k, v] : args) {
      if (!first) out += ',';
      first = false;
      out += k;
      out += '=';
      out += v;
    }
  }
  return out;
}

std::uint64_t key_id(std::string_view canonical_key) { return XXH64(canonical_key.data(), canonical_key.size(), 0); }

std::uint64_t CaseKey::id() const { return key_id(str()); }

std::string CaseKey::mode_text() const {
  if (kind == "model") return mode == Mode::EagerBwd ? "train" : "infer";
  return kind == "coll" ? "w" + std::to_string(world) : std::string(mode_name(mode));
}

CaseKey CaseKey::parse(std::string_view text) {
  Parser p(text);
  CaseKey k;

  std::string_view kind = p.segment("kind");
  if (kind != "op" && kind != "coll" && kind != "model")
    p.fail(p.start(), "unknown kind '" + std::string(kind) + "' (expected op, coll or model)");
  k.kind = std::string(kind);
  const bool coll = kind == "coll";

  std::string_view target = p.segment("target");
  for (std::size_t i = 0; i < target.size(); ++i) {
    if (!is_name_char(target[i])) p.fail(p.start() + i, "bad character in target name");
  }
  k.target = std::string(target);

  std::string_view dt = p.segment("dtype");
  auto d = parse_dtype(dt);
  if (!d) {
    std::vector<std::string> names;
    for (DType known : kAllDTypes) names.emplace_back(dtype_name(known));
    p.fail(p.start(), "unknown dtype '" + std::string(dt) + "'" + nearest_hint(std::string(dt), names));
  }
  k.dtype = *d;

  if (kind == "model") {
    // Note [Model keys]: model/<name>/<dtype>/<config>/<eager|compile>/<infer|train>[/args].
    std::string_view config = p.segment("config");
    for (std::size_t c = 0; c < config.size(); ++c) {
      if (!is_name_char(config[c]) || config[c] == '.') p.fail(p.start() + c, "bad character in config name");
    }
    k.config = std::string(config);
    std::string_view exec = p.segment("execution");
    if (exec != "eager" && exec != "compile")
      p.fail(p.start(), "unknown execution '" + std::string(exec) + "' (expected eager or compile)");
    k.exec = std::string(exec);
    std::string_view mode = p.segment("mode");
    if (mode != "infer" && mode != "train")
      p.fail(p.start(), "unknown mode '" + std::string(mode) + "' (expected infer or train)");
    k.mode = mode == "train" ? Mode::EagerBwd : Mode::Eager;
    if (!p.done()) parse_args(p, k);
    return k;
  }
  std::string_view shapes = p.segment("shapes");
  std::size_t base = p.start();
  std::size_t i = 0;
  while (i <= shapes.size()) {
    std::size_t j = shapes.find(',', i);
    if (j == std::string_view::npos) j = shapes.size();
    if (j == i) p.fail(base + i, "empty shape");
    k.shapes.push_back(parse_shape(p, shapes.substr(i, j - i), base + i));
    i = j + 1;
  }

  std::string_view layout = p.segment("layout");
  bool found = false;
  for (unsigned l = 0; l < std::size(kLayouts); ++l) {
    if (kLayouts[l] == layout) {
      k.layout = static_cast<Layout>(l);
      found = true;
    }
  }
  if (!found) p.fail(p.start(), "unknown layout '" + std::string(layout) + "'");
  if (coll && k.layout != Layout::Contig && k.layout != Layout::Strided)
    p.fail(p.start(), "a collective's layout is contig or step2");

  if (coll) {
    // Note [Collective keys]: one shape, the elements each rank contributes (1-D); the mode
    // field is the world size, w2 .. w1024, no leading zero.
    if (k.shapes.size() != 1 || k.shapes[0].size() != 1)
      p.fail(base, "a collective takes one 1-D shape: elements per rank");
    std::string_view w = p.segment("world size");
    if (w.size() < 2 || w[0] != 'w' || w[1] == '0' || w.size() > 5)
      p.fail(p.start(), "expected the world size as w<ranks>, e.g. w4");
    for (std::size_t c = 1; c < w.size(); ++c) {
      if (!std::isdigit(static_cast<unsigned char>(w[c])))
        p.fail(p.start() + c, "expected the world size as w<ranks>, e.g. w4");
    }
    k.world = std::stoi(std::string(w.substr(1)));
    if (k.world < 2 || k.world > 1024) p.fail(p.start() + 1, "world size must be 2 .. 1024");
  } else {
    std::string_view mode = p.segment("mode");
    found = false;
    for (unsigned m = 0; m < std::size(kModes); ++m) {
      if (kModes[m] == mode) {
        k.mode = static_cast<Mode>(m);
        found = true;
      }
    }
    if (!found) p.fail(p.start(), "unknown mode '" + std::string(mode) + "'");
  }

  if (!p.done()) parse_args(p, k);
  return k;
}

}  // namespace gauntlet
