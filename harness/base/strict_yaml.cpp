#include "gauntlet/strict_yaml.h"

#include <fmt/format.h>

#include <map>

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

void check_keys(const YAML::Node& n) {
  if (n.IsMap()) {
    std::map<std::string, YAML::Mark> seen;
    for (const auto& kv : n) {
      if (kv.first.IsScalar()) {
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

}  // namespace

YAML::Node parse(const std::string& text) {
  check_utf8(text);
  std::vector<YAML::Node> docs;
  try {
    docs = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    throw at(e.mark, "malformed YAML: " + e.msg);
  }
  if (docs.size() > 1) {
    throw at(docs[1].Mark(), fmt::format("a second YAML document ('---'): a file holds one, and the {} after the first would be ignored",
                                         docs.size() - 1 == 1 ? "one" : "ones"));
  }
  if (docs.empty()) return YAML::Node();
  check_keys(docs[0]);
  return docs[0];
}

std::string describe(const std::string& file, const Problem& p, bool with_column) {
  if (p.line == 0) return fmt::format("{}: {}", file, p.what);
  if (!with_column) return fmt::format("{}:{}: {}", file, p.line, p.what);
  return fmt::format("{}:{}:{}: {}", file, p.line, p.column, p.what);
}

}  // namespace gauntlet::strict_yaml
