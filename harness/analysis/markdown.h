// Markdown helpers shared by the reports of compare (reports.cpp) and run (run_reports.cpp).
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace gauntlet {

// A table of at most `top` rows, then "... and N more (<more>)"; "None." when there are no rows.
// The line after a table is separated by a blank line, else GitHub would read it as one more row.
template <class T, class RowFn>
void md_table(std::string& out, std::string_view header, const std::vector<const T*>& rows, int top,
              std::string_view more, RowFn row) {
  if (rows.empty()) {
    out += "None.\n\n";
    return;
  }
  out += header;
  const std::size_t shown = std::min(rows.size(), static_cast<std::size_t>(std::max(top, 0)));
  for (std::size_t i = 0; i < shown; ++i) out += row(*rows[i]);
  if (shown < rows.size()) out += fmt::format("\n... and {} more ({})\n", rows.size() - shown, more);
  out += "\n";
}

}  // namespace gauntlet
