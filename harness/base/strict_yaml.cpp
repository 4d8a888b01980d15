#include "gauntlet/base/strict_yaml.h"

#include <fmt/format.h>
#include <yaml-cpp/eventhandler.h>

#include <algorithm>
#include <map>
#include <sstream>

namespace gauntlet::strict_yaml {

namespace {

void check_utf8(const std::string& text) {
  std::size_t line = 1, column = 1;
  for (std::size_t i = 0; i < text.size();) {
    const auto c = static_cast<unsigned char>(text[i]);
    std::size_t n = 0;
    std::uint32_t cp = 0;
    if (c < 0x80) {
      n = 1;
      cp = c;
    } else if ((c & 0xE0) == 0xC0) {
      n = 2;
      cp = c & 0x1F;
    } else if ((c & 0xF0) == 0xE0) {
      n = 3;
      cp = c & 0x0F;
    } else if ((c & 0xF8) == 0xF0) {
      n = 4;
      cp = c & 0x07;
    }
    bool ok = n > 0 && i + n <= text.size();
    for (std::size_t k = 1; ok && k < n; ++k) {
      const auto cc = static_cast<unsigned char>(text[i + k]);
      ok = (cc & 0xC0) == 0x80;
      cp = (cp << 6) | (cc & 0x3F);
    }
    // Overlong forms, surrogates and values past U+10FFFF are not UTF-8 either.
    if (ok && ((n == 2 && cp < 0x80) || (n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || cp > 0x10FFFF ||
               (cp >= 0xD800 && cp <= 0xDFFF))) {
      ok = false;
    }
    if (!ok) throw Problem{line, column, fmt::format("invalid UTF-8 (byte 0x{:02x}): save the file as UTF-8", c)};
    if (c == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
    i += n;
  }
}

Problem at(const YAML::Mark& m, std::string what) {
  if (m.is_null()) return Problem{0, 0, std::move(what)};
  return Problem{static_cast<std::size_t>(m.line) + 1, static_cast<std::size_t>(m.column) + 1, std::move(what)};
}

// Note [Printable text]: a control character other than a tab or a line break (an escape sequence
// typed as "\e[31m", a stray NUL) never reaches the terminal or a report from a YAML file: the
// file is refused at the scalar that holds it, raw or escaped.
void check_text(const YAML::Node& n) {
  for (const char c : n.Scalar()) {
    const auto u = static_cast<unsigned char>(c);
    if ((u < 0x20 && c != '\t' && c != '\n' && c != '\r') || u == 0x7f) {
      throw at(n.Mark(), fmt::format("a control character (0x{:02x}) in a value: use printable text", u));
    }
  }
}

void check_keys(const YAML::Node& n) {
  if (n.IsScalar()) check_text(n);
  if (n.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : n) {
      if (kv.first.IsScalar()) {
        check_text(kv.first);
        const auto [it, fresh] = seen.emplace(kv.first.Scalar(), kv.first.Mark());
        if (!fresh) {
          throw at(kv.first.Mark(), fmt::format("{}: given twice (first at line {}): a key appears once in a map",
                                                kv.first.Scalar(), it->second.line + 1));
        }
      }
      check_keys(kv.second);
    }
  } else if (n.IsSequence()) {
    for (const auto& item : n) check_keys(item);
  }
}

// Note [One document]: YAML::LoadAll loops for as long as the parser says another document
// follows, and on some malformed texts (" , ") it says so forever without consuming a byte: a
// suite file hung the harness (found by fuzzing). So the documents are counted by events, at most
// two (one is allowed, a second is the error), and the first is loaded on its own.
class DocumentStarts : public YAML::EventHandler {
 public:
  int documents = 0;
  YAML::Mark second;  // where the second document's content starts
  void OnDocumentStart(const YAML::Mark&) override { ++documents; }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnAlias(const YAML::Mark& m, YAML::anchor_t) override { node(m); }
  void OnScalar(const YAML::Mark& m, const std::string&, YAML::anchor_t, const std::string&) override { node(m); }
  void OnSequenceStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark& m, const std::string&, YAML::anchor_t, YAML::EmitterStyle::value) override {
    node(m);
  }
  void OnMapEnd() override {}

 private:
  void node(const YAML::Mark& m) {
    if (documents == 2 && !seen_second_) {
      second = m;
      seen_second_ = true;
    }
  }
  bool seen_second_ = false;
};

}  // namespace

YAML::Node parse(const std::string& text) {
  check_utf8(text);
  YAML::Node doc;
  try {
    std::istringstream in(text);
    YAML::Parser parser(in);
    DocumentStarts starts;
    for (int i = 0; i < 2 && parser.HandleNextDocument(starts); ++i) {
    }
    if (starts.documents > 1) {
      // A second document begins after a document marker ('---' or '...' at the start of a line).
      // Without one, the parser stopped at text it could not take (" , ") and would start a
      // document there again and again: that text is the error.
      const std::size_t pos =
          std::min<std::size_t>(static_cast<std::size_t>(std::max(starts.second.pos, 0)), text.size());
      bool marker = text.rfind("---", 0) == 0 || text.rfind("...", 0) == 0;
      for (std::size_t nl = text.find('\n'); !marker && nl != std::string::npos && nl < pos;
           nl = text.find('\n', nl + 1)) {
        marker = text.compare(nl + 1, 3, "---") == 0 || text.compare(nl + 1, 3, "...") == 0;
      }
      if (!marker && pos < text.size()) {
        throw at(starts.second, fmt::format("malformed YAML: '{}' cannot start a value here", text[pos]));
      }
      throw at(starts.second,
               "a second YAML document ('---'): a file holds one, and the one after the first would be ignored");
    }
    doc = YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    throw at(e.mark, "malformed YAML: " + e.msg);
  }
  check_keys(doc);
  return doc;
}

std::string describe(const std::string& file, const Problem& p, bool with_column) {
  if (p.line == 0) return fmt::format("{}: {}", file, p.what);
  if (!with_column) return fmt::format("{}:{}: {}", file, p.line, p.what);
  return fmt::format("{}:{}:{}: {}", file, p.line, p.column, p.what);
}

}  // namespace gauntlet::strict_yaml
