#!/usr/bin/env bash
# The dashboard's browser tests, as ctest runs them (tests Dashboard.Browser and
# Dashboard.Injection, dashboards/CMakeLists.txt): a real run of the smoke suite on the simulator
# (with faults, so that the latest release has regressions of every kind), a synthetic history of
# releases before it (gauntlet_synth_history), `gauntlet dashboard`, then Debian's Chromium driven
# by playwright-core against a loopback static server. Screenshots are kept in ARTIFACTS.
# Usage: run_browser_tests.sh browser|injection GAUNTLET_BIN SYNTH_BIN ARTIFACTS
set -euo pipefail
what=$1 bin=$2 synth=$3 artifacts=$4
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rm -rf "$artifacts"
mkdir -p "$artifacts"

# Faults: wrong results on exp, mm 30% slower (simulated time), cumsum on the CPU.
GAUNTLET_SIM_FAULTS='op=aten::exp*,kind=bias; op=aten::mm*,kind=slow,factor=1.3; op=aten::cumsum*,kind=fallback' \
  "$bin" run --suite smoke --backend sim --db "$tmp/real.db" --release 3.0.0 --quiet --workers 2 \
    --price-per-device-hour 4.5 >"$tmp/run.log" 2>&1 ||
  { echo "run_browser_tests: gauntlet run failed:"; tail -5 "$tmp/run.log"; exit 1; }
releases=11
if [ "$what" = injection ]; then
  "$synth" --from "$tmp/real.db" --into "$tmp/history.db" --releases "$releases" --hostile
  "$bin" dashboard --db "$tmp/history.db" --out "$tmp/site"
  node "$here/injection_test.mjs" --site "$tmp/site" --screenshots "$artifacts"
else
  "$synth" --from "$tmp/real.db" --into "$tmp/history.db" --releases "$releases"
  "$bin" dashboard --db "$tmp/history.db" --out "$tmp/site"
  node "$here/browser_test.mjs" --site "$tmp/site" --screenshots "$artifacts" \
    --expect-releases $((releases + 1)) --expect-group sim/smoke
fi
