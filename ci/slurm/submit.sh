#!/usr/bin/env bash
# Runs a Gauntlet suite sharded over a Slurm cluster, in one command: makes the plan (`gauntlet
# plan --shards N`), submits one array task per shard (ci/slurm/array.sbatch; each writes
# OUT/shard-i.sqlite) and then the merge job (ci/slurm/merge.sbatch, --dependency=afterany on the
# array), which merges them into OUT/all.sqlite and prints the summary into OUT/logs/merge.log.
#   ci/slurm/submit.sh [--suite S] [--backend B] [--shards N] [--out DIR] [--release R]
#                      [--filter F] [--history DB] [--suites-dir D] [--gate] [-- sbatch options]
#   ci/slurm/submit.sh --suite nightly --shards 16 --out /shared/gauntlet/2.5.0 -- --partition trn
# Each flag has an environment variable instead: SUITE (default smoke), BACKEND (sim), SHARDS (4),
# OUT (out/slurm; on a file system every node sees), RELEASE (git describe), FILTER, HISTORY (a
# results database whose past durations balance the shards), SUITES_DIR, GATE=1 (the merge job
# exits 1 when any case failed). Also: GAUNTLET_BIN (default build/release/harness/gauntlet of
# this checkout), BUILD_ID; GAUNTLET_DEVICES (the hosts' device slots, e.g. 0-7) with
# GAUNTLET_DEVICE_ENV (e.g. NEURON_RT_VISIBLE_CORES): then each task takes a whole node
# (--exclusive) and runs one worker per slot; WORKERS. Options after `--` go to both sbatch calls;
# sbatch's own SBATCH_* variables (SBATCH_PARTITION, SBATCH_TIMELIMIT, ...) work too.
# Prints the job ids and where the results land, and writes them to OUT/jobs.env (ARRAY_JOB,
# MERGE_JOB, SHARDS, OUT). OUT must not hold the databases of an earlier run.
set -euo pipefail

me=ci/slurm/submit.sh
die() { echo "$me: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../.." && pwd)

SUITE=${SUITE:-smoke}
BACKEND=${BACKEND:-sim}
SHARDS=${SHARDS:-4}
OUT=${OUT:-out/slurm}
FILTER=${FILTER:-}
HISTORY=${HISTORY:-}
SUITES_DIR=${SUITES_DIR:-}
GATE=${GATE:-0}
GAUNTLET_BIN=${GAUNTLET_BIN:-$repo/build/release/harness/gauntlet}
extra=()
while [ $# -gt 0 ]; do
  case $1 in
    --suite) SUITE=${2:?}; shift 2;;
    --backend) BACKEND=${2:?}; shift 2;;
    --shards) SHARDS=${2:?}; shift 2;;
    --out) OUT=${2:?}; shift 2;;
    --release) RELEASE=${2:?}; shift 2;;
    --filter) FILTER=${2:?}; shift 2;;
    --history) HISTORY=${2:?}; shift 2;;
    --suites-dir) SUITES_DIR=${2:?}; shift 2;;
    --gate) GATE=1; shift;;
    --) shift; extra=("$@"); break;;
    -h|--help) sed -n '2,/^set -euo/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0;;
    *) die "unknown option $1 (see --help)";;
  esac
done
RELEASE=${RELEASE:-$(git -C "$repo" describe --always --dirty 2>/dev/null || echo local)}

[[ $SHARDS =~ ^[1-9][0-9]*$ ]] || die "--shards must be a positive number, not '$SHARDS'"
command -v sbatch >/dev/null || die "sbatch not found (is this a Slurm submit host?)"
abs() { case $1 in /*) echo "$1";; *) echo "$PWD/$1";; esac; }
[ -x "$GAUNTLET_BIN" ] || die "no gauntlet binary at $GAUNTLET_BIN (build it, or set GAUNTLET_BIN)"
GAUNTLET_BIN=$(abs "$GAUNTLET_BIN")
OUT=$(abs "$OUT")
# The jobs run in this directory too, but paths given here stay right wherever they run.
[ -f "$SUITE" ] && SUITE=$(abs "$SUITE")
[ -n "$SUITES_DIR" ] && SUITES_DIR=$(abs "$SUITES_DIR")
[ -n "$HISTORY" ] && HISTORY=$(abs "$HISTORY")

shopt -s nullglob
old=("$OUT"/shard-*.sqlite "$OUT"/all.sqlit[e])
shopt -u nullglob
[ ${#old[@]} -eq 0 ] || die "$OUT already holds the databases of a run (${old[0]}, ...): use another --out or remove them"
mkdir -p "$OUT/logs"

PLAN=$OUT/plan.json
plan=(plan --suite "$SUITE" --shards "$SHARDS" --out "$PLAN")
[ -n "$HISTORY" ] && plan+=(--history "$HISTORY" --backend "$BACKEND")
[ -n "$FILTER" ] && plan+=(--filter "$FILTER")
[ -n "$SUITES_DIR" ] && plan+=(--suites-dir "$SUITES_DIR")
"$GAUNTLET_BIN" "${plan[@]}" || die "gauntlet plan failed"

export GAUNTLET_BIN SUITE BACKEND PLAN OUT RELEASE FILTER SUITES_DIR SHARDS GATE
export BUILD_ID=${BUILD_ID:-} WORKERS=${WORKERS:-}
export GAUNTLET_DEVICES=${GAUNTLET_DEVICES:-} GAUNTLET_DEVICE_ENV=${GAUNTLET_DEVICE_ENV:-}
array_opts=(--parsable --export=ALL --array="0-$((SHARDS - 1))" --output="$OUT/logs/shard-%a.log")
# Device slots are the whole host's: two tasks on one node would share them.
[ -n "$GAUNTLET_DEVICES" ] && array_opts+=(--exclusive)

array_job=$(sbatch "${array_opts[@]}" "${extra[@]}" "$here/array.sbatch") || die "sbatch of the array failed"
array_job=${array_job%%;*}
if ! merge_job=$(sbatch --parsable --export=ALL --dependency="afterany:$array_job" \
    --output="$OUT/logs/merge.log" "${extra[@]}" "$here/merge.sbatch"); then
  scancel "$array_job" 2>/dev/null || true
  die "sbatch of the merge job failed; cancelled the array job $array_job"
fi
merge_job=${merge_job%%;*}

printf 'ARRAY_JOB=%s\nMERGE_JOB=%s\nSHARDS=%s\nOUT=%q\n' "$array_job" "$merge_job" "$SHARDS" "$OUT" >"$OUT/jobs.env"
echo "$me: array job $array_job: $SHARDS shards of $SUITE on $BACKEND (release $RELEASE) into $OUT/shard-<i>.sqlite, logs $OUT/logs/shard-<i>.log"
echo "$me: merge job $merge_job (after $array_job): $OUT/all.sqlite, summary in $OUT/logs/merge.log"
echo "$me: follow with: squeue -j $array_job,$merge_job"
