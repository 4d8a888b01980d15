#!/usr/bin/env bash
# Benchmark of the dashboard on a large history (goals: the site built in under 30 s, the overview
# rendered in under 2 s):
#   1. a database of 50 releases x 100,000 cases (gauntlet_synth_history --cases; kept in /tmp and
#      reused while its size matches), 5,000,000 results;
#   2. `gauntlet dashboard` on it: wall time, peak memory, data written; against a baseline
#      measured in the same run: reading the same results with the sqlite3 shell (the floor);
#   3. the overview's load time in Debian's Chromium (dashboards/test/load_time.mjs), over a
#      loopback server and from file://.
# Usage: [RELEASES=50] [CASES=100000] ci/dashboard_bench.sh [BUILD_DIR]   (default build/dev)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build/dev}"
RELEASES=${RELEASES:-50}
CASES=${CASES:-100000}
if [ ! -f "$BUILD_DIR/build.ninja" ]; then cmake --preset dev; fi
cmake --build "$BUILD_DIR" --target gauntlet gauntlet_synth_history -j"$(nproc)" >/dev/null
BIN="$BUILD_DIR/harness/gauntlet"
DB=/tmp/gauntlet_dashboard_bench_${RELEASES}x${CASES}.sqlite
SITE=$(mktemp -d)
trap 'rm -rf "$SITE"' EXIT

echo "dashboard_bench: $(nproc) cores, $(date -u +%FT%TZ)"
rows=$(sqlite3 "$DB" 'SELECT COUNT(*) FROM results' 2>/dev/null || echo 0)
if [ "$rows" != $((RELEASES * CASES)) ]; then
  "$BUILD_DIR/harness/tests/gauntlet_synth_history" --into "$DB" --releases "$RELEASES" --cases "$CASES" >/dev/null
fi
echo "database: $RELEASES releases x $CASES cases ($(du -m "$DB" | cut -f1) MB), $DB"

# The floor: every result row the export reads, read by the sqlite3 shell (page cache warm).
sqlite3 "$DB" 'SELECT COUNT(*), SUM(length(fallback_ops)) FROM results' >/dev/null
start=$(date +%s.%N)
sqlite3 "$DB" 'SELECT case_id, status, median_us, sim_time_us, max_abs_err, max_rel_err, fallback_ops, graph_breaks, recompiles, error FROM results' >/dev/null
floor=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.2f", b - a }')

/usr/bin/time -f '%e %M' -o "$SITE/time" "$BIN" dashboard --db "$DB" --out "$SITE/site" >"$SITE/out"
read -r wall rss_kb <"$SITE/time"
cat "$SITE/out" | head -1
awk -v w="$wall" -v f="$floor" -v m="$rss_kb" \
  'BEGIN { printf "export: %.1f s (goal < 30 s), peak RSS %.0f MiB; reading the rows with sqlite3: %.1f s; ratio %.1fx\n", w, m / 1024, f, w / f }'
echo "site: $(du -sm "$SITE/site" | cut -f1) MB in $(find "$SITE/site" -type f | wc -l) files"

node dashboards/test/load_time.mjs --site "$SITE/site" --runs 5
