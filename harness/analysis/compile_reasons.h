// What a compile case's `reason` says of its compile path, as record_compile_stats writes it
// (harness/core/cases/compile_path.cpp): "graph breaks: A (f.py:3); B (<traced op>:2); recompiles:
// G1; G2", after any other note. Read by compare (Note [New graph break reasons] in
// regress_detectors.cpp) and the dashboard's coverage page. Private to gauntlet_analysis.
#pragma once

#include <string_view>
#include <vector>

namespace gauntlet {

// Each graph break's reason, with where it happened, in the order recorded. The list is cut at
// 1,000 characters when written; a reason cut short there is left out.
std::vector<std::string_view> graph_break_reasons(std::string_view reason);
// Each recompile's failed guard, in the order recorded (cut at 600 characters, likewise).
std::vector<std::string_view> recompile_guards(std::string_view reason);

}  // namespace gauntlet
