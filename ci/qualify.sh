#!/usr/bin/env bash
# The main job on the embedded defaults: installs what is missing, builds the gauntlet binary and
# the simulator, runs the smoke suite on the simulated accelerator (`sim`) against CPU goldens
# into a SQLite database and prints a summary.
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
echo
echo "qualify: database $DB"
case $rc in
  0) echo "qualify: PASS (no failures on $BACKEND)";;
  1) echo "qualify: FAIL (failures above; each line has its repro command)";;
  *) echo "qualify: error (exit $rc)";;
esac
exit $rc
