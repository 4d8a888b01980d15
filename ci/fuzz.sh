#!/usr/bin/env bash
# Runs the fuzz targets of harness/fuzz (Note [Fuzz targets] in harness/fuzz/fuzz_target.h) under
# libFuzzer with ASan and UBSan, each for a number of minutes, starting from its corpus in
# harness/fuzz/corpus/<target>/. Builds them first in build/fuzz with Debian's clang.
#   ci/fuzz.sh                        # every target, 10 minutes each
#   ci/fuzz.sh --minutes 1 case_key   # one target, one minute
#   ci/fuzz.sh --merge                # afterwards, merge what each run found into the corpus
#                                     # (minimized: only inputs that add coverage are kept)
# Options: --minutes M (10), --jobs J (1: parallel fuzzing processes per target), --merge.
# A finding stops its target: the input is saved as build/fuzz/findings/<target>/crash-*; the
# script prints its path and the replay command and exits 1 after the other targets ran. Copy a
# fixed finding into harness/fuzz/corpus/<target>/ so that ctest replays it from then on.
# Environment: BUILD_DIR (build/fuzz).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

minutes=10
jobs=1
merge=0
targets=()
while [ $# -gt 0 ]; do
  case "$1" in
    --minutes) minutes="$2"; shift 2 ;;
    --jobs) jobs="$2"; shift 2 ;;
    --merge) merge=1; shift ;;
    -h|--help) sed -n '2,15p' "$0"; exit 0 ;;
    -*) echo "ci/fuzz.sh: unknown option $1 (see ci/fuzz.sh --help)" >&2; exit 2 ;;
    *) targets+=("$1"); shift ;;
  esac
done
case "$minutes" in ''|*[!0-9.]*) echo "ci/fuzz.sh: --minutes: '$minutes' is not a number" >&2; exit 2 ;; esac
case "$jobs" in ''|*[!0-9]*|0) echo "ci/fuzz.sh: --jobs: '$jobs' is not a positive integer" >&2; exit 2 ;; esac

all=(case_key suite expectations tolerances waivers fault_spec worker_message)
if [ ${#targets[@]} -eq 0 ]; then targets=("${all[@]}"); fi
for t in "${targets[@]}"; do
  case " ${all[*]} " in *" $t "*) ;; *) echo "ci/fuzz.sh: no target '$t' (known: ${all[*]})" >&2; exit 2 ;; esac
done

bash ci/setup.sh clang libclang-rt-14-dev

BUILD_DIR=${BUILD_DIR:-build/fuzz}
case "$BUILD_DIR" in /*) build=$BUILD_DIR ;; *) build=$root/$BUILD_DIR ;; esac
CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGAUNTLET_FUZZ=ON \
  -DGAUNTLET_BUILD_TESTS=OFF -DGAUNTLET_BUILD_BENCH=OFF >/dev/null
cmake --build "$BUILD_DIR" --target $(printf 'gauntlet_fuzz_%s ' "${targets[@]}")

seconds=$(awk -v m="$minutes" 'BEGIN { printf "%d", m * 60 }')
status=0
summary=()
for t in "${targets[@]}"; do
  work="$build/findings/$t"
  rm -rf "$work" && mkdir -p "$work/new"
  echo "ci/fuzz.sh: $t for $minutes min"
  # -rss_limit_mb: a suite that asks for billions of cases is a finding only if it gets that far.
  # -timeout: an input taking 10 s is a hang (the LoadAll loop was one).
  # In $work: with -jobs, libFuzzer writes each job's output to fuzz-<n>.log in its folder.
  parallel=()
  if [ "$jobs" -gt 1 ]; then parallel=(-jobs="$jobs" -workers="$jobs"); fi
  set +e
  (cd "$work" && ASAN_OPTIONS=detect_leaks=0 UBSAN_OPTIONS=print_stacktrace=1 \
    "$build/harness/fuzz/gauntlet_fuzz_$t" new "$root/harness/fuzz/corpus/$t" \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 -max_len=65536 "${parallel[@]}" \
    -artifact_prefix="$work/" -print_final_stats=1) >"$work/log" 2>&1
  rc=$?
  set -e
  if ls "$work"/fuzz-*.log >/dev/null 2>&1; then cat "$work"/fuzz-*.log >>"$work/log"; fi
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$work/log" | awk '{s += $2} END {print s + 0}')
  cov=$(grep -o 'cov: [0-9]*' "$work/log" | tail -n1 | awk '{print $2}')
  found=$(ls "$work" | grep -E '^(crash|timeout|oom|leak)-' || true)
  if [ $rc -ne 0 ] || [ -n "$found" ]; then
    status=1
    summary+=("$t: FINDING after $runs runs: $(printf '%s ' $found)(log: $work/log; replay: $BUILD_DIR/harness/fuzz/gauntlet_fuzz_$t $work/<file>)")
  else
    summary+=("$t: clean, $runs runs in $minutes min ($(awk -v r="$runs" -v s="$seconds" 'BEGIN { printf "%d", r / s }')/s), coverage ${cov:-?} edges")
  fi
  if [ $merge -eq 1 ] && [ $rc -eq 0 ]; then
    "$BUILD_DIR/harness/fuzz/gauntlet_fuzz_$t" -merge=1 -timeout=10 -rss_limit_mb=4096 -max_len=65536 \
      "harness/fuzz/corpus/$t" "$work/new" >>"$work/log" 2>&1
  fi
done
printf '%s\n' "${summary[@]}"
exit $status
