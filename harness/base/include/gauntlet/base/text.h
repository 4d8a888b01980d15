// Text helpers shared by every report, summary and page: text for Markdown, XML and a POSIX shell,
// and the first line of an error and its failure signature (Note [Failure signature] in text.cpp).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace gauntlet {

// Text for an XML attribute value (attribute = true) or character data: & < > escaped, and in
// attributes " ' too; carriage return as a character reference (a parser would turn it into a
// newline), and in attributes tab and newline too (a parser would turn them into spaces); other
// characters XML 1.0 forbids (control bytes, U+FFFE, U+FFFF) and invalid UTF-8 replaced with
// U+FFFD.
std::string xml_escape(std::string_view s, bool attribute = true);

// Text in a Markdown paragraph or table cell, shown as written: `|`, `\`, `` ` `` and `*` escaped,
// `<` and `&` as entities, newlines and tabs as spaces, invalid UTF-8 as U+FFFD.
std::string markdown_text(std::string_view s);
// A Markdown code span that may sit in a table cell (fenced past any backticks in `s`, `|`
// escaped); "" for empty text.
std::string markdown_code(std::string_view s);

// A word for a POSIX shell: as is when no shell treats any of its characters specially, else
// single-quoted (as the `gauntlet show --db` commands of the Markdown report quote the database).
std::string shell_argument(std::string_view s);
// `s` single-quoted for a POSIX shell, always (a ' inside becomes '\'').
std::string shell_quoted(std::string_view s);

// The text before the first newline (all of it when there is none).
std::string first_line(std::string_view text);
// The first line, at most `max_bytes` long, cut on a UTF-8 boundary.
std::string first_line_cut(std::string_view text, std::size_t max_bytes);
// `text` with every number written as '#' (Note [Failure signature]).
std::string blank_numbers(std::string_view text);
// An error's failure signature: its first line, cut at 200 bytes, numbers blanked (Note [Failure
// signature]). Two failures of the same status with the same signature are the same failure.
std::string error_signature(std::string_view error);

// Note [Stderr tails]: what a dead worker's stderr says, for its CRASH or TIMEOUT row. The fatal
// line (the signal, glibc's "free(): invalid pointer", the last frames) comes last, often after
// hundreds of warnings alike but for a number or a quoted name (a fallback warning per op). So the
// tail is taken from the end: the last `entries` distinct lines, each line that is like a later
// one (the same with its numbers blanked and its quoted names elided) folded into that one as
// "[N more lines like: ...]", and the lines older than the kept ones counted, not shown. Empty
// lines are dropped.
std::string fold_stderr_tail(std::string_view text, std::size_t entries);

}  // namespace gauntlet
