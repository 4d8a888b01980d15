#!/usr/bin/env bash
# Checks the layering rules that the compiler cannot (docs/architecture.md "Layers"):
#  1. Note [No stray SQL]: SQL on the results database's tables (`results`, `runs`, `cases`)
#     only in the store target (harness/store/), so that the schema has one owner and a new field
#     or migration touches one folder. Tests, benchmarks and ci/ scripts, which look at a database
#     from outside, are exempt.
#  2. Note [Closed backend interface] (harness/src/backend.cpp): no `is_cpu()` test of a device
#     and no library symbol looked up outside backend.cpp; what differs between backends is a
#     virtual of Backend. Tests are exempt.
#  3. The torch-free targets (harness/base, harness/store, harness/analysis) include no torch
#     header: they build without the torch precompiled header, and the analysis commands need no
#     libtorch.
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
  echo "ci/check_layers.sh: SQL on the results database outside harness/store/ (Note [No stray SQL]; use gauntlet/store_reader.h or gauntlet/store.h):" >&2
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

closed=$(sources harness | grep -v -E '^harness/(src/backend\.cpp|tests/|bench/|fuzz/)' |
  xargs -r grep -Hn -E 'is_cpu\(\)|dlsym\(|plugin_symbol' || true)
if [ -n "$closed" ]; then
  echo "ci/check_layers.sh: a backend told apart outside harness/src/backend.cpp (Note [Closed backend interface]; add a virtual to Backend):" >&2
  echo "$closed" >&2
  status=1
fi

if [ $status -eq 0 ]; then echo "ci/check_layers.sh: layers clean"; fi
exit $status
