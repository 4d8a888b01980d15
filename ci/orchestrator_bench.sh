#!/usr/bin/env bash
# Benchmarks of the orchestrator, reported as ratios against a baseline measured in the same run:
#   1. scaling: a kernel-bound suite (harness/bench/suites/cpu_bound.yaml) with 2 workers vs 1;
#   2. worker overhead: 10,440 trivial cases (harness/bench/suites/trivial.yaml) in 1 worker vs
#      in-process (throughput per worker; process start-up included);
#   3. ingestion: results into SQLite (BM_StoreIngest, Google Benchmark), rows/s.
# Usage: ci/orchestrator_bench.sh [BUILD_DIR]   (default build/dev; builds what it needs)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build/dev}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then cmake --preset dev; fi
cmake --build "$BUILD_DIR" --target gauntlet gauntlet_bench -j"$(nproc)" >/dev/null
BIN="$BUILD_DIR/harness/gauntlet"
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT

# Wall seconds of one gauntlet run (the database is thrown away).
wall_once() {
  local start end
  start=$(date +%s.%N)
  "$BIN" run --quiet --backend cpu --db "$TMP/run-$RANDOM.db" "$@" >/dev/null
  end=$(date +%s.%N)
  awk -v a="$start" -v b="$end" 'BEGIN { print b - a }'
}
# The median of REPEAT runs: one run of a second varies by a tenth on this machine.
REPEAT="${REPEAT:-5}"
wall() {
  for _ in $(seq "$REPEAT"); do wall_once "$@"; done | sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

echo "orchestrator_bench: $(nproc) cores, $(date -u +%FT%TZ), medians of $REPEAT runs"
# One thread per worker in both runs: libtorch splits these kernels over every core it is given
# (at::parallel_for), so one worker left to its default of 2 threads would already use both cores
# and measure intra-op parallelism rather than worker processes.
one=$(OMP_NUM_THREADS=1 REPEAT=3 wall --suite harness/bench/suites/cpu_bound.yaml --workers 1)
two=$(OMP_NUM_THREADS=1 REPEAT=3 wall --suite harness/bench/suites/cpu_bound.yaml --workers 2)
printf 'scaling    cpu_bound (%s cases): 1 worker %.2f s, 2 workers %.2f s: speed-up %.2fx (goal >= 1.8x)\n' \
  "$("$BIN" list --suite harness/bench/suites/cpu_bound.yaml --count)" "$one" "$two" "$(awk -v a="$one" -v b="$two" 'BEGIN { print a / b }')"

# Throughput: the time per case once started, i.e. minus a run of one case (process start,
# libtorch and suite loading), for both modes.
ONE="--filter op/abs/f32/1/contig/eager"
inproc=$(wall --suite harness/bench/suites/trivial.yaml --workers 0)
inproc1=$(wall --suite harness/bench/suites/trivial.yaml --workers 0 $ONE)
worker=$(wall --suite harness/bench/suites/trivial.yaml --workers 1)
worker1=$(wall --suite harness/bench/suites/trivial.yaml --workers 1 $ONE)
printf 'overhead   trivial (10,440 cases): in-process %.2f s (start %.2f s), 1 worker %.2f s (start %.2f s)\n' \
  "$inproc" "$inproc1" "$worker" "$worker1"
printf '           throughput per worker after start-up: %.2fx of in-process (goal >= 0.8x); with start-up %.2fx\n' \
  "$(awk -v a="$inproc" -v a1="$inproc1" -v b="$worker" -v b1="$worker1" 'BEGIN { print (a - a1) / (b - b1) }')" \
  "$(awk -v a="$inproc" -v b="$worker" 'BEGIN { print a / b }')"

"$BUILD_DIR/harness/bench/gauntlet_bench" --benchmark_filter=BM_StoreIngest --benchmark_min_time=1 \
  --benchmark_format=json 2>/dev/null | python3 -c '
import json, sys
for b in json.load(sys.stdin)["benchmarks"]:
    rows, batch, registered = b["name"].split("/")[1:4]
    batch = batch if batch != "0" else "4096 (the default)"
    how = "cases registered first (as run does)" if registered == "1" else "case rows written with results"
    rate = b["items_per_second"] / 1e3
    print(f"ingestion  {int(rows):,} results, batches of {batch}, {how}: {rate:.0f}k rows/s (goal >= 200k)")'
