// Small text helpers: splitting a list, and "did you mean".
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

// The parts of `text` between any of the characters of `separators`, empty ones included
// ("a,,b" -> a, "", b; "" -> one empty part): the caller says what an empty part means.
std::vector<std::string> split(std::string_view text, std::string_view separators);

// " (did you mean X?)" for the candidate nearest to `word` (Levenshtein distance) when it is
// within a third of the word's length plus one (at most 3 edits), else "".
std::string nearest_hint(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace gauntlet
