#!/usr/bin/env bash
# Checks the layering rules that the compiler cannot (docs/architecture.md "Layers"):
#  1. Note [No stray SQL]: SQL on the results database's tables (`results`, `runs`, `cases`)
#     only in the store target (harness/store/), so that the schema has one owner and a new field
#     or migration touches one folder. Tests, benchmarks and ci/ scripts, which look at a database
#     from outside, are exempt.
#  2. Note [Closed backend interface] (harness/core/backend/backend.cpp): no `is_cpu()` test of a device
#     and no library symbol looked up outside backend.cpp; what differs between backends is a
#     virtual of Backend. Tests are exempt.
#  3. The torch-free targets (harness/base, harness/store, harness/analysis) include no torch
#     header: they build without the torch precompiled header, and the analysis commands need no
#     libtorch.
#  4. Folders follow targets (docs/architecture.md "Folders"): every harness folder but tests/, bench/
#     and fuzz/ (which hold several test, benchmark or fuzz programs) has a CMakeLists.txt declaring
#     exactly one target, from sources in that folder. A target's public headers live in its own
#     folder, under include/gauntlet/<name>/ (harness/run/include/gauntlet/run/,
#     golden/include/gauntlet/golden/; harness/plugin/ is gauntlet_plugin, the vendor contract,
#     headers only), so that a header sits with its target and a target sees only the headers of
#     what it links. A target may group its sources by concept in subfolders (harness/core/cases/,
#     catalog/, ...); its headers mirror them (include/gauntlet/core/cases/ needs
#     harness/core/cases/), and harness/core/ keeps no source at its top.
#  5. The simulator includes from the harness only the vendor contract (gauntlet/plugin/) and
#     gauntlet/base/error.h, as a vendor's library would.
#  6. No two source files (C++, CMake templates, Python, shell, the site) share a name.
# Prints each violation as file:line and exits 1; 0 when clean. Runs in a second.
#   ci/check_layers.sh [SOURCE_DIR]
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"

status=0
sources() { find "$@" -type f \( -name '*.cpp' -o -name '*.h' -o -name '*.in' \) 2>/dev/null | sort; }

sql=$(sources harness simulator golden models suites |
  grep -v -E '^harness/(store|tests|bench|fuzz)/|^simulator/tests/|^golden/tests/|^models/tests/|^suites/tests/' |
  xargs -r grep -Hn -i -E '\b(from|into|update|join)[[:space:]]+(results|runs|cases)\b' || true)
if [ -n "$sql" ]; then
  echo "ci/check_layers.sh: SQL on the results database outside harness/store/ (Note [No stray SQL]; use gauntlet/store/store_reader.h or gauntlet/store/store.h):" >&2
  echo "$sql" >&2
  status=1
fi

torch=$(sources harness/base harness/store harness/analysis |
  xargs -r grep -Hn -E '#[[:space:]]*include[[:space:]]*[<"](torch/|ATen/|c10/)' || true)
if [ -n "$torch" ]; then
  echo "ci/check_layers.sh: a torch header in a torch-free target (harness/base, harness/store, harness/analysis):" >&2
  echo "$torch" >&2
  status=1
fi

closed=$(sources harness | grep -v -E '^harness/(core/backend/backend\.cpp|tests/|bench/|fuzz/)' |
  xargs -r grep -Hn -E 'is_cpu\(\)|dlsym\(|plugin_symbol' || true)
if [ -n "$closed" ]; then
  echo "ci/check_layers.sh: a backend told apart outside harness/core/backend/backend.cpp (Note [Closed backend interface]; add a virtual to Backend):" >&2
  echo "$closed" >&2
  status=1
fi

folders=""
for dir in harness/*/; do
  dir=${dir%/}
  case $dir in harness/tests|harness/bench|harness/fuzz) continue ;; esac
  if [ ! -f "$dir/CMakeLists.txt" ]; then
    folders+="$dir: no CMakeLists.txt (each harness folder builds one target)"$'\n'
    continue
  fi
  # A `<target>_headers` INTERFACE library is a view of the folder's own headers, not a second target.
  n=$(grep -E '^[[:space:]]*add_(library|executable)\(' "$dir/CMakeLists.txt" |
    grep -c -v -E 'add_library\([A-Za-z0-9_]+_headers[[:space:]]+INTERFACE\)' || true)
  [ "$n" -eq 1 ] || folders+="$dir/CMakeLists.txt: $n targets (one per folder)"$'\n'
  if grep -n -E '\.\./|\$\{PROJECT_SOURCE_DIR\}/[^ )]*\.(cpp|h)([^a-z]|$)' "$dir/CMakeLists.txt" >/dev/null; then
    folders+="$dir/CMakeLists.txt: a source from another folder"$'\n'
  fi
done
for dir in harness/*/ golden/ suites/ models/; do
  dir=${dir%/}
  [ -d "$dir/include" ] || continue
  name=$(basename "$dir")
  for f in "$dir"/include/* "$dir"/include/gauntlet/*; do
    [ -e "$f" ] || continue
    case $f in "$dir/include/gauntlet" | "$dir/include/gauntlet/$name") ;;
    *) folders+="$f: $dir/include/ holds gauntlet/$name/ only (a header goes in the folder of its target)"$'\n' ;;
    esac
  done
  for sub in "$dir/include/gauntlet/$name"/*/; do
    [ -d "$sub" ] || continue
    sub=${sub%/}
    [ -d "$dir/$(basename "$sub")" ] || folders+="$sub/: no folder $dir/$(basename "$sub")/ holds the sources of these headers"$'\n'
  done
done
for f in harness/core/* harness/core/include/gauntlet/core/*; do
  [ -f "$f" ] || continue
  [ "$(basename "$f")" = CMakeLists.txt ] ||
    folders+="$f: a file at the top of harness/core/ or of its headers (group it by concept: cases/, catalog/, session/, ...)"$'\n'
done
[ ! -e harness/include ] || folders+="harness/include: headers go in the folder of their target (harness/X/include/gauntlet/X/)"$'\n'
if [ -n "$folders" ]; then
  echo "ci/check_layers.sh: folders do not follow targets (docs/architecture.md \"Folders\"):" >&2
  printf '%s' "$folders" >&2
  status=1
fi

sim=$(sources simulator/src | xargs -r grep -Hn -E '#[[:space:]]*include[[:space:]]*"gauntlet/' |
  grep -v -E '"gauntlet/(plugin/[a-z_]+\.h|base/error\.h)"' || true)
if [ -n "$sim" ]; then
  echo "ci/check_layers.sh: the simulator includes the harness beyond the vendor contract (gauntlet/plugin/, gauntlet/base/error.h):" >&2
  echo "$sim" >&2
  status=1
fi

dups=$(git ls-files 2>/dev/null | grep -E '\.(cpp|h|in|py|sh|cmake|js|css|html)$' | grep -v '^dashboards/node_modules/' |
  awk -F/ '{ n = $NF; seen[n] = seen[n] " " $0; count[n]++ } END { for (n in count) if (count[n] > 1) print n ":" seen[n] }' | sort)
if [ -n "$dups" ]; then
  echo "ci/check_layers.sh: two source files share a name (rename one):" >&2
  echo "$dups" >&2
  status=1
fi

if [ $status -eq 0 ]; then echo "ci/check_layers.sh: layers clean"; fi
exit $status
