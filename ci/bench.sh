#!/usr/bin/env bash
# Builds and runs the harness benchmarks, then prints the per-case overhead of the harness:
# BM_HarnessCase/<op> over BM_BareLoop/<op> (the same work written directly with ATen).
# Usage: ci/bench.sh [BUILD_DIR] [extra benchmark flags...]
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR="${1:-build/dev}"
shift || true
if [ ! -f "$BUILD_DIR/build.ninja" ]; then
  cmake --preset dev
fi
cmake --build "$BUILD_DIR" --target gauntlet_bench -j"$(nproc)"
OUT=build/bench.json
mkdir -p build
"$BUILD_DIR/harness/bench/gauntlet_bench" --benchmark_min_time=0.2 --benchmark_out="$OUT" \
  --benchmark_out_format=json "$@"
python3 - "$OUT" <<'PY'
import json, sys
runs = {b["name"]: b for b in json.load(open(sys.argv[1]))["benchmarks"]
        if b.get("run_type", "iteration") == "iteration" and not b.get("error_occurred")}
print()
print(f"{'op':<8} {'harness us':>12} {'bare us':>10} {'ratio':>7}")
for name, h in sorted(runs.items()):
    if not name.startswith("BM_HarnessCase/"):
        continue
    op = name.split("/", 1)[1]
    b = runs.get("BM_BareLoop/" + op)
    if not b:
        continue
    assert h["time_unit"] == b["time_unit"]
    print(f"{op:<8} {h['real_time']:>12.1f} {b['real_time']:>10.1f} {h['real_time'] / b['real_time']:>7.2f}")
PY
