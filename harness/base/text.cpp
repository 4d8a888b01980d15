#include "gauntlet/base/text.h"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

namespace {

constexpr char32_t kReplacement = 0xFFFD;

// Calls f(code point) for each code point of UTF-8 text. A byte that does not start a valid
// sequence (stray continuation, overlong form, surrogate, above U+10FFFF, truncated) gives one
// U+FFFD, and decoding resumes at the next byte.
template <class F>
void for_each_code_point(std::string_view s, F&& f) {
  std::size_t i = 0;
  while (i < s.size()) {
    const auto b0 = static_cast<unsigned char>(s[i]);
    if (b0 < 0x80) {
      f(static_cast<char32_t>(b0));
      ++i;
      continue;
    }
    std::size_t len = 0;
    char32_t cp = 0, min = 0;
    if (b0 >= 0xC2 && b0 <= 0xDF) {
      len = 2, cp = b0 & 0x1Fu, min = 0x80;
    } else if (b0 >= 0xE0 && b0 <= 0xEF) {
      len = 3, cp = b0 & 0x0Fu, min = 0x800;
    } else if (b0 >= 0xF0 && b0 <= 0xF4) {
      len = 4, cp = b0 & 0x07u, min = 0x10000;
    }
    bool ok = len > 0 && i + len <= s.size();
    for (std::size_t k = 1; ok && k < len; ++k) {
      const auto b = static_cast<unsigned char>(s[i + k]);
      ok = (b & 0xC0u) == 0x80u;
      cp = (cp << 6) | (b & 0x3Fu);
    }
    ok = ok && cp >= min && cp <= 0x10FFFF && !(cp >= 0xD800 && cp <= 0xDFFF);
    f(ok ? cp : kReplacement);
    i += ok ? len : 1;
  }
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// Markdown lines are one line each: tab, newline and carriage return become spaces, other
// control characters U+FFFD.
char32_t md_clean(char32_t cp) {
  if (cp == '\t' || cp == '\n' || cp == '\r') return ' ';
  if (cp < 0x20 || cp == 0x7F) return kReplacement;
  return cp;
}

}  // namespace

// Text in a Markdown paragraph or table cell, shown as written: `|` would end a cell, `\`, `` ` ``
// and `*` start escapes, code and emphasis, `<` and `&` raw HTML and entities (a key or an error
// message with "<script>" is shown, never interpreted). `_` is left alone: GitHub does not
// emphasise inside words, and keys and details are full of snake_case.
std::string markdown_text(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for_each_code_point(s, [&out](char32_t cp) {
    cp = md_clean(cp);
    switch (cp) {
      case '\\':
      case '|':
      case '`':
      case '*':
        out += '\\';
        out += static_cast<char>(cp);
        return;
      case '<':
        out += "&lt;";
        return;
      case '&':
        out += "&amp;";
        return;
      default:
        append_utf8(out, cp);
    }
  });
  return out;
}

// A code span that may sit in a table cell. Inside code spans nothing is an escape, except that
// GitHub splits table cells on `|` before parsing spans and honours `\|` there. A key holding
// backticks gets a fence one longer than its longest run of them, padded with spaces (which
// CommonMark strips).
std::string markdown_code(std::string_view s) {
  if (s.empty()) return "";
  std::string body;
  std::size_t run = 0, longest = 0;
  for_each_code_point(s, [&](char32_t cp) {
    cp = md_clean(cp);
    run = cp == '`' ? run + 1 : 0;
    longest = std::max(longest, run);
    if (cp == '|') {
      body += "\\|";
    } else {
      append_utf8(body, cp);
    }
  });
  if (body.empty()) return "(empty)";
  const std::string fence(longest + 1, '`');
  const bool pad = longest > 0 || (body.front() == ' ' && body.back() == ' ');
  return pad ? fence + " " + body + " " + fence : fence + body + fence;
}

// A word for a POSIX shell: as is when it holds only characters no shell treats specially,
// else single-quoted (a ' inside becomes '\'').
std::string shell_quoted(std::string_view s) {
  std::string out = "'";
  for (char ch : s) {
    if (ch == '\'') {
      out += "'\\''";
    } else {
      out += ch;
    }
  }
  return out + "'";
}

std::string shell_argument(std::string_view s) {
  const bool plain = !s.empty() && std::all_of(s.begin(), s.end(), [](char ch) {
    const auto u = static_cast<unsigned char>(ch);
    return std::isalnum(u) || std::string_view("_-.,/:=+@%").find(ch) != std::string_view::npos;
  });
  return plain ? std::string(s) : shell_quoted(s);
}

std::string xml_escape(std::string_view s, bool attribute) {
  std::string out;
  out.reserve(s.size());
  for_each_code_point(s, [&](char32_t cp) {
    switch (cp) {
      case '&':
        out += "&amp;";
        return;
      case '<':
        out += "&lt;";
        return;
      case '>':
        out += "&gt;";
        return;
      case '"':
        out += attribute ? "&quot;" : "\"";
        return;
      case '\'':
        out += attribute ? "&apos;" : "'";
        return;
      case '\r':
        out += "&#13;";
        return;
      case '\t':
      case '\n':
        if (attribute) {
          out += fmt::format("&#{};", static_cast<unsigned>(cp));
        } else {
          out += static_cast<char>(cp);
        }
        return;
      default:
        break;
    }
    // XML 1.0 Char: #x9 | #xA | #xD | [#x20-#xD7FF] | [#xE000-#xFFFD] | [#x10000-#x10FFFF];
    // the decoder already excludes surrogates and values above U+10FFFF.
    if (cp < 0x20 || cp == 0xFFFE || cp == 0xFFFF) cp = kReplacement;
    append_utf8(out, cp);
  });
  return out;
}

std::string first_line(std::string_view text) { return std::string(text.substr(0, text.find('\n'))); }

// Note [Failure signature]: two failures are the same failure when their status and the first line
// of their error agree once every number is blanked: "max_abs_err 0.51 at [3, 7]" and "max_abs_err
// 0.49 at [0, 1]" are one cause. Numbers are digits with their sign, point and exponent, and
// hexadecimal numbers; every run of digits counts, inside words too ("2x4x8", "f32"): shapes and
// dtypes that differ do not make a different cause. The line is cut at 200 bytes (on a UTF-8
// boundary) first, so that a message that embeds a whole tensor stays a short key. Run summaries
// group failures by it, `reduce` keeps a candidate that fails the same way by it, and the
// dashboard's release pages count causes by it.
std::string blank_numbers(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  auto digit = [&](std::size_t i) { return i < text.size() && text[i] >= '0' && text[i] <= '9'; };
  auto word = [&](std::size_t i) {
    return i < text.size() && (std::isalnum(static_cast<unsigned char>(text[i])) || text[i] == '_');
  };
  for (std::size_t i = 0; i < text.size();) {
    const bool starts = digit(i) || ((text[i] == '-' || text[i] == '.') && digit(i + 1) && !(i > 0 && word(i - 1)));
    if (!starts) {
      out += text[i++];
      continue;
    }
    if (text[i] == '-') ++i;
    if (text.substr(i, 2) == "0x" || text.substr(i, 2) == "0X") {
      i += 2;
      while (i < text.size() && std::isxdigit(static_cast<unsigned char>(text[i]))) ++i;
    } else {
      while (digit(i) || (i < text.size() && text[i] == '.' && digit(i + 1))) ++i;
      if (i < text.size() && (text[i] == 'e' || text[i] == 'E') &&
          (digit(i + 1) || ((text[i + 1] == '-' || text[i + 1] == '+') && digit(i + 2)))) {
        i += 2;
        while (digit(i)) ++i;
      }
    }
    out += '#';
  }
  return out;
}

std::string first_line_cut(std::string_view text, std::size_t max_bytes) {
  std::string_view line = text.substr(0, text.find('\n'));
  if (line.size() > max_bytes) {
    std::size_t n = max_bytes;
    while (n > 0 && (static_cast<unsigned char>(line[n]) & 0xc0) == 0x80) --n;
    line = line.substr(0, n);
  }
  return std::string(line);
}

std::string error_signature(std::string_view error) { return blank_numbers(first_line_cut(error, 200)); }

namespace {

// A line's likeness (Note [Stderr tails]): numbers blanked, and what is between quotes elided.
std::string line_likeness(std::string_view line) {
  std::string blanked = blank_numbers(line), out;
  char quote = 0;
  for (const char c : blanked) {
    if (quote != 0) {
      if (c == quote) {
        out += c;
        quote = 0;
      }
      continue;
    }
    if (c == '\'' || c == '"') quote = c;
    out += c;
  }
  return out;
}

}  // namespace

std::string fold_stderr_tail(std::string_view text, std::size_t entries) {
  struct Entry {
    std::string_view line;  // the latest of its lines
    std::string likeness;
    std::size_t more = 0;
  };
  std::vector<Entry> kept;  // latest first
  std::size_t older = 0;
  std::size_t end = text.size();
  while (end > 0) {
    const std::size_t nl = end == 0 ? std::string_view::npos : text.rfind('\n', end - 1);
    const std::size_t begin = nl == std::string_view::npos ? 0 : nl + 1;
    std::string_view line = text.substr(begin, end - begin);
    end = nl == std::string_view::npos ? 0 : nl;
    while (!line.empty() && (line.back() == '\r' || line.back() == ' ')) line.remove_suffix(1);
    if (line.empty()) continue;
    std::string likeness = line_likeness(line);
    auto same = std::find_if(kept.begin(), kept.end(), [&](const Entry& e) { return e.likeness == likeness; });
    if (same != kept.end()) {
      ++same->more;
    } else if (kept.size() < entries) {
      kept.push_back({line, std::move(likeness), 0});
    } else {
      ++older;
    }
  }
  std::string out;
  auto add = [&](std::string_view l) { (out.empty() ? out : out += '\n') += l; };
  if (older > 0) add(fmt::format("[{} earlier line{} not shown]", older, older == 1 ? "" : "s"));
  for (auto it = kept.rbegin(); it != kept.rend(); ++it) {
    add(it->line);
    if (it->more > 0) {
      constexpr std::size_t kShown = 100;
      std::size_t from = it->line.size() > kShown ? it->line.size() - kShown : 0;
      while (from > 0 && from < it->line.size() && (static_cast<unsigned char>(it->line[from]) & 0xC0) == 0x80) ++from;
      add(fmt::format("[{} more line{} like: {}{}]", it->more, it->more == 1 ? "" : "s", from > 0 ? "... " : "",
                      it->line.substr(from)));
    }
  }
  return out;
}

}  // namespace gauntlet
