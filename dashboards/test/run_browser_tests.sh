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
# Note [Triage]: acknowledge the latest release's first regressed speed group, so that the site
# shows it apart with its note (the injection test's note is hostile markup).
ack_first_speed_group() {
  "$bin" compare --db "$1" --json "$tmp/compare.json" --quiet >/dev/null
  local group
  group=$(node -e 'const j = require(process.argv[1]); const g = j.groups.find((x) => x.gate === "speed" && x.regression); process.stdout.write(g ? g.group : "")' "$tmp/compare.json")
  [ -n "$group" ] || { echo "run_browser_tests: the latest release has no speed regression to acknowledge"; exit 1; }
  "$bin" triage ack "$group" --db "$1" --note "$2" --by ci >/dev/null
  echo "$group" >"$artifacts/acked-group.txt"
}
if [ "$what" = injection ]; then
  "$synth" --from "$tmp/real.db" --into "$tmp/history.db" --releases "$releases" --hostile
  ack_first_speed_group "$tmp/history.db" '<img src=x onerror="window.__pwned=1"><script>window.__pwned=1</script>'
  "$bin" dashboard --db "$tmp/history.db" --out "$tmp/site"
  node "$here/injection_test.mjs" --site "$tmp/site" --screenshots "$artifacts"
else
  "$synth" --from "$tmp/real.db" --into "$tmp/history.db" --releases "$releases"
  ack_first_speed_group "$tmp/history.db" 'known: the tile retune, fixed in the next release'
  "$bin" dashboard --db "$tmp/history.db" --out "$tmp/site"
  node "$here/browser_test.mjs" --site "$tmp/site" --screenshots "$artifacts" \
    --expect-releases $((releases + 1)) --expect-group sim/smoke
fi
