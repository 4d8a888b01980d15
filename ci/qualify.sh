#!/usr/bin/env bash
# The main job on the embedded defaults: installs what is missing, builds the gauntlet binary and
# the simulator, runs the smoke suite on the simulated accelerator (`sim`) against CPU goldens
# into a SQLite database and prints a summary; then writes the report (the run against the
# previous release in the database, when there is one: Markdown, JUnit, JSON) and the dashboard.
#   ci/qualify.sh [extra gauntlet run options]
# Environment: BACKEND (default sim), SUITE (default smoke), OUT (default out/qualify),
#   RELEASE (default: git describe), BUILD_DIR (default build/release).
set -euo pipefail
cd "$(dirname "$0")/.."

bash ci/setup.sh

BUILD_DIR=${BUILD_DIR:-build/release}
BACKEND=${BACKEND:-sim}
SUITE=${SUITE:-smoke}
OUT=${OUT:-out/qualify}
RELEASE=${RELEASE:-$(git describe --always --dirty 2>/dev/null || echo local)}

cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGAUNTLET_BUILD_TESTS=OFF \
  -DGAUNTLET_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD_DIR" --target gauntlet gauntlet_sim -j "$(nproc)"

mkdir -p "$OUT"
DB="$OUT/gauntlet.db"
set +e
"$BUILD_DIR/harness/gauntlet" run --suite "$SUITE" --backend "$BACKEND" --db "$DB" \
  --release "$RELEASE" --gate "$@"
rc=$?
set -e
BIN="$BUILD_DIR/harness/gauntlet"
echo
echo "qualify: database $DB"
# The report: this release against the previous one in the database (compare exits 2 when there is
# none: the first qualification of a database), else the run's own results.
if "$BIN" compare --db "$DB" --quiet --markdown "$OUT/report.md" --junit "$OUT/report.xml" \
    --json "$OUT/report.json" >"$OUT/compare.log" 2>&1 || [ $? -eq 1 ]; then
  echo "qualify: report $OUT/report.md ($(tail -n1 "$OUT/compare.log"))"
else
  "$BIN" show --db "$DB" >"$OUT/report.txt"
  echo "qualify: report $OUT/report.txt (no earlier release in $DB to compare with)"
fi
"$BIN" dashboard --db "$DB" --out "$OUT/dashboard" | tail -n1 | sed 's/^dashboard: open /qualify: dashboard /'
case $rc in
  0) echo "qualify: PASS (no failures on $BACKEND)";;
  1) echo "qualify: FAIL (failures above; each line has its repro command)";;
  *) echo "qualify: error (exit $rc)";;
esac
exit $rc
