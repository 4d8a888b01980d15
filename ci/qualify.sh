#!/usr/bin/env bash
# The main job on the embedded defaults: installs what is missing, builds the gauntlet binary and
# the simulator, runs the smoke suite on the simulated accelerator (`sim`) against CPU goldens
# into a SQLite database and prints a summary; then writes the reports and the dashboard.
#   ci/qualify.sh [extra gauntlet run options]
# Environment: BACKEND (default sim), SUITE (default smoke), OUT (default out/qualify),
#   RELEASE (default: git describe), BUILD_DIR (default build/release); GAUNTLET_BIN: a gauntlet
#   binary already built (setup and build are skipped; BACKEND=sim then needs its libgauntlet_sim.so).
# What it leaves in OUT (docs/ci.md):
#   report.xml   the run's own JUnit: every case of the run, failures and errors included (always)
#   run.md       the run's Markdown; run.jsonl: one JSON line per result
#   compare.xml  compare's JUnit against the previous release in the database (regressions as
#                failures, known failures skipped), with report.md and report.json: only when the
#                database has an earlier release of the same backend and suite
# A CI step reading JUnit from "$OUT/*.xml" gets both: every case, and the regressions.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build/release}
BACKEND=${BACKEND:-sim}
SUITE=${SUITE:-smoke}
OUT=${OUT:-out/qualify}
RELEASE=${RELEASE:-$(git describe --always --dirty 2>/dev/null || echo local)}

if [ -n "${GAUNTLET_BIN:-}" ]; then
  BIN=$GAUNTLET_BIN
else
  bash ci/setup.sh
  cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGAUNTLET_BUILD_TESTS=OFF \
    -DGAUNTLET_BUILD_BENCH=OFF >/dev/null
  cmake --build "$BUILD_DIR" --target gauntlet gauntlet_sim -j "$(nproc)"
  BIN="$BUILD_DIR/harness/gauntlet"
fi

mkdir -p "$OUT"
DB="$OUT/gauntlet.db"
rm -f "$OUT/report.xml" "$OUT/run.md" "$OUT/run.jsonl" "$OUT/compare.xml" "$OUT/report.md" "$OUT/report.json" "$OUT/report.txt"
set +e
"$BIN" run --suite "$SUITE" --backend "$BACKEND" --db "$DB" --release "$RELEASE" --gate \
  --junit "$OUT/report.xml" --markdown "$OUT/run.md" --json-lines "$OUT/run.jsonl" "$@"
rc=$?
set -e
echo
echo "qualify: database $DB"
echo "qualify: JUnit $OUT/report.xml (every case of the run), Markdown $OUT/run.md"
# Compare's reports: this release against the previous one in the database (compare exits 2 when
# there is none: the first qualification of a database).
if "$BIN" compare --db "$DB" --quiet --markdown "$OUT/report.md" --junit "$OUT/compare.xml" \
    --json "$OUT/report.json" >"$OUT/compare.log" 2>&1 || [ $? -eq 1 ]; then
  echo "qualify: compare $OUT/report.md, $OUT/compare.xml ($(tail -n1 "$OUT/compare.log"))"
else
  rm -f "$OUT/report.md" "$OUT/report.json" "$OUT/compare.xml"
  echo "qualify: no earlier release in $DB to compare with: $(tail -n1 "$OUT/compare.log")"
fi
"$BIN" dashboard --db "$DB" --out "$OUT/dashboard" | tail -n1 | sed 's/^dashboard: open /qualify: dashboard /'
case $rc in
  0) echo "qualify: PASS (no failures on $BACKEND)";;
  1) echo "qualify: FAIL (failures above; each line has its repro command)";;
  *) echo "qualify: error (exit $rc)";;
esac
exit $rc
