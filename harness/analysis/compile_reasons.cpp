#include "compile_reasons.h"

#include <cstddef>

namespace gauntlet {

namespace {

// The items of the "<head>a; b; c" part of `reason`, up to `next` (the part after it) or the end;
// `cut`: the length at which the writer cut the part (its last item is then left out).
std::vector<std::string_view> items(std::string_view reason, std::string_view head, std::string_view next,
                                    std::size_t cut) {
  const std::size_t at = reason.find(head);
  if (at == std::string_view::npos) return {};
  std::string_view part = reason.substr(at);
  if (!next.empty()) {
    const std::size_t end = part.find(next);
    if (end != std::string_view::npos) part = part.substr(0, end);
  }
  const bool was_cut = part.size() >= cut;
  part.remove_prefix(head.size());
  std::vector<std::string_view> out;
  while (!part.empty()) {
    const std::size_t semi = part.find("; ");
    out.push_back(part.substr(0, semi));
    if (semi == std::string_view::npos) break;
    part.remove_prefix(semi + 2);
  }
  if (was_cut && !out.empty()) out.pop_back();
  return out;
}

}  // namespace

std::vector<std::string_view> graph_break_reasons(std::string_view reason) {
  return items(reason, "graph breaks: ", "; recompiles: ", 1000);
}

std::vector<std::string_view> recompile_guards(std::string_view reason) {
  return items(reason, "recompiles: ", "", 600);
}

}  // namespace gauntlet
