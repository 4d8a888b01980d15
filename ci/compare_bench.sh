#!/usr/bin/env bash
# Benchmark of `gauntlet compare` on two runs of 1,000,000 results each (goal: under 2 s and
# 600 MiB end to end; issue 24):
#   1. compare_runs and the JSON + Markdown reports (BM_CompareRuns, BM_CompareReports, Google
#      Benchmark), also at 100,000 results, and with --metric host (a Mann-Whitney U test per case);
#   2. the CLI end to end on the same database: wall time and peak memory (/usr/bin/time).
# The databases are built by the benchmark on first use and kept in /tmp (Note [Compare benchmark
# database] in harness/bench/harness_bench.cpp): about half a minute and 500 MB for 1,000,000 results.
# Usage: [JOBS=n] ci/compare_bench.sh [BUILD_DIR]   (default build/dev; builds what it needs)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build/dev}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then cmake --preset dev; fi
cmake --build "$BUILD_DIR" --target gauntlet gauntlet_bench -j"${JOBS:-$(nproc)}" >/dev/null
BIN="$BUILD_DIR/harness/gauntlet"
DB=/tmp/gauntlet_bench_compare_1M.sqlite
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

echo "compare_bench: $(nproc) cores, $(date -u +%FT%TZ)"
# --benchmark_min_time: one iteration of the 1M comparison takes seconds; 3 repetitions give a
# median that a busy neighbour moves less.
"$BUILD_DIR/harness/bench/gauntlet_bench" --benchmark_filter='BM_Compare(Runs|Reports)' \
  --benchmark_repetitions=3 --benchmark_report_aggregates_only=true \
  --benchmark_format=json 2>/dev/null >"$TMP/bench.json"
python3 - "$TMP/bench.json" <<'EOF'
import json, sys
for b in json.load(open(sys.argv[1]))["benchmarks"]:
    if b.get("aggregate_name") != "median":
        continue
    name, *args = b["run_name"].split("/")
    n = int(args[0])
    # Times in ms (kMillisecond); CPU time too, as the wall time of a shared machine varies with load.
    wall, cpu = b["real_time"] / 1e3, b["cpu_time"] / 1e3
    if name == "BM_CompareRuns":
        metric = b.get("label", "").split(":")[0]
        print(f"compare  {n:,} vs {n:,} results, metric {metric}: {wall:.2f} s, CPU {cpu:.2f} s  [{b.get('label', '')}]")
    else:
        print(f"reports  JSON + Markdown of {n:,} vs {n:,} results: {wall:.3f} s, CPU {cpu:.3f} s  [{b.get('label', '')}]")
EOF

# The CLI end to end: open, compare, write both reports (the database is warm in the page cache).
# Exit code 0: no --gate is given, so nothing gates.
/usr/bin/time -f '%e %U %S %M' -o "$TMP/time" "$BIN" compare --db "$DB" --json "$TMP/r.json" --markdown "$TMP/r.md" \
  --quiet >/dev/null
read -r wall user sys rss_kb <"$TMP/time"
printf 'cli      gauntlet compare --json --markdown, 1,000,000 vs 1,000,000 results: %.2f s wall (goal < 2 s), CPU %.2f s, max RSS %.0f MiB (goal < 600 MiB)\n' \
  "$wall" "$(awk -v u="$user" -v s="$sys" 'BEGIN { print u + s }')" "$(awk -v k="$rss_kb" 'BEGIN { print k / 1024 }')"
