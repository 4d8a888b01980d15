#!/usr/bin/env bash
# Every case's golden must compute on the CPU (docs/writing-suites.md#every-case-has-a-golden): a
# case whose fp64 CPU reference raises is a catalog bug, ERROR on every backend. This computes the
# golden of every case of the suites (op cases; model cases' fp64 forward and training gradients,
# shape sequences included; every rank's golden of collective cases) without a backend or a store,
# and lists each case whose golden raises as "NO GOLDEN   <key>: <error>". ctest checks the smoke
# suites the same way (GoldenCheck.* in harness/tests/golden_check_test.cpp); this is for the rest.
#   ci/golden_check.sh                    # every suite of suites/yaml
#   ci/golden_check.sh nightly models_full
# Environment: BUILD_DIR (default build/dev), WORKERS (threads for op cases, default: cores),
# TEST_BIN (default $BUILD_DIR/harness/tests/gauntlet_torch_tests).
# Exits 0 when every golden computes, 1 otherwise, 2 when the test binary is missing.
set -euo pipefail
cd "$(dirname "$0")/.."

BUILD_DIR=${BUILD_DIR:-build/dev}
TEST_BIN=${TEST_BIN:-$BUILD_DIR/harness/tests/gauntlet_torch_tests}
WORKERS=${WORKERS:-$(nproc)}
if [[ ! -x "$TEST_BIN" ]]; then
  echo "ci/golden_check.sh: no $TEST_BIN: build it first (cmake --build $BUILD_DIR --target gauntlet_torch_tests)" >&2
  exit 2
fi

suites=("$@")
if [[ ${#suites[@]} -eq 0 ]]; then
  for f in suites/yaml/*.yaml; do
    name=$(basename "$f" .yaml)
    [[ $name == expectations || $name == tolerances ]] && continue
    grep -q '^groups:' "$f" || continue  # only includes (release, nightly-all): its parts are checked
    suites+=("$name")
  done
fi

start=$(date +%s)
status=0
GAUNTLET_GOLDEN_CHECK_SUITES=$(IFS=,; echo "${suites[*]}") GAUNTLET_GOLDEN_CHECK_WORKERS=$WORKERS \
  "$TEST_BIN" --gtest_filter=GoldenCheck.NamedSuites || status=1
if [[ $status -eq 0 ]]; then
  echo "ci/golden_check.sh: every golden of ${suites[*]} computes ($(( $(date +%s) - start )) s, $WORKERS workers)"
else
  echo "ci/golden_check.sh: cases without a golden (NO GOLDEN above) in ${suites[*]} ($(( $(date +%s) - start )) s)"
fi
exit $status
