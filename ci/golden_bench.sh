#!/usr/bin/env bash
# Measures what the golden store saves: builds the store for a suite, then runs the suite with and
# without --golden-store and compares run time and time spent on goldens (sum of golden_us).
# Usage: ci/golden_bench.sh [SUITE] [FILTER]   (defaults: nightly, everything)
# Environment: BUILD_DIR (default build/dev), OUT (default build/golden-bench).
set -euo pipefail
cd "$(dirname "$0")/.."
SUITE=${1:-nightly}
FILTER=${2:-}
BUILD_DIR=${BUILD_DIR:-build/dev}
OUT=${OUT:-build/golden-bench}
G="$BUILD_DIR/harness/gauntlet"
[ -x "$G" ] || { echo "ci/golden_bench.sh: build $G first (ci/test.sh)" >&2; exit 2; }
rm -rf "$OUT" && mkdir -p "$OUT"
args=(--suite "$SUITE" --quiet --reps 0)
[ -n "$FILTER" ] && args+=(--filter "$FILTER")

t() { local s; s=$(date +%s.%N); "$@" >/dev/null; awk -v a="$(date +%s.%N)" -v b="$s" 'BEGIN { printf "%.1f", a - b }'; }
div() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", a / b }'; }
build_s=$(t "$G" golden build --suite "$SUITE" --store "$OUT/store" --workers "$(nproc)" --quiet ${FILTER:+--filter "$FILTER"})
plain_s=$(t "$G" run "${args[@]}" --db "$OUT/plain.db")
store_s=$(t "$G" run "${args[@]}" --db "$OUT/store.db" --golden-store "$OUT/store")
q() { sqlite3 "$1" "select printf('%.1f', sum(golden_us) / 1e6) from results"; }
same=$(sqlite3 "$OUT/plain.db" "attach '$OUT/store.db' as s;
  select count(*) from results a join s.results b using (case_id)
  where a.status is not b.status or a.mismatches is not b.mismatches
     or a.max_abs_err is not b.max_abs_err or a.max_ulp is not b.max_ulp")
from_store=$(sqlite3 "$OUT/store.db" "select count(*) from results where golden_source = 'store'")
cases=$(sqlite3 "$OUT/store.db" "select count(*) from results")
du_store=$(du -sh "$OUT/store" | cut -f1)
echo "suite $SUITE${FILTER:+ (filter $FILTER)}: $cases cases, $from_store goldens from the store ($du_store)"
echo "golden build: ${build_s} s with $(nproc) workers"
printf 'run without store: %6.1f s total, %s s on goldens\n' "$plain_s" "$(q "$OUT/plain.db")"
printf 'run with store:    %6.1f s total, %s s on goldens\n' "$store_s" "$(q "$OUT/store.db")"
echo "ratio (with/without): total $(div "$store_s" "$plain_s"), goldens $(div "$(q "$OUT/store.db")" "$(q "$OUT/plain.db")")"
echo "results that differ between the two runs (status or metrics): $same"
[ "$same" = 0 ]
