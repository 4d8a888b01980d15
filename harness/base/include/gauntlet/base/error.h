// The one family of errors a user sees, and the exit code each carries.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace gauntlet {

// Note [Error family]: every error meant for the user is a gauntlet::Error (each module's own
// error type derives from it) and carries the exit code it ends the process with:
//   2  bad input: an option, a file the user wrote, a database that is not ours or is damaged;
//      nothing was written.
//   3  internal: a bug of ours (main() prints "internal error" for anything not an Error).
//   4  the environment failed us: the disk is full, the database is locked past the busy
//      timeout, an I/O error. What was stored stays stored; `run` says how to resume.
// main() catches Error once and returns exit_code(); a module never maps exception types to
// exit codes itself. std::invalid_argument (thrown by small parsers that do not know the family)
// counts as bad input. The message is one line: Error's constructor escapes control characters
// (one_line), so a key or a file name with a newline in it cannot split the line.
inline constexpr int kExitBadInput = 2;
inline constexpr int kExitInternal = 3;
inline constexpr int kExitEnvironment = 4;

// `text` with every control character (a newline, a tab, ESC...) written as \xNN.
inline std::string one_line(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    const auto u = static_cast<unsigned char>(c);
    if (u < 0x20 || u == 0x7f) {
      char buf[8];
      std::snprintf(buf, sizeof buf, "\\x%02x", u);
      out += buf;
    } else {
      out += c;
    }
  }
  return out;
}

class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, int exit_code = kExitBadInput)
      : std::runtime_error(one_line(what)), exit_code_(exit_code) {}
  int exit_code() const { return exit_code_; }

 private:
  int exit_code_;
};

}  // namespace gauntlet
