#!/usr/bin/env bash
# How `gauntlet compare` judges host wall time (docs/regressions.md), measured:
#   1. false flags: two clean runs of the same release; the share of speed cases flagged (goal <= 0.5%);
#   2. recall: the same release with host-time slowdowns of 20% injected into chosen cases
#      (simulator faults `kind=sleep`, each sized to 20% of its case's baseline median); the share of
#      those cases flagged slower (goal >= 90%).
# Both with and without `compare --confirm` (A/B re-runs of flagged cases).
# Usage: ci/host_noise_bench.sh [BUILD_DIR]   Environment: SUITE (harness/bench/suites/host_noise.yaml),
#        FILTER (all), TARGETS (24: one case per op and dtype), KEEP (keep the databases),
#        RUN_ARGS (timing options of the runs).
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build/dev}"
if [ ! -f "$BUILD_DIR/build.ninja" ]; then cmake --preset dev; fi
cmake --build "$BUILD_DIR" --target gauntlet gauntlet_sim -j"$(nproc)" >/dev/null
BIN="$BUILD_DIR/harness/gauntlet"
# One intra-op thread: on a 2-core host a kernel split over both cores waits whenever anything else
# (the orchestrator, the database) takes one of them for a scheduler slice (+4 ms), which made
# medians of 1 ms cases jump to 5 ms between runs. docs/regressions.md#measuring-host-time.
export OMP_NUM_THREADS="${OMP_NUM_THREADS:-1}"
SUITE="${SUITE:-harness/bench/suites/host_noise.yaml}"
FILTER="${FILTER:-*}"
TARGETS="${TARGETS:-24}"
# One worker: workers side by side share the host and perturb each other's timings.
RUN_ARGS="${RUN_ARGS:---reps 10 --min-time 2 --max-time 200 --workers 1}"
TMP=$(mktemp -d)
[ -n "${KEEP:-}" ] && echo "keeping $TMP" || trap 'rm -rf "$TMP"' EXIT
DB="$TMP/noise.db"
export GAUNTLET_SIM_VERSION=sim-noise-bench  # the same release name for every run: one library

run() {  # run RELEASE [env...]
  local release=$1
  shift
  env "$@" "$BIN" run --suite "$SUITE" --filter "$FILTER" --backend sim --db "$DB" --release "$release" --quiet $RUN_ARGS >/dev/null
}
echo "host_noise_bench: $(nproc --all) cores, OMP_NUM_THREADS=$OMP_NUM_THREADS, $(date -u +%FT%TZ), suite $SUITE, filter '$FILTER', run options: $RUN_ARGS"
start=$(date +%s)
run a
run b
echo "two clean runs took $(($(date +%s) - start)) s"

# Sleep targets: eager forward contiguous PASS cases, one per op and dtype, of ops with a simulator kernel and a baseline median of at
# least 1 ms (so that 20% is far above the sleep's own granularity, ~60 µs), one rule per case matching
# its op, dtype and input size exactly.
python3 - "$DB" "$TARGETS" "$BIN" >"$TMP/targets.txt" <<'EOF'
import sqlite3, subprocess, sys
db, n, binary = sys.argv[1], int(sys.argv[2]), sys.argv[3]
import json
# Ops the simulator runs with its own kernel (a fault acts in the kernel; composite ops decompose
# before it and fallbacks bypass it), named as the op table names them.
info = json.loads(subprocess.run([binary, "backend-info", "--backend", "sim", "--json"], capture_output=True,
                                 text=True, check=True).stdout)
kernels = {k.split(".")[0] for k in info["kernels"]}
aten = {}
for line in subprocess.run([binary, "list", "--ops"], capture_output=True, text=True, check=True).stdout.splitlines():
    parts = line.split()
    if parts[1] in kernels:
        aten[parts[0]] = parts[1]
rows = sqlite3.connect(db).execute(
    "SELECT c.key, c.target, c.dtype, c.shapes, r.median_us FROM results r JOIN cases c ON c.id = r.case_id "
    "WHERE r.run_id = 1 AND r.status = 'PASS' AND c.mode = 'eager' AND c.layout = 'contig' AND r.median_us >= 1000 "
    "ORDER BY r.median_us").fetchall()
seen = set()
for key, target, dtype, shapes, median in rows:
    if (target, dtype) in seen or target not in aten:
        continue
    numel = 0
    for shape in shapes.split(","):
        size = 1
        for d in shape.split("x"):
            size *= int(d) if d not in ("_", "") else 1
        numel = max(numel, size)
    seen.add((target, dtype))
    # A rule names the op or one of its overloads (aten::abs.out): both.
    rule = f"dtype={dtype},min_numel={numel},max_numel={numel},kind=sleep,factor={0.2 * median / 1000:.4f}"
    print(f"{key}\top={aten[target]},{rule};op={aten[target]}.*,{rule}")
    if len(seen) == n:
        break
EOF
FAULTS=$(cut -f2 "$TMP/targets.txt" | paste -sd';')
echo "sleep targets: $(wc -l <"$TMP/targets.txt") cases"
run c GAUNTLET_SIM_FAULTS="$FAULTS"

judge() {  # judge CANDIDATE_RUN [compare options...] -> "flagged/judged" and recall
  local run=$1
  shift
  "$BIN" compare --db "$DB" --run "$run" --baseline 1 --metric host --history 0 --json "$TMP/r.json" --quiet "$@" >/dev/null
  python3 - "$TMP/r.json" "$TMP/targets.txt" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
targets = {line.split("\t")[0] for line in open(sys.argv[2])}
judged = r["speed"]["compared"]
speed = [f for f in r["findings"] if f["change"] in ("slower", "faster") and not f["key"].startswith("suite:")]
slower = {f["key"] for f in speed if f["change"] == "slower"}
hits = len(targets & slower)
others = [f for f in speed if f["key"] not in targets]
print(f"{len(others)}/{judged} other cases flagged ({100 * len(others) / max(judged, 1):.2f}%), "
      f"{hits}/{len(targets)} sleep targets flagged slower ({100 * hits / max(len(targets), 1):.1f}%), "
      f"drift {r['speed'].get('drift', 1):.4f}")
EOF
}
echo "clean b vs a:              $(judge 2)   (goal: <= 0.5% flagged)"
echo "clean b vs a, --confirm:   $(judge 2 --confirm)"
echo "slept c vs a:              $(judge 3)   (goal: >= 90% of targets)"
echo "slept c vs a, --confirm:   $(judge 3 --confirm --candidate-env GAUNTLET_SIM_FAULTS="$FAULTS")"
